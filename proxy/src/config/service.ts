// The one way the configuration changes at run time. A write (from /api) is applied to a copy of
// the stored document, validated and compiled exactly like config.json, saved with the next
// revision (compare-and-set, so two replicas writing at once both land, one after the other), and
// only then swapped in. Other replicas hear of the new revision from the store and swap it in too.
// Objects of the seed (config.json) are read-only here; objects written through /api are kept
// apart in the store and laid over every new seed (ownership.ts), so neither edit loses the other.
import { CheckMemo, checkConfig, ConfigError, type LoadedConfig } from './check.ts';
import { compose, objectKey, objectKeys, objectKeysSteps, objectsOf, sectionLabel, type DocObject, type SetAside } from './ownership.ts';
import { API_ENV_REFS_VARIABLE, unallowedEnvReferences, unallowedVaultReferences } from './api-env-refs.ts';
import { CompileMemo, compileSnapshot, compileSnapshotInSteps, type Snapshot } from './snapshot.ts';
import { runInSteps, yieldToLoop } from './steps.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { SnapshotHolder } from './holder.ts';
import { RevisionConflict, type ConfigStore, type StoredConfig } from './store.ts';
import { log } from '../log.ts';

import { seedDigest } from './seed-digest.ts';

export { seedDigest };

/** The whole document belongs to something outside this process (Kubernetes): readable, not writable here. */
export interface ConfigOrigin {
  managedBy: 'kubernetes';
  /** Where to make changes instead, for messages: e.g. `the Skybridge custom resources (kubectl)`. */
  editWith: string;
  /** `<section>/<id>` → the resource an object comes from, e.g. `virtual_keys/vk-1` → `VirtualKey team-a/vk-1`. */
  sources: Readonly<Record<string, string>>;
}

/** Where the seed document came from: config.json, or the environment when there is none. */
export interface SeedSource {
  kind: 'file' | 'environment';
  /** The config.json path; `the environment` otherwise. */
  source: string;
}

/** An /api write that would change an object of the seed. */
export class SeedManagedError extends Error {
  readonly section: string;
  readonly id: string;
  constructor(section: string, id: string, seed: SeedSource) {
    super(
      seed.kind === 'file'
        ? `${sectionLabel(section)} '${id}' is managed by the configuration file ${seed.source} and read-only through /api: edit the file instead (objects created through /api can be changed here)`
        : `${sectionLabel(section)} '${id}' comes from the environment variables and is read-only through /api: change the environment and restart (objects created through /api can be changed here)`,
    );
    this.section = section;
    this.id = id;
  }
}

/** Who owns one object, as /api shows it. */
export interface ObjectOwner {
  owner: 'file' | 'environment' | 'store' | 'kubernetes';
  /** Read-only owners only: where to change it (a file path, a custom resource). */
  source?: string;
}

/** What /api/config/status and the dashboard report about where the configuration lives. */
export interface ConfigStatus {
  seed: SeedSource | { kind: 'kubernetes'; source: string };
  store: { kind: ConfigStore['kind']; persistent: boolean; location?: string };
  objects: { seed: number; store: number };
  set_aside: (SetAside & { label: string })[];
  /** Routing rules of the served configuration that cannot compile and are skipped. */
  skipped_routing_rules: { id: string; name: string; error: string }[];
}

/** The store-managed objects of a stored revision; one written before they were kept apart: whatever the seed does not hold. */
function storeObjectsOf(stored: StoredConfig, seed: GatewayConfig): DocObject[] {
  if (stored.objects) return stored.objects;
  const seedKeys = objectKeys(seed);
  return objectsOf(stored.document).filter((o) => !seedKeys.has(objectKey(o)));
}

/**
 * The seed with the store's objects over it, and the check's result for it (what compiles); a seed
 * that is itself invalid throws ConfigError.
 */
function composeOrThrow(seed: GatewayConfig, objects: readonly DocObject[], source: string): { document: GatewayConfig; setAside: SetAside[]; checked: LoadedConfig } {
  // compose() returns the document of the last check that passed: its result is kept, not checked again.
  let checked: LoadedConfig | undefined;
  const { document, setAside, errors } = compose(seed, objects, (doc) => {
    checked = undefined;
    try {
      checked = checkConfig(doc, source);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.errors;
      throw err;
    }
  });
  if (errors.length || !checked) throw new ConfigError(source, errors);
  return { document, setAside, checked };
}

function reportSetAside(setAside: readonly SetAside[]): void {
  for (const s of setAside) log.warn('configuration: an object created through /api is set aside (kept in the store, not served)', { object: `${sectionLabel(s.section)} '${s.id}'`, reason: s.reason });
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
  /** The seed (config.json or the environment) and where it came from; none in Kubernetes mode. */
  #seed: { document: GatewayConfig; keys: ReadonlySet<string>; from: SeedSource } | undefined;
  /** What replace() keeps between documents: a change to one resource checks and compiles that one. */
  readonly #checkMemo = new CheckMemo();
  readonly #compileMemo = new CompileMemo();

  constructor(holder: SnapshotHolder, store: ConfigStore, stored: StoredConfig, seed?: { document: GatewayConfig; from: SeedSource }) {
    this.holder = holder;
    this.store = store;
    this.#stored = stored;
    if (seed) this.#seed = { ...seed, keys: objectKeys(seed.document) };
    // A store that cannot be read right now (Redis away) is read again on its next notice.
    store.subscribe(() => void this.#serial(() => this.sync()).catch((err: unknown) => log.warn('could not read the stored configuration', { store: store.kind, error: (err as Error).message })));
  }

  /**
   * The document to serve from, given the seed (config.json or the environment): the stored one
   * when it grew from the same seed, else the seed with the objects written through /api laid
   * over it (so /api writes survive a restart and an edited config.json alike).
   */
  static async initialDocument(store: ConfigStore, seed: GatewayConfig, source = 'config.json'): Promise<StoredConfig> {
    const digest = seedDigest(seed);
    const stored = await store.load();
    if (stored && stored.seed === digest && stored.objects) return stored;
    const objects = stored ? storeObjectsOf(stored, seed) : [];
    const { document, setAside } = composeOrThrow(seed, objects, source);
    if (stored) log.info(`${source} changed since the stored configuration was written: serving it with the objects created through /api`, { store: store.kind, kept: objects.length - setAside.length, set_aside: setAside.length });
    reportSetAside(setAside);
    const fresh: StoredConfig = { seed: digest, revision: (stored?.revision ?? 0) + 1, document, objects, set_aside: setAside };
    try {
      await store.save(fresh, stored?.revision ?? 0);
    } catch (err) {
      // Another replica starting at the same moment seeded first: take what it wrote.
      if (err instanceof RevisionConflict) return ConfigService.initialDocument(store, seed, source);
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

  /**
   * The stored document itself, without the copy document() makes (megabytes for a large
   * configuration): for reading only. It is never changed in place: every change stores a new one.
   */
  storedDocument(): Readonly<GatewayConfig> {
    return this.#stored.document;
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
        const before = this.#stored;
        const draft = structuredClone(before.document);
        change(draft);
        this.#checkSeedObjects(before.document, draft);
        const foreign = [...unallowedEnvReferences(this.#stored.document, draft, process.env[API_ENV_REFS_VARIABLE]), ...unallowedVaultReferences(this.#stored.document, draft)];
        if (foreign.length) throw new ConfigError('the request', foreign);
        const { config, warnings } = checkConfig(draft, 'the request');
        const next = compileSnapshot(config);
        const stored: StoredConfig = { seed: before.seed, revision: before.revision + 1, document: draft, ...this.#storeObjectsAfter(before, draft) };
        try {
          await this.store.save(stored, before.revision);
        } catch (err) {
          // Another replica wrote first: apply the change again on top of its revision.
          if (!(err instanceof RevisionConflict) || attempt >= 5) throw err;
          await this.sync();
          continue;
        }
        for (const w of warnings) log.warn(w);
        this.#stored = stored;
        await this.holder.swap(next);
        log.info('configuration updated', { revision: stored.revision, config_hash: next.hash });
        return next;
      }
    });
  }

  /** Refuses a change to (or the removal of) any object of the seed, whatever the write was for. */
  #checkSeedObjects(before: GatewayConfig, after: GatewayConfig): void {
    const seed = this.#seed;
    if (!seed) return;
    const now = new Map(objectsOf(after).map((o) => [objectKey(o), JSON.stringify(o.value)]));
    for (const o of objectsOf(before)) {
      if (!seed.keys.has(objectKey(o))) continue;
      if (now.get(objectKey(o)) !== JSON.stringify(o.value)) throw new SeedManagedError(o.section, o.id, seed.from);
    }
  }

  /** The store-managed objects after a write: those served, then those still set aside. */
  #storeObjectsAfter(before: StoredConfig, draft: GatewayConfig): Pick<StoredConfig, 'objects' | 'set_aside'> {
    const seedKeys = this.#seed?.keys ?? new Set<string>();
    const served = objectsOf(draft).filter((o) => !seedKeys.has(objectKey(o)));
    if (!this.#seed) return {};
    const servedKeys = new Set(served.map(objectKey));
    // A set-aside object is replaced by a new one created under its id.
    const setAside = (before.set_aside ?? []).filter((s) => !servedKeys.has(objectKey(s)));
    const asideKeys = new Set(setAside.map(objectKey));
    const kept = (before.objects ?? []).filter((o) => asideKeys.has(objectKey(o)));
    return { objects: [...served, ...kept], set_aside: setAside };
  }

  /**
   * Replaces the seed (config.json was edited, `seed` is its check's result, `digest` its
   * seedDigest); the objects written through /api stay. Each pass over the document is a step of
   * its own, with the event loop free between them; the new snapshot is swapped in whole at the end.
   */
  reseed(seed: LoadedConfig, digest: string = seedDigest(seed.raw)): Promise<{ kept: number; setAside: SetAside[] }> {
    return this.#serial(async () => {
      const source = this.#seed?.from.source ?? 'config.json';
      const objects = storeObjectsOf(this.#stored, seed.raw);
      let composed: { document: GatewayConfig; setAside: SetAside[]; checked: LoadedConfig };
      if (objects.length === 0) {
        // Nothing written through /api: the document is the seed, already checked.
        composed = { document: seed.raw, setAside: [], checked: seed };
      } else {
        await yieldToLoop();
        composed = composeOrThrow(seed.raw, objects, source);
      }
      const { document, setAside, checked } = composed;
      await yieldToLoop();
      const next = await compileSnapshotInSteps(checked.config);
      const stored: StoredConfig = { seed: digest, revision: this.#stored.revision + 1, document, objects, set_aside: setAside };
      await yieldToLoop();
      const seedKeys = await runInSteps(objectKeysSteps(seed.raw));
      await this.store.save(stored);
      this.#stored = stored;
      this.#seed = { document: seed.raw, keys: seedKeys, from: this.#seed?.from ?? { kind: 'file', source } };
      reportSetAside(setAside);
      await this.holder.swap(next);
      return { kept: objects.length - setAside.length, setAside };
    });
  }

  /** Who owns an object of the document (undefined: no such object). */
  ownerOf(section: string, id: string): ObjectOwner | undefined {
    const kube = this.#origin?.sources[`${section}/${id}`];
    if (kube) return { owner: 'kubernetes', source: kube };
    if (this.#origin) return undefined;
    const seed = this.#seed;
    if (seed?.keys.has(`${section}/${id}`)) return { owner: seed.from.kind, source: seed.from.source };
    return { owner: 'store' };
  }

  /** Where the configuration comes from and lives, and what /api created that is not served. */
  status(): ConfigStatus {
    const seedKeys = this.#seed?.keys ?? new Set<string>();
    const all = objectsOf(this.#stored.document);
    const inSeed = all.filter((o) => seedKeys.has(objectKey(o))).length;
    return {
      seed: this.#origin ? { kind: 'kubernetes', source: this.#origin.editWith } : (this.#seed?.from ?? { kind: 'environment', source: 'the environment' }),
      store: { kind: this.store.kind, persistent: this.store.kind !== 'memory', ...(this.store.location !== undefined && { location: this.store.location }) },
      objects: { seed: this.#origin ? 0 : inSeed, store: this.#origin ? 0 : all.length - inSeed },
      set_aside: (this.#stored.set_aside ?? []).map((s) => ({ ...s, label: sectionLabel(s.section) })),
      skipped_routing_rules: this.holder.current().routing.skipped.map((r) => ({ ...r })),
    };
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
      const { config, raw, warnings } = checkConfig(document, opts.source, opts.env, undefined, this.#checkMemo);
      const next = compileSnapshot(config, this.#compileMemo);
      for (const w of warnings) log.warn(w);
      this.#stored = { seed: this.#stored.seed, revision: this.#stored.revision + 1, document: raw };
      this.#origin = opts.origin;
      if (next.hash === this.holder.current().hash) return this.holder.current();
      await this.holder.swap(next);
      return next;
    });
  }

  /**
   * What replace() would do with `document`, short of serving it: checked and compiled through the
   * same memos, the result thrown away (kube-rehearse.ts). The memos check their inputs, so a later
   * replace() gives what it would have given; throws nothing.
   */
  rehearse(document: unknown, env: NodeJS.ProcessEnv): Promise<void> {
    return this.#serial(async () => {
      try {
        compileSnapshot(checkConfig(document, 'a rehearsed reload', env, undefined, this.#checkMemo).config, this.#compileMemo);
      } catch {
        // An edit the rehearsal made invalid: nothing to warm.
      }
    });
  }

  /** What replace() reused and compiled so far (each resource's object checked, resolved and compiled once while unchanged). */
  reloadStats(): { checked: number; reused: number; wholeChecks: number; providersCompiled: number; keysCompiled: number } {
    const s = this.#checkMemo.stats;
    return { checked: s.checked, reused: s.reused, wholeChecks: s.whole, providersCompiled: this.#compileMemo.providersCompiled, keysCompiled: this.#compileMemo.governance.keysCompiled };
  }

  /**
   * The vault's values changed (a rotation): the stored document is checked again with them and
   * swapped in like a reload. Requests in flight finish on the snapshot they started with.
   */
  refreshSecrets(): Promise<void> {
    return this.#serial(async () => {
      const next = compileSnapshot(checkConfig(this.#stored.document, 'the configuration with rotated vault values').config);
      if (next.hash === this.holder.current().hash) return;
      await this.holder.swap(next);
      log.info('configuration updated: vault values rotated', { config_hash: next.hash });
    });
  }

  /** Picks up a newer revision written by another process; a bad one is reported and skipped. */
  async sync(): Promise<void> {
    const latest = await this.store.load();
    if (!latest || latest.revision <= this.#stored.revision) return;
    try {
      const next = compileSnapshot(checkConfig(latest.document, `stored configuration revision ${latest.revision}`).config);
      this.#stored = latest;
      if (next.hash !== this.holder.current().hash) await this.holder.swap(next);
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
