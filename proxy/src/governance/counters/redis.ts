// Counters shared by every replica through one Redis. An admission is one EVALSHA of a Lua script
// (atomic: no other client's command runs in between), so N replicas admit exactly `max` requests
// per window between them. Keys: `<prefix>c:<limit key>:<window start ms>`, expiring (PEXPIREAT)
// a margin after their window ends, so Redis holds only live windows.
//
// When Redis cannot answer (down, restarting, too slow), admit() fails CLOSED by default: it throws
// CounterStoreUnavailableError, a 503 the pipeline sends as it is, because a gateway that keeps
// serving without its limits can overspend a budget without bound. `onUnavailable: 'open'` admits
// instead (with the last usage seen). record() rejects with the same error; that usage is lost.
// The client reconnects by itself (backoff to 2 s); commands are not queued while it is away. A
// Redis that hangs (open socket, no replies) is caught by each command's deadline (StoreGuard):
// after the first miss, admissions fail at once (closed or open, as above) until it answers again.
//
// Windows come from each replica's clock (windows.ts): replicas should run NTP; skew of a few ms
// only moves which window a request at a boundary counts in.
import { createHash } from 'node:crypto';
import type { createClient as CreateClient, RedisClientOptions } from 'redis';
import { lazy } from '../../lazy.ts';
import type { RedisConfig } from '../../schema/governance.ts';
import { log } from '../../log.ts';
import { DEFAULT_STORE_TIMEOUT_MS, StoreGuard } from '../../store-guard.ts';
import type { Window } from './windows.ts';
import {
  addAmount,
  CounterStoreUnavailableError,
  kindOf,
  limitWindow,
  UsageCache,
  type AdmitResult,
  type CounterStore,
  type Limit,
  type UsageAdd,
} from './store.ts';

// KEYS: the distinct counter keys. ARGV[1]: number of limits n; then per limit i (0-based) at
// 2+4i: index into KEYS (1-based), max, '1' for a request limit (incremented on success), expiry
// (PEXPIREAT ms). Returns { failing limit index or -1, usage of limit 0, ... } as strings, so float
// budgets keep their precision (Lua number replies are truncated to integers).
const ADMIT_SCRIPT = `
local n = tonumber(ARGV[1])
local raw, val = {}, {}
for k = 1, #KEYS do
  raw[k] = redis.call('GET', KEYS[k]) or '0'
  val[k] = tonumber(raw[k]) or 0
end
local fail = -1
for i = 0, n - 1 do
  local b = 2 + i * 4
  if not (val[tonumber(ARGV[b])] < tonumber(ARGV[b + 1])) then
    fail = i
    break
  end
end
if fail < 0 then
  local done = {}
  for i = 0, n - 1 do
    local b = 2 + i * 4
    local k = tonumber(ARGV[b])
    if ARGV[b + 2] == '1' and not done[k] then
      done[k] = true
      raw[k] = tostring(redis.call('INCR', KEYS[k]))
      redis.call('PEXPIREAT', KEYS[k], ARGV[b + 3])
    end
  end
end
local out = { tostring(fail) }
for i = 0, n - 1 do
  out[i + 2] = raw[tonumber(ARGV[2 + i * 4])]
end
return out
`;
const ADMIT_SHA = createHash('sha1').update(ADMIT_SCRIPT).digest('hex');

export interface RedisCounterStoreOptions {
  /** Counters outlive their window by this much (late peeks, replicas' clock skew). Default 60 s. */
  expiryMarginMs?: number;
  /** A command that takes longer fails (and admit with it). Default SKYBRIDGE_STORE_TIMEOUT_MS (2000 ms). */
  commandTimeoutMs?: number;
  /** Default 2000 ms. */
  connectTimeoutMs?: number;
  /** What admit() does when Redis cannot answer. Default 'closed'. */
  onUnavailable?: 'closed' | 'open';
  /** Bound of the synchronous usage cache behind cached(). Default 100k keys. */
  cacheKeys?: number;
}

type Client = ReturnType<typeof CreateClient>;
const redis = lazy<typeof import('redis')>('redis');

export class RedisCounterStore implements CounterStore {
  readonly #client: Client;
  readonly #prefix: string;
  readonly #margin: number;
  readonly #failOpen: boolean;
  readonly #guard: StoreGuard;
  readonly #cache: UsageCache;
  readonly #ready: Promise<void>;
  #down = false;
  #connected = false;
  #closed = false;

  /**
   * Starts connecting in the background (retrying until Redis answers); until then admit() behaves
   * as if Redis were down. Startup need not wait: `ready()` is for tests and logs.
   */
  constructor(config: RedisConfig, options: RedisCounterStoreOptions = {}) {
    this.#prefix = config.key_prefix ?? 'skybridge:';
    this.#margin = options.expiryMarginMs ?? 60_000;
    this.#failOpen = options.onUnavailable === 'open';
    this.#cache = new UsageCache(options.cacheKeys);
    this.#client = redis().createClient(clientOptions(config, options));
    // node-redis times out only commands not yet written: one already sent to a Redis that hangs
    // would wait forever. The guard bounds it; its late reply is still read (and dropped).
    this.#guard = new StoreGuard({
      name: `counter store (Redis ${config.addr.replace(/\/\/[^@/]*@/, '//')})`,
      timeoutMs: options.commandTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
      probe: () => this.#client.ping(),
    });
    const failing = `limits fail ${this.#failOpen ? 'open' : 'closed'} until it answers`;
    this.#client.on('error', (err: Error) => {
      // Emitted on every failed reconnect attempt: say it once per outage.
      if (!this.#down && !this.#closed) {
        const what = this.#connected ? 'Redis connection lost' : 'cannot reach Redis';
        log.warn(`counter store: ${what}, ${failing}`, { addr: config.addr, error: err.message });
      }
      this.#down = true;
    });
    this.#client.on('ready', () => {
      if (this.#down) log.info('counter store: Redis connection ' + (this.#connected ? 'restored' : 'established'), { addr: config.addr });
      this.#down = false;
      this.#connected = true;
    });
    this.#ready = this.#client.connect().then(
      () => undefined,
      (err: unknown) => {
        if (!this.#closed) log.error('counter store: could not connect to Redis', { addr: config.addr, error: (err as Error).message });
      },
    );
  }

  /** Resolves once the first connection is up (or given up on). */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Connected and answering (a Redis that hangs keeps the connection but stops answering). */
  get isReady(): boolean {
    return this.#client.isReady && this.#guard.answering;
  }

  /** Why the store does not answer right now, if it does not. */
  unavailable(): string | undefined {
    if (!this.#client.isReady) return `${this.#guard.name} is not connected`;
    return this.#guard.stalled();
  }

  async admit(limits: readonly Limit[], nowMs: number): Promise<AdmitResult> {
    if (limits.length === 0) return { ok: true, usage: [] };
    const keys: string[] = [];
    const slot = new Map<string, number>();
    const args: string[] = [String(limits.length)];
    const windows: Window[] = [];
    for (const limit of limits) {
      const w = limitWindow(limit, nowMs);
      windows.push(w);
      const key = this.#key(limit, w);
      let idx = slot.get(key);
      if (idx === undefined) {
        keys.push(key);
        idx = keys.length;
        slot.set(key, idx);
      }
      args.push(String(idx), String(limit.max), kindOf(limit) === 'requests' ? '1' : '0', String(w.end + this.#margin));
    }
    let reply: string[];
    try {
      reply = await this.#guard.run(() => this.#admitScript(keys, args));
    } catch (err) {
      if (this.#failOpen) return { ok: true, usage: limits.map((l) => this.#cache.get(l.key, nowMs) ?? 0) };
      throw new CounterStoreUnavailableError(err);
    }
    const fail = Number(reply[0]);
    const usage = reply.slice(1).map(Number);
    for (let i = 0; i < limits.length; i++) this.#cache.set(limits[i].key, usage[i], windows[i]);
    if (fail < 0) return { ok: true, usage };
    return { ok: false, index: fail, usage, retryAfterMs: Math.max(0, windows[fail].end - nowMs) };
  }

  async record(adds: readonly UsageAdd[], nowMs: number): Promise<void> {
    const multi = this.#client.multi();
    const touched: { key: string; window: Window }[] = [];
    for (const add of adds) {
      const amount = addAmount(add);
      if (amount <= 0) continue;
      const w = limitWindow(add.limit, nowMs);
      const key = this.#key(add.limit, w);
      if (kindOf(add.limit) === 'budget') multi.incrByFloat(key, amount);
      else multi.incrBy(key, amount);
      multi.pExpireAt(key, w.end + this.#margin);
      touched.push({ key: add.limit.key, window: w });
    }
    if (touched.length === 0) return;
    let replies: unknown[];
    try {
      // One round trip, not a MULTI transaction: each INCRBY is atomic on its own.
      replies = (await this.#guard.run(() => multi.execAsPipeline())) as unknown[];
    } catch (err) {
      throw new CounterStoreUnavailableError(err);
    }
    for (let i = 0; i < touched.length; i++) this.#cache.set(touched[i].key, Number(replies[i * 2]), touched[i].window);
  }

  async peek(limits: readonly Limit[], nowMs: number): Promise<number[]> {
    if (limits.length === 0) return [];
    const windows = limits.map((l) => limitWindow(l, nowMs));
    let values: (string | null)[];
    try {
      values = (await this.#guard.run(() => this.#client.mGet(limits.map((l, i) => this.#key(l, windows[i]))))) as (string | null)[];
    } catch (err) {
      throw new CounterStoreUnavailableError(err);
    }
    const usage = values.map((v) => (v === null ? 0 : Number(v)));
    for (let i = 0; i < limits.length; i++) this.#cache.set(limits[i].key, usage[i], windows[i]);
    return usage;
  }

  cached(key: string): number | undefined {
    return this.#cache.get(key);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#client.isOpen) await this.#guard.close(() => this.#client.close(), () => this.#client.destroy());
    else {
      void this.#guard.close();
      this.#client.destroy();
    }
    await this.#ready;
  }

  #key(limit: Limit, w: Window): string {
    return `${this.#prefix}c:${limit.key}:${w.start}`;
  }

  async #admitScript(keys: string[], args: string[]): Promise<string[]> {
    let reply: unknown;
    try {
      reply = await this.#client.evalSha(ADMIT_SHA, { keys, arguments: args });
    } catch (err) {
      // A restarted or flushed Redis has forgotten the script: EVAL sends it and caches it again.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      reply = await this.#client.eval(ADMIT_SCRIPT, { keys, arguments: args });
    }
    // args holds 1 + 4n entries, the reply 1 + n.
    if (!Array.isArray(reply) || reply.length !== (args.length - 1) / 4 + 1) throw new Error('unexpected reply from the admit script');
    return reply.map(String);
  }
}

/** `host:port`, `[v6addr]:port`, `host` (port 6379), or a `redis://` / `rediss://` URL. */
export function parseAddr(addr: string): { host: string; port: number } | { url: string } {
  if (/^rediss?:\/\//.test(addr)) return { url: addr };
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr) ?? /^([^:]+)(?::(\d+))?$/.exec(addr);
  if (!m) throw new Error(`invalid redis addr '${addr}': expected host:port`);
  const port = m[2] === undefined ? 6379 : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid redis addr '${addr}': bad port`);
  return { host: m[1], port };
}

function clientOptions(config: RedisConfig, options: RedisCounterStoreOptions): RedisClientOptions {
  const target = parseAddr(config.addr);
  const common = {
    connectTimeout: options.connectTimeoutMs ?? 2000,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) + Math.floor(Math.random() * 50),
  };
  const base: RedisClientOptions = {
    username: config.username || undefined,
    password: config.password || undefined,
    database: config.db,
    // Fail fast while disconnected instead of queueing admissions until Redis returns.
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS },
    // While Redis hangs, replies stop and commands pile up: past this many, fail at once.
    commandsQueueMaxLength: 10_000,
  };
  if ('url' in target) return { ...base, url: target.url, socket: common };
  const socket = config.tls
    ? { ...common, host: target.host, port: target.port, tls: true as const, servername: target.host }
    : { ...common, host: target.host, port: target.port };
  return { ...base, socket };
}
