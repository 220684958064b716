// A work queue in the manner of client-go's: an item queued many times is processed once
// (deduplicated), never by two workers at once (an item added while processing is queued again when
// done), and a failing item is retried after a per-item exponential backoff.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

/** base * 2^failures, capped: 0 -> base, 1 -> 2*base, ... */
export function backoffDelay(failures: number, opts: BackoffOptions): number {
  return Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(failures, 52));
}

export class WorkQueue<T> {
  readonly #queue: T[] = [];
  /** Queued, or added while processing (to be queued again at done). */
  readonly #dirty = new Set<T>();
  readonly #processing = new Set<T>();
  readonly #failures = new Map<T, number>();
  readonly #timers = new Map<T, { at: number; timer: NodeJS.Timeout }>();
  readonly #waiters: ((item: T | undefined) => void)[] = [];
  readonly #backoff: BackoffOptions;
  readonly #onDepth: (depth: number) => void;
  #shutDown = false;

  constructor(opts: { backoff?: Partial<BackoffOptions>; onDepth?: (depth: number) => void } = {}) {
    this.#backoff = { baseMs: opts.backoff?.baseMs ?? 100, maxMs: opts.backoff?.maxMs ?? 60_000 };
    this.#onDepth = opts.onDepth ?? (() => {});
  }

  /** Items waiting to be processed (not counting delayed retries). */
  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shutDown;
  }

  /** Whether `item` waits to be processed (queued, or added again while being processed). */
  has(item: T): boolean {
    return this.#dirty.has(item);
  }

  add(item: T): void {
    if (this.#shutDown || this.#dirty.has(item)) return;
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(item);
      this.#processing.add(item);
      waiter(item);
      return;
    }
    this.#queue.push(item);
    this.#onDepth(this.#queue.length);
  }

  /** Adds after `ms`; a later call for the same item keeps whichever is due first. */
  addAfter(item: T, ms: number): void {
    if (this.#shutDown) return;
    if (ms <= 0) return this.add(item);
    const at = Date.now() + ms;
    const existing = this.#timers.get(item);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(item);
      this.add(item);
    }, ms);
    timer.unref();
    this.#timers.set(item, { at, timer });
  }

  /** Retry after this item's next backoff delay; returns the delay. */
  addRateLimited(item: T): number {
    const failures = this.#failures.get(item) ?? 0;
    this.#failures.set(item, failures + 1);
    const delay = backoffDelay(failures, this.#backoff);
    this.addAfter(item, delay);
    return delay;
  }

  /** The item succeeded: its next failure starts the backoff over. */
  forget(item: T): void {
    this.#failures.delete(item);
  }

  failures(item: T): number {
    return this.#failures.get(item) ?? 0;
  }

  /** The next item, waiting for one; undefined once shut down. Call done(item) when finished. */
  get(): Promise<T | undefined> {
    if (this.#shutDown) return Promise.resolve(undefined);
    const item = this.#queue.shift();
    if (item !== undefined) {
      this.#dirty.delete(item);
      this.#processing.add(item);
      this.#onDepth(this.#queue.length);
      return Promise.resolve(item);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  done(item: T): void {
    this.#processing.delete(item);
    if (!this.#dirty.has(item) || this.#shutDown) return;
    // Added while it was being processed: process it again.
    this.#dirty.delete(item);
    this.add(item);
  }

  shutDown(): void {
    this.#shutDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
    this.#queue.length = 0;
    this.#dirty.clear();
    this.#onDepth(0);
  }
}
