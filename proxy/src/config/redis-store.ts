// The configuration document in Redis, for many replicas: one key holds the latest revision, a Lua
// compare-and-set writes it, and a pub/sub message tells every replica to read it.
import type { RedisClientType } from 'redis';
import { RevisionConflict, type ConfigStore, type StoredConfig } from './store.ts';
import { log } from '../log.ts';

// KEYS[1] document key; ARGV[1] expected revision ('' = any), ARGV[2] new document JSON, ARGV[3] its revision.
const CAS = `
local cur = redis.call('HGET', KEYS[1], 'revision')
if ARGV[1] ~= '' and (cur or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'revision', ARGV[3], 'stored', ARGV[2])
return 1`;

export class RedisConfigStore implements ConfigStore {
  readonly kind = 'redis' as const;
  readonly #client: RedisClientType;
  readonly #key: string;
  readonly #channel: string;
  #subscriber: RedisClientType | undefined;

  constructor(client: RedisClientType, prefix: string) {
    this.#client = client;
    this.#key = `${prefix}config`;
    this.#channel = `${prefix}config:changed`;
  }

  async load(): Promise<StoredConfig | undefined> {
    const text = await this.#client.hGet(this.#key, 'stored');
    return text ? (JSON.parse(text) as StoredConfig) : undefined;
  }

  async save(stored: StoredConfig, expected?: number): Promise<void> {
    const ok = await this.#client.eval(CAS, {
      keys: [this.#key],
      arguments: [expected === undefined ? '' : String(expected), JSON.stringify(stored), String(stored.revision)],
    });
    if (ok !== 1) throw new RevisionConflict();
    await this.#client.publish(this.#channel, String(stored.revision));
  }

  subscribe(onChange: () => void): void {
    const sub = this.#client.duplicate() as RedisClientType;
    this.#subscriber = sub;
    sub.on('error', (err: Error) => log.warn('redis subscriber error', { error: err.message }));
    // Resubscribing after a reconnect is the client's job; a missed message is caught by the poll below.
    void sub.connect().then(() => sub.subscribe(this.#channel, () => onChange()));
    const poll = setInterval(onChange, 5000);
    poll.unref();
  }

  async close(): Promise<void> {
    await this.#subscriber?.quit().catch(() => undefined);
  }
}
