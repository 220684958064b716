// Failed guesses of a secret per client address: management logins (Basic auth with the admin
// credentials, POST /api/session/login), management API keys and session tokens presented to /api,
// and virtual keys presented to the inference routes, all counted together. After MAX_FAILURES
// within WINDOW_MS, every attempt from that address that presents a secret is answered 429 until the
// oldest failure leaves the window, right or wrong, so guessing stays slow. Per process: with
// --workers N an address gets N times the attempts at most. One instance per gateway (services.ts).
import { log } from '../log.ts';
import { GatewayError } from '../unified/errors.ts';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 60_000;
/** Bounds memory under a spray of addresses; the oldest entries go first. */
const MAX_TRACKED = 10_000;

export class GuessThrottle {
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

  /** Throws 429 while the client is locked out (a login, or a management credential on /api). */
  check(client: string, now = Date.now()): void {
    const wait = this.retryAfter(client, now);
    if (wait > 0) {
      throw new GatewayError(429, `too many failed login attempts from this address: retry in ${wait} s`, { type: 'rate_limit_error', code: 'too_many_login_attempts', retryAfter: wait });
    }
  }

  /** Throws 429 while the client is locked out (a request presenting a key to a key-spending route). */
  checkKey(client: string, now = Date.now()): void {
    const wait = this.retryAfter(client, now);
    if (wait > 0) {
      throw new GatewayError(429, `too many failed API key attempts from this address: retry in ${wait} s`, { type: 'rate_limit_error', code: 'too_many_key_attempts', retryAfter: wait });
    }
  }

  /** Records and logs a failure: the username tried (shortened), never the password or key. */
  fail(client: string, username: string, via: 'basic' | 'session_login' | 'api_key' | 'virtual_key', now = Date.now()): void {
    const list = this.#recent(client, now);
    list.push(now);
    this.#failures.delete(client);
    this.#failures.set(client, list.slice(-this.#max));
    while (this.#failures.size > MAX_TRACKED) this.#failures.delete(this.#failures.keys().next().value!);
    log.warn(via === 'virtual_key' ? 'virtual key refused' : 'management login failed', { client, ...(username && { username: username.slice(0, 64) }), via, failures_in_window: list.length });
  }

  succeed(client: string): void {
    this.#failures.delete(client);
  }
}
