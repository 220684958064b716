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
//
// The deadlines share one timer, armed for the earliest: a call only joins a set (and leaves it
// when answered), where a timer and a race of promises per call cost a store of one command per
// request a few microseconds each.
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

/** A call waiting for its answer: when it is due (performance.now()) and how to fail it then. */
interface Pending {
  due: number;
  timeoutMs: number;
  reject: (err: Error) => void;
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
  readonly #pending = new Set<Pending>();
  /** The deadline timer, and the moment it fires. */
  #deadlineTimer: NodeJS.Timeout | undefined;
  #deadlineAt = Number.POSITIVE_INFINITY;

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
    let p: Promise<T>;
    try {
      p = call();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { due: performance.now() + timeoutMs, timeoutMs, reject };
      this.#pending.add(entry);
      if (entry.due < this.#deadlineAt) this.#arm(entry.due);
      else if (this.#pending.size === 1) this.#deadlineTimer?.ref();
      // Still pending: answered in time. Gone: the deadline failed it, and an answer after it still
      // proves the store answers (a failure after it is not news).
      p.then(
        (v) => {
          if (this.#answered(entry)) resolve(v);
          else this.#recover();
        },
        (err: unknown) => {
          if (this.#answered(entry)) reject(err as Error);
        },
      );
    });
  }

  /** False when the deadline failed the call already. The timer stays armed, but holds no exit while nothing waits. */
  #answered(entry: Pending): boolean {
    if (!this.#pending.delete(entry)) return false;
    if (this.#pending.size === 0) this.#deadlineTimer?.unref();
    return true;
  }

  #arm(at: number): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = at;
    this.#deadlineTimer = setTimeout(() => this.#expire(), Math.max(0, Math.ceil(at - performance.now())));
  }

  /** Fails the calls past their deadline, and arms the timer for the next one still pending. */
  #expire(): void {
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#pending) {
      if (entry.due <= now) {
        this.#pending.delete(entry);
        this.#stall();
        entry.reject(new StoreTimeoutError(this.name, `${this.name} did not answer within ${entry.timeoutMs} ms`));
      } else if (entry.due < next) next = entry.due;
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
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
