// What the cache keeps across requests and snapshots (one per gateway, on the services): the store
// opened at start, the namespaces initialised in it, the single-flight table and the expiry sweep.
// A plugin config changed through /api (a new namespace or dimension) is initialised on first use;
// a dimension mismatch found then leaves the cache off for that config (logged, shown as the
// plugin's status) instead of failing requests.
import { log } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { cacheMetrics, type CacheMetrics } from './metrics.ts';
import { KeyBudget } from './key-budget.ts';
import { SingleFlight } from './single-flight.ts';
import { DimensionMismatchError, type CacheStore } from './store.ts';

const SWEEP_MS = 60_000;
/** How long shutdown waits for writes still running. */
const CLOSE_WAIT_MS = 5_000;

export class CacheRuntime {
  readonly store: CacheStore;
  readonly flights = new SingleFlight();
  /** What each virtual key's entries written here weigh (max_bytes_per_key). */
  readonly budget = new KeyBudget();
  readonly #ready = new Map<string, Promise<boolean>>();
  readonly #problems = new Map<string, string>();
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

  /** Initialises the namespace at start: a dimension mismatch is thrown (start-up fails with the spec's message). */
  async init(namespace: string, dimension: number): Promise<void> {
    const key = `${namespace}\u0000${dimension}`;
    await this.store.init(namespace, dimension);
    this.#ready.set(key, Promise.resolve(true));
  }

  /** True once the namespace is usable with this dimension (initialised on first use). */
  ready(namespace: string, dimension: number): Promise<boolean> {
    const key = `${namespace}\u0000${dimension}`;
    let p = this.#ready.get(key);
    if (!p) {
      p = this.store.init(namespace, dimension).then(
        () => {
          this.#problems.delete(namespace);
          return true;
        },
        (err: unknown) => {
          const msg = (err as Error).message;
          this.#problems.set(namespace, msg);
          log.error('response cache namespace cannot be used: the cache is off for this config', { namespace, error: msg });
          // A store that was away may answer later; a mismatch stays until the config changes.
          if (!(err instanceof DimensionMismatchError)) setTimeout(() => this.#ready.delete(key), 5_000).unref();
          return false;
        },
      );
      this.#ready.set(key, p);
    }
    return p;
  }

  /** Why the cache cannot run with this namespace, if it cannot. */
  problem(namespace: string): string | undefined {
    return this.#problems.get(namespace);
  }

  /** The namespaces in use (initialised and usable). */
  namespaces(): string[] {
    return [...new Set([...this.#ready.keys()].map((k) => k.split('\u0000')[0]))];
  }

  async sweep(now: number): Promise<number> {
    this.budget.prune(now);
    let removed = 0;
    for (const ns of this.namespaces()) {
      if (this.#problems.has(ns)) continue;
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
