// A deadline on every call to a server-backed store (Redis, PostgreSQL). A store that stops
// answering without closing its connections (a frozen process, a partition, a full disk) gives no
// error at all: the socket stays open and the client waits for a reply that does not come, holding
// each request that asked. Here a call that misses its deadline fails, and the store counts as
// stalled (its status turns red) while a probe asks it at once: one slow answer on a busy server is
// forgiven when the probe answers in time. When the probe misses its deadline too, calls fail at
// once (so nothing piles up in the client's queue or the pool) and the probe asks again every
// PROBE_EVERY_MS; its first answer, or a late answer to an earlier call, ends the stall. Each store
// decides what a failed call means (a cache miss, a 503, a record kept for later) and shows
// `stalled()` in its status.
import { log } from './log.ts';

/** Default deadline of a store call on the request path (SKYBRIDGE_STORE_TIMEOUT_MS). */
export const DEFAULT_STORE_TIMEOUT_MS = 2000;
const PROBE_EVERY_MS = 500;

/** SKYBRIDGE_STORE_TIMEOUT_MS: whole milliseconds, 50 to 60 000; else the default (a bad value is refused at start). */
export function storeTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SKYBRIDGE_STORE_TIMEOUT_MS;
  if (raw === undefined || raw === '') return DEFAULT_STORE_TIMEOUT_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 50 || n > 60_000) throw new Error(`SKYBRIDGE_STORE_TIMEOUT_MS must be a whole number of milliseconds from 50 to 60000, got '${raw}'`);
  return n;
}

/** A store call that got no answer in time, or was not sent because the store is stalled. */
export class StoreTimeoutError extends Error {
  readonly store: string;
  constructor(store: string, message: string) {
    super(message);
    this.name = 'StoreTimeoutError';
    this.store = store;
  }
}

export interface StoreGuardOptions {
  /** For messages and logs: what and where, never a password ('cache store (Redis 10.0.0.5:6379)'). */
  name: string;
  /** A call's deadline unless the call names its own. */
  timeoutMs: number;
  /** One cheap round trip (PING, SELECT 1): answered means the store answers again. */
  probe: () => Promise<unknown>;
}

export class StoreGuard {
  readonly name: string;
  readonly timeoutMs: number;
  readonly #probe: () => Promise<unknown>;
  #stalledSince: number | undefined;
  /** The probe missed its deadline too: calls fail at once. */
  #silent = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: StoreGuardOptions) {
    this.name = opts.name;
    this.timeoutMs = opts.timeoutMs;
    this.#probe = opts.probe;
  }

  /** False from a missed deadline until the store answers again. */
  get answering(): boolean {
    return this.#stalledSince === undefined;
  }

  /** The probe did not answer either: calls fail at once, without being sent. */
  get failingFast(): boolean {
    return this.#silent;
  }

  /** Why calls fail right now (undefined while the store answers). */
  stalled(): string | undefined {
    if (this.#stalledSince === undefined) return undefined;
    return `${this.name} has not answered since ${new Date(this.#stalledSince).toISOString()} (deadline ${this.timeoutMs} ms)`;
  }

  /** `call()` under a deadline (`timeoutMs`, default the guard's); fails at once while the store is silent. */
  run<T>(call: () => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    if (this.#silent) return Promise.reject(new StoreTimeoutError(this.name, this.stalled() ?? `${this.name} does not answer`));
    let late = false;
    let timer: NodeJS.Timeout | undefined;
    let p: Promise<T>;
    try {
      p = call();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        late = true;
        this.#stall();
        reject(new StoreTimeoutError(this.name, `${this.name} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    // An answer after the deadline still proves the store answers; a failure after it is not news.
    p.then(
      () => late && this.#recover(),
      () => undefined,
    );
    return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * Stops probing and closes the client: gracefully (replies still due are awaited) within the
   * deadline, else by `destroy` (at once while stalled), so a silent store cannot hold a shutdown.
   */
  async close(graceful?: () => Promise<unknown>, destroy?: () => void): Promise<void> {
    const stalled = this.#silent;
    this.#closed = true;
    clearTimeout(this.#timer);
    if (!graceful) return;
    if (stalled) {
      destroy?.();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      graceful().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!done) destroy?.();
  }

  #stall(): void {
    if (this.#stalledSince !== undefined || this.#closed) return;
    this.#stalledSince = Date.now();
    log.warn(`${this.name} missed its deadline: asking it again (the store's outage rule applies meanwhile)`, { deadline_ms: this.timeoutMs });
    this.#schedule(0);
  }

  #recover(): void {
    if (this.#stalledSince === undefined) return;
    if (this.#silent) log.info(`${this.name} answers again`, { stalled_ms: Date.now() - this.#stalledSince });
    this.#stalledSince = undefined;
    this.#silent = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delay = PROBE_EVERY_MS): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#probeOnce(), delay);
    this.#timer.unref();
  }

  async #probeOnce(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ok = await Promise.race([
      this.#probe().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.timeoutMs))),
    ]);
    clearTimeout(timer);
    if (ok) this.#recover();
    else if (this.#stalledSince !== undefined) {
      if (!this.#silent) log.warn(`${this.name} does not answer: calls fail at once until it does`, { deadline_ms: this.timeoutMs });
      this.#silent = true;
      this.#schedule();
    }
  }
}
