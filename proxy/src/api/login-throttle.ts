// Failed management logins (Basic auth with the admin credentials, POST /api/session/login) per
// client address: after MAX_FAILURES within WINDOW_MS, every password attempt from that address is
// answered 429 until the oldest failure leaves the window, right or wrong, so guessing stays slow.
// Per process: with --workers N an address gets N times the attempts at most.
import { log } from '../log.ts';
import { GatewayError } from '../unified/errors.ts';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 60_000;
/** Bounds memory under a spray of addresses; the oldest entries go first. */
const MAX_TRACKED = 10_000;

export class LoginThrottle {
  readonly #failures = new Map<string, number[]>();
  readonly #max: number;
  readonly #windowMs: number;

  constructor(max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.#max = max;
    this.#windowMs = windowMs;
  }

  #recent(client: string, now: number): number[] {
    const list = (this.#failures.get(client) ?? []).filter((t) => t > now - this.#windowMs);
    if (list.length === 0) this.#failures.delete(client);
    else this.#failures.set(client, list);
    return list;
  }

  /** Seconds the client must wait before trying a password again, 0 when it may. */
  retryAfter(client: string, now = Date.now()): number {
    const list = this.#recent(client, now);
    if (list.length < this.#max) return 0;
    return Math.max(1, Math.ceil((list[list.length - this.#max] + this.#windowMs - now) / 1000));
  }

  /** Throws 429 while the client is locked out. */
  check(client: string, now = Date.now()): void {
    const wait = this.retryAfter(client, now);
    if (wait > 0) {
      throw new GatewayError(429, `too many failed login attempts from this address: retry in ${wait} s`, { type: 'rate_limit_error', code: 'too_many_login_attempts', retryAfter: wait });
    }
  }

  /** Records and logs a failure: the username tried (shortened), never the password. */
  fail(client: string, username: string, via: 'basic' | 'session_login', now = Date.now()): void {
    const list = this.#recent(client, now);
    list.push(now);
    this.#failures.delete(client);
    this.#failures.set(client, list.slice(-this.#max));
    while (this.#failures.size > MAX_TRACKED) this.#failures.delete(this.#failures.keys().next().value!);
    log.warn('management login failed', { client, username: username.slice(0, 64), via, failures_in_window: list.length });
  }

  succeed(client: string): void {
    this.#failures.delete(client);
  }
}
