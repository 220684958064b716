// Logged-out dashboard sessions, shared by every replica: a session token is signed, so any replica
// accepts it without a store, and a logout must therefore be written where all of them look. One
// Redis key per revoked token (its nonce), expiring with the token, so the list never outgrows the
// sessions still alive. Without Redis the gateway is one process and its own spent list suffices.
// Each command runs under the store deadline: a silent Redis fails the check (a 503) instead of
// holding the dashboard's requests.
import type { SharedRedis } from './redis.ts';

export interface SessionRevocations {
  revoke(nonce: string, expiresAt: number): Promise<void>;
  isRevoked(nonce: string): Promise<boolean>;
}

export class RedisSessionRevocations implements SessionRevocations {
  readonly #redis: SharedRedis;
  readonly #prefix: string;

  constructor(redis: SharedRedis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}session-revoked:`;
  }

  async revoke(nonce: string, expiresAt: number): Promise<void> {
    await this.#redis.call(() => this.#redis.client.set(this.#prefix + nonce, '1', { PX: Math.max(1, expiresAt - Date.now()) }));
  }

  async isRevoked(nonce: string): Promise<boolean> {
    return (await this.#redis.call(() => this.#redis.client.exists(this.#prefix + nonce))) === 1;
  }

  get addr(): string {
    return this.#redis.addr;
  }
}
