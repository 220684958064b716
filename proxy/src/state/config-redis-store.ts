// The configuration document in Redis, for many replicas: one key holds the latest revision, a Lua
// compare-and-set writes it, and a pub/sub message tells every replica to read it.
//
// Redis may be away: at start the gateway then serves config.json (or the environment) and seeds or
// adopts the stored document once Redis answers (seedWhenReady); while it is away, reads and writes
// fail at once with a 503 naming Redis, and every reconnection re-reads the stored revision, since
// change messages sent meanwhile were lost.
import type { RedisClientType } from 'redis';
import { RevisionConflict, type ConfigStore, type StoredConfig } from '../config/store.ts';
import { GatewayError } from '../unified/errors.ts';
import type { SharedRedis } from './redis.ts';
import { log } from '../log.ts';

// KEYS[1] document key; ARGV[1] expected revision ('' = any), ARGV[2] new document JSON, ARGV[3] its revision.
const CAS = `
local cur = redis.call('HGET', KEYS[1], 'revision')
if ARGV[1] ~= '' and (cur or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'revision', ARGV[3], 'stored', ARGV[2])
return 1`;

/** Missed change messages are caught by re-reading this often. */
const POLL_MS = 5000;

export class ConfigStoreUnavailableError extends GatewayError {
  constructor(addr: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(503, `the configuration store (Redis at ${addr}) is unavailable (${why}): configuration changes cannot be saved until it answers; retry shortly`, {
      type: 'api_error',
      code: 'config_store_unavailable',
      retryAfter: 1,
    });
  }
}

export class RedisConfigStore implements ConfigStore {
  readonly kind = 'redis' as const;
  readonly #redis: SharedRedis;
  readonly #key: string;
  readonly #channel: string;
  #subscriber: RedisClientType | undefined;
  #poll: NodeJS.Timeout | undefined;
  #seed: (() => Promise<unknown>) | undefined;

  readonly location: string;

  constructor(redis: SharedRedis, prefix: string) {
    this.#redis = redis;
    this.location = `redis ${redis.addr} key ${prefix}config`;
    this.#key = `${prefix}config`;
    this.#channel = `${prefix}config:changed`;
  }

  /** Started without Redis: once it answers, `seed` writes the start-up document (or adopts the stored one). */
  seedWhenReady(seed: () => Promise<unknown>): void {
    this.#seed = seed;
  }

  async load(): Promise<StoredConfig | undefined> {
    const text = await this.#call(() => this.#redis.client.hGet(this.#key, 'stored'));
    return text ? (JSON.parse(text) as StoredConfig) : undefined;
  }

  async save(stored: StoredConfig, expected?: number): Promise<void> {
    const ok = await this.#call(() =>
      this.#redis.client.eval(CAS, {
        keys: [this.#key],
        arguments: [expected === undefined ? '' : String(expected), JSON.stringify(stored), String(stored.revision)],
      }),
    );
    if (ok !== 1) throw new RevisionConflict();
    // The write landed; a lost notice is made up for by the other replicas' poll.
    await this.#call(() => this.#redis.client.publish(this.#channel, String(stored.revision))).catch(() => undefined);
  }

  subscribe(onChange: () => void): void {
    this.#redis.onReady(() => void this.#reconnected(onChange));
    const sub = this.#redis.client.duplicate() as RedisClientType;
    this.#subscriber = sub;
    // The main connection already reports outages; the subscriber's own errors would repeat them.
    sub.on('error', () => undefined);
    // Resubscribing after a reconnect is the client's job. connect() settles only once connected.
    sub
      .connect()
      .then(() => sub.subscribe(this.#channel, () => onChange()))
      .catch((err: unknown) => log.debug('config store: change subscription ended', { error: (err as Error).message }));
    this.#poll = setInterval(() => {
      if (this.#redis.isReady()) onChange();
    }, POLL_MS);
    this.#poll.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    const sub = this.#subscriber;
    if (sub) {
      if (sub.isReady) await sub.close().catch(() => sub.destroy());
      else sub.destroy();
    }
  }

  async #reconnected(onChange: () => void): Promise<void> {
    const seed = this.#seed;
    if (seed) {
      try {
        await seed();
        this.#seed = undefined;
        log.info('config store: Redis answers again; the stored configuration is in step', { addr: this.#redis.addr });
      } catch (err) {
        // Lost again already: the next reconnection tries again.
        log.warn('config store: could not seed the configuration in Redis', { addr: this.#redis.addr, error: (err as Error).message });
        return;
      }
    }
    onChange();
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    if (!this.#redis.client.isReady) throw new ConfigStoreUnavailableError(this.#redis.addr, 'not connected');
    try {
      return await this.#redis.call(command);
    } catch (err) {
      throw new ConfigStoreUnavailableError(this.#redis.addr, err);
    }
  }
}
