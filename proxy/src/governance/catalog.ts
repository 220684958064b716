// The model catalog behind `allowed_models: ['*']`: each provider's list-models answer, fetched at
// start-up and again whenever that provider's configuration changes.
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { providerModels } from '../pipeline/provider-models.ts';
import { log } from '../log.ts';

type Entry = { fingerprint: string; models: ReadonlySet<string> | 'failed' | 'pending' };

export class ModelCatalog {
  #entries = new Map<string, Entry>();

  /** true/false: listed or not; a failed list denies; undefined: the provider has no list-models. */
  lookup(provider: string, model: string): boolean | undefined {
    const e = this.#entries.get(provider);
    if (!e) return undefined;
    if (e.models === 'failed' || e.models === 'pending') return false;
    return e.models.has(model);
  }

  /** Lists the models of every provider that is new or changed in `snapshot`. */
  async refresh(snapshot: Snapshot): Promise<void> {
    // Only `['*']` grants read the catalog: without one, no provider is asked for its models.
    if (!snapshot.config.governance?.virtual_keys?.some((vk) => vk.provider_configs?.some((pc) => pc.allowed_models?.includes('*')))) return;
    const jobs: Promise<void>[] = [];
    for (const p of snapshot.providers.values()) {
      if (!p.operations.has('models')) {
        this.#entries.delete(p.name);
        continue;
      }
      const fingerprint = JSON.stringify(snapshot.config.providers?.[p.name] ?? {});
      if (this.#entries.get(p.name)?.fingerprint === fingerprint) continue;
      const entry: Entry = { fingerprint, models: 'pending' };
      this.#entries.set(p.name, entry);
      jobs.push(this.#list(p, entry));
    }
    for (const name of this.#entries.keys()) if (!snapshot.providers.has(name)) this.#entries.delete(name);
    await Promise.all(jobs);
  }

  async #list(p: ProviderRuntime, entry: Entry): Promise<void> {
    try {
      const models = await providerModels(p, AbortSignal.timeout(p.timeoutMs));
      entry.models = new Set(models.map((m) => m.id.slice(p.name.length + 1)));
    } catch (err) {
      entry.models = 'failed';
      log.warn("list-models failed: allowed_models ['*'] admits no model of this provider until it succeeds", { provider: p.name, error: (err as Error).message });
    }
  }
}
