// Tokens every replica (and every worker) of the gateway accepts without a shared store:
// `<expiry>.<nonce>.<mac>`, the MAC an HMAC-SHA256 under a key each process derives from the same
// configuration. A session opened on one pod works on the next request's pod; new admin credentials
// give a new key, which voids every token at once. Spending (a used ticket, a logout) is per process.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeySource = () => Buffer | undefined;

/** Spent nonces kept at most (the oldest go first): a client spending tokens in a loop cannot grow memory. */
const MAX_SPENT = 100_000;

export class SignedTokens {
  readonly ttlMs: number;
  readonly #purpose: string;
  readonly #key: KeySource;
  /** Nonces spent on this process → their expiry (after which the MAC check refuses them anyway). */
  readonly #spent = new Map<string, number>();

  constructor(purpose: string, ttlMs: number, key: KeySource) {
    this.#purpose = purpose;
    this.ttlMs = ttlMs;
    this.#key = key;
  }

  /** Undefined when there is no key (management auth has no admin credentials). */
  issue(now = Date.now()): { token: string; expiresAt: number } | undefined {
    const key = this.#key();
    if (!key) return undefined;
    const expiresAt = now + this.ttlMs;
    const payload = `${expiresAt.toString(36)}.${randomBytes(18).toString('base64url')}`;
    return { token: `${payload}.${this.#mac(key, payload)}`, expiresAt };
  }

  /** True for a token signed under the current key, not expired and not spent here. */
  valid(token: string, now = Date.now()): boolean {
    return this.#open(token, now) !== undefined;
  }

  /** Uses a token up on this process; false when it was not valid. */
  spend(token: string, now = Date.now()): boolean {
    const opened = this.#open(token, now);
    if (!opened) return false;
    for (const [n, exp] of this.#spent) if (exp <= now) this.#spent.delete(n);
    while (this.#spent.size >= MAX_SPENT) this.#spent.delete(this.#spent.keys().next().value as string);
    this.#spent.set(opened.nonce, opened.expiresAt);
    return true;
  }

  /** A valid token's nonce and expiry (what a shared revocation list keys on), else undefined. */
  open(token: string, now = Date.now()): { nonce: string; expiresAt: number } | undefined {
    return this.#open(token, now);
  }

  get spentCount(): number {
    return this.#spent.size;
  }

  #open(token: string, now: number): { nonce: string; expiresAt: number } | undefined {
    const key = this.#key();
    if (!key) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [exp, nonce, mac] = parts;
    const want = Buffer.from(this.#mac(key, `${exp}.${nonce}`), 'base64url');
    const got = Buffer.from(mac, 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    const expiresAt = parseInt(exp, 36);
    if (!(expiresAt > now) || this.#spent.has(nonce)) return undefined;
    return { nonce, expiresAt };
  }

  #mac(key: Buffer, payload: string): string {
    return createHmac('sha256', key).update(`${this.#purpose}\u0000${payload}`).digest('base64url');
  }
}
