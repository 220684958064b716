// What the cache keeps across requests and snapshots (one per gateway, on the services): the store
// opened at start, the namespaces initialised in it, the single-flight table and the expiry sweep.
// A plugin config changed through /api (a new namespace or dimension) is initialised on first use;
// a dimension mismatch found then leaves the cache off for that config (logged, shown as the
// plugin's status) instead of failing requests. Problems are kept per config (namespace and
// dimension, embedding model), so a config that was fixed no longer shows the old one.
import { log } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { cacheMetrics, type CacheMetrics } from './metrics.ts';
import { KeyBudget } from './key-budget.ts';
import { SingleFlight } from './single-flight.ts';
import type { ResolvedCacheConfig } from './settings.ts';
import { DimensionMismatchError, type CacheStore } from './store.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** The response cache's store and state, when `vector_store` was enabled at start. */
    cache?: CacheRuntime;
  }
}

/** A semantic config's embedding: namespace, dimension, provider and model. */
const configKey = (c: ResolvedCacheConfig) => [c.namespace, c.dimension, c.provider ?? '', c.embeddingModel ?? ''].join('\u0000');

const SWEEP_MS = 60_000;
/** How long shutdown waits for writes still running. */
const CLOSE_WAIT_MS = 5_000;

export class CacheRuntime {
  readonly store: CacheStore;
  readonly flights = new SingleFlight();
  /** What each virtual key's entries written here weigh (max_bytes_per_key). */
  readonly budget = new KeyBudget();
  readonly #ready = new Map<string, Promise<boolean>>();
  /** Why a namespace cannot be used with a dimension, by `namespace\0dimension` (the config it came from). */
  readonly #problems = new Map<string, Error>();
  /** The dimensions each namespace was found usable with (two lookups: no key string built per request). */
  readonly #usable = new Map<string, Set<number>>();
  /** Embedding models that answer with another dimension than their config requires, by config. */
  readonly #embedding = new Map<string, string>();
  readonly #sweep: NodeJS.Timeout;
  /** Writes not finished yet: shutdown waits for them (bounded) so an answer served is not lost. */
  readonly #pending = new Set<Promise<void>>();
  #metrics: CacheMetrics | undefined;

  constructor(store: CacheStore) {
    this.store = store;
    this.#sweep = setInterval(() => void this.sweep(Date.now()), SWEEP_MS);
    this.#sweep.unref();
  }

  metrics(m: Metrics): CacheMetrics {
    return (this.#metrics ??= cacheMetrics(m));
  }

  /** The counters once a request has used the cache (undefined before): GET /api/cache/stats reads them. */
  get counters(): CacheMetrics | undefined {
    return this.#metrics;
  }

  /**
   * Initialises the namespace at start. Whatever fails is kept as the config's problem (the
   * plugin's status says it from the start, not only after a request); a dimension mismatch is
   * thrown (start-up fails with the spec's message).
   */
  async init(namespace: string, dimension: number): Promise<void> {
    if (await this.ready(namespace, dimension)) return;
    throw this.#problems.get(`${namespace}\u0000${dimension}`) ?? new Error(`namespace ${namespace} cannot be used`);
  }

  /** Whether the namespace was found usable with this dimension already (no wait). */
  usable(namespace: string, dimension: number): boolean {
    return this.#usable.get(namespace)?.has(dimension) === true;
  }

  /** True once the namespace is usable with this dimension (initialised on first use). */
  ready(namespace: string, dimension: number): Promise<boolean> {
    const key = `${namespace}\u0000${dimension}`;
    let p = this.#ready.get(key);
    if (!p) {
      p = this.store.init(namespace, dimension).then(
        () => {
          this.#problems.delete(key);
          let dims = this.#usable.get(namespace);
          if (!dims) this.#usable.set(namespace, (dims = new Set()));
          dims.add(dimension);
          return true;
        },
        (err: unknown) => {
          const e = err instanceof Error ? err : new Error(String(err));
          this.#problems.set(key, e);
          log.error('response cache namespace cannot be used: the cache is off for this config', { namespace, dimension, error: e.message });
          // A store that was away may answer later; a mismatch (or a store without the needed
          // features) stays until the config changes.
          if (!(err instanceof DimensionMismatchError)) setTimeout(() => this.#ready.delete(key), 5_000).unref();
          return false;
        },
      );
      this.#ready.set(key, p);
    }
    return p;
  }

  /** Notes that a semantic config's embedding model answers with vectors of another dimension (rule 8: its semantic lookups miss). */
  embeddingMismatch(cfg: ResolvedCacheConfig, got: number): void {
    const key = configKey(cfg);
    if (this.#embedding.has(key)) return;
    const msg = `embedding model ${cfg.embeddingModel} of provider ${cfg.provider} returns vectors of dimension ${got} but the config requires ${cfg.dimension}: semantic lookups miss, entries are kept for direct lookups only`;
    this.#embedding.set(key, msg);
    log.error('response cache embedding dimension mismatch', { namespace: cfg.namespace, error: msg });
  }

  /** Why this config of the cache cannot run as configured, as last found (undefined: it can, or it was not tried yet). */
  problem(cfg: ResolvedCacheConfig): string | undefined {
    return this.#problems.get(`${cfg.namespace}\u0000${cfg.dimension}`)?.message ?? this.#embedding.get(configKey(cfg));
  }

  /** The namespaces in use (initialised and usable). */
  namespaces(): string[] {
    return [...this.#usable.keys()];
  }

  async sweep(now: number): Promise<number> {
    this.budget.prune(now);
    let removed = 0;
    for (const ns of this.namespaces()) {
      try {
        removed += await this.store.sweep(ns, now);
      } catch (err) {
        this.#metrics?.storeErrors.labels('sweep').inc();
        log.warn('response cache sweep failed', { namespace: ns, error: (err as Error).message });
      }
    }
    return removed;
  }

  /** Runs a write, tracked until it ends. */
  track(write: Promise<void>): void {
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
  }

  /** Waits (at most `maxMs`) for the writes in flight: entries already served from this replica are then in the store. */
  async writesLanded(maxMs = CLOSE_WAIT_MS): Promise<void> {
    if (!this.#pending.size) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.#pending]), new Promise((r) => (timer = setTimeout(r, maxMs)))]);
    clearTimeout(timer);
  }

  async close(dropNamespaces: readonly string[] = []): Promise<void> {
    clearInterval(this.#sweep);
    await this.writesLanded();
    for (const ns of dropNamespaces) await this.store.drop(ns).catch(() => undefined);
    await this.store.close();
  }
}
