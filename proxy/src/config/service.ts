// The one way the configuration changes at run time. A write (from /api) is applied to a copy of
// the stored document, validated and compiled exactly like config.json, saved with the next
// revision (compare-and-set, so two replicas writing at once both land, one after the other), and
// only then swapped in. Other replicas hear of the new revision from the store and swap it in too.
import { createHash } from 'node:crypto';
import { checkConfig, ConfigError } from './load.ts';
import { API_ENV_REFS_VARIABLE, unallowedEnvReferences } from './api-env-refs.ts';
import { compileSnapshot, type Snapshot } from './snapshot.ts';
import type { GatewayConfig } from './schema.ts';
import type { SnapshotHolder } from './holder.ts';
import { RevisionConflict, type ConfigStore, type StoredConfig } from './store.ts';
import { log } from '../log.ts';

export const seedDigest = (doc: GatewayConfig): string => createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16);

/** The whole document belongs to something outside this process (Kubernetes): readable, not writable here. */
export interface ConfigOrigin {
  managedBy: 'kubernetes';
  /** Where to make changes instead, for messages: e.g. `the Skybridge custom resources (kubectl)`. */
  editWith: string;
  /** `<section>/<id>` → the resource an object comes from, e.g. `virtual_keys/vk-1` → `VirtualKey team-a/vk-1`. */
  sources: Readonly<Record<string, string>>;
}

/** update() on a document owned by an external source. */
export class ManagedConfigError extends Error {
  readonly origin: ConfigOrigin;
  constructor(origin: ConfigOrigin) {
    super(`the configuration is managed by ${origin.managedBy}: change ${origin.editWith}`);
    this.origin = origin;
  }
}

export class ConfigService {
  readonly holder: SnapshotHolder;
  readonly store: ConfigStore;
  #stored: StoredConfig;
  #queue: Promise<unknown> = Promise.resolve();
  #origin: ConfigOrigin | undefined;

  constructor(holder: SnapshotHolder, store: ConfigStore, stored: StoredConfig) {
    this.holder = holder;
    this.store = store;
    this.#stored = stored;
    // A store that cannot be read right now (Redis away) is read again on its next notice.
    store.subscribe(() => void this.#serial(() => this.sync()).catch((err: unknown) => log.warn('could not read the stored configuration', { store: store.kind, error: (err as Error).message })));
  }

  /**
   * The document to serve from, given the seed (config.json or the environment): the stored one
   * when it grew from the same seed (so /api writes survive a restart), else the seed itself.
   */
  static async initialDocument(store: ConfigStore, seed: GatewayConfig): Promise<StoredConfig> {
    const digest = seedDigest(seed);
    const stored = await store.load();
    if (stored && stored.seed === digest) return stored;
    if (stored) log.warn('config.json changed since the stored configuration was written: starting from config.json', { store: store.kind });
    const fresh: StoredConfig = { seed: digest, revision: (stored?.revision ?? 0) + 1, document: seed };
    try {
      await store.save(fresh, stored?.revision ?? 0);
    } catch (err) {
      // Another replica starting at the same moment seeded first: take what it wrote.
      if (err instanceof RevisionConflict) return ConfigService.initialDocument(store, seed);
      throw err;
    }
    return fresh;
  }

  current(): Snapshot {
    return this.holder.current();
  }

  /** The document as stored: `env.VAR` references unresolved, secrets included (never serve it as is). */
  document(): GatewayConfig {
    return structuredClone(this.#stored.document);
  }

  revision(): number {
    return this.#stored.revision;
  }

  /**
   * Applies `change` to the latest document; throws ConfigError (with field paths) when the result
   * is invalid, leaving everything as it was. Returns the snapshot now serving.
   */
  update(change: (draft: GatewayConfig) => void): Promise<Snapshot> {
    if (this.#origin) return Promise.reject(new ManagedConfigError(this.#origin));
    return this.#serial(async () => {
      for (let attempt = 0; ; attempt++) {
        const draft = structuredClone(this.#stored.document);
        change(draft);
        const foreign = unallowedEnvReferences(this.#stored.document, draft, process.env[API_ENV_REFS_VARIABLE]);
        if (foreign.length) throw new ConfigError('the request', foreign);
        const { config, warnings } = checkConfig(draft, 'the request');
        const next = compileSnapshot(config);
        const stored: StoredConfig = { seed: this.#stored.seed, revision: this.#stored.revision + 1, document: draft };
        try {
          await this.store.save(stored, this.#stored.revision);
        } catch (err) {
          // Another replica wrote first: apply the change again on top of its revision.
          if (!(err instanceof RevisionConflict) || attempt >= 5) throw err;
          await this.sync();
          continue;
        }
        for (const w of warnings) log.warn(w);
        this.#stored = stored;
        this.holder.swap(next);
        log.info('configuration updated', { revision: stored.revision, config_hash: next.hash });
        return next;
      }
    });
  }

  /** Replaces the document with a new seed (config.json was edited). */
  reseed(seed: GatewayConfig): Promise<void> {
    return this.#serial(async () => {
      const next = compileSnapshot(checkConfig(seed, 'config.json').config);
      const stored: StoredConfig = { seed: seedDigest(seed), revision: this.#stored.revision + 1, document: seed };
      await this.store.save(stored);
      this.#stored = stored;
      this.holder.swap(next);
    });
  }

  /** Set when an external source owns the document (update() is refused from then on). */
  origin(): ConfigOrigin | undefined {
    return this.#origin;
  }

  setOrigin(origin: ConfigOrigin): void {
    this.#origin = origin;
  }

  /**
   * Serves `document` as the whole configuration of an external source (Kubernetes): `env.VAR`
   * references resolve against `env` (the source's secrets), and nothing is written to the store,
   * since every replica follows the source itself. Throws ConfigError when invalid, changing nothing.
   */
  replace(document: unknown, opts: { source: string; env: NodeJS.ProcessEnv; origin: ConfigOrigin }): Promise<Snapshot> {
    return this.#serial(async () => {
      const { config, raw, warnings } = checkConfig(document, opts.source, opts.env);
      const next = compileSnapshot(config);
      for (const w of warnings) log.warn(w);
      this.#stored = { seed: this.#stored.seed, revision: this.#stored.revision + 1, document: raw };
      this.#origin = opts.origin;
      if (next.hash === this.holder.current().hash) return this.holder.current();
      this.holder.swap(next);
      return next;
    });
  }

  /** Picks up a newer revision written by another process; a bad one is reported and skipped. */
  async sync(): Promise<void> {
    const latest = await this.store.load();
    if (!latest || latest.revision <= this.#stored.revision) return;
    try {
      const next = compileSnapshot(checkConfig(latest.document, `stored configuration revision ${latest.revision}`).config);
      this.#stored = latest;
      if (next.hash !== this.holder.current().hash) this.holder.swap(next);
      log.info('configuration synced from the store', { revision: latest.revision, config_hash: next.hash });
    } catch (err) {
      log.error('stored configuration rejected; keeping the last good configuration', { revision: latest.revision, error: (err as Error).message });
      this.#stored = { ...this.#stored, revision: latest.revision };
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
