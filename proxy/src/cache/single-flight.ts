// Concurrent identical requests on one replica: the first (the leader) calls upstream; the others
// wait for its answer and are served it as a hit. The leader settles with the entry it is about to
// write, or with nothing (an error, an abort, a no-store), and the waiters then go upstream. Across
// replicas nothing is shared: each replica's first request calls upstream.
import type { CacheEntry } from './store.ts';

export class SingleFlight {
  readonly #flights = new Map<string, { promise: Promise<CacheEntry | undefined>; settle: (e: CacheEntry | undefined) => void }>();
  /** Entries settled but not yet in the store: a request arriving meanwhile is served them, not sent upstream. */
  readonly #landing = new Map<string, CacheEntry>();

  /** Becomes the leader for `key` (true), or false when another request already leads it. */
  lead(key: string): boolean {
    if (this.#flights.has(key)) return false;
    let settle!: (e: CacheEntry | undefined) => void;
    const promise = new Promise<CacheEntry | undefined>((r) => (settle = r));
    this.#flights.set(key, { promise, settle });
    return true;
  }

  /** An entry settled by a leader but not yet in the store (expired ones are not served). */
  landing(key: string): CacheEntry | undefined {
    const entry = this.#landing.get(key);
    return entry && entry.expiresAt > Date.now() ? entry : undefined;
  }

  /** The leader's answer, or undefined when none leads, it failed, the wait was too long or the caller left. */
  async wait(key: string, signal: AbortSignal, maxMs: number): Promise<CacheEntry | undefined> {
    const landing = this.landing(key);
    if (landing) return landing;
    const flight = this.#flights.get(key);
    if (!flight) return undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const giveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, maxMs, undefined);
      onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([flight.promise, giveUp]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** The leader's answer; an entry stays served from here until `landed` (its store write ended). */
  settle(key: string, entry: CacheEntry | undefined): void {
    const flight = this.#flights.get(key);
    if (!flight) return;
    this.#flights.delete(key);
    if (entry) this.#landing.set(key, entry);
    flight.settle(entry);
  }

  landed(key: string): void {
    this.#landing.delete(key);
  }
}
