// Counters shared by every replica through one Redis. An admission is one EVALSHA of a Lua script
// (atomic: no other client's command runs in between), so N replicas admit exactly `max` requests
// per window between them. Keys: `<prefix>c:<limit key>:<window start ms>`, expiring (PEXPIREAT)
// a margin after their window ends, so Redis holds only live windows.
//
// When Redis cannot answer (down, restarting, too slow), admit() fails CLOSED by default: it throws
// CounterStoreUnavailableError, a 503 the pipeline sends as it is, because a gateway that keeps
// serving without its limits can overspend a budget without bound. `onUnavailable: 'open'` admits
// instead (with the last usage seen). record() rejects with the same error; that usage is lost.
//
// Usage is not sent on its own: record() queues it, and the next admission's script applies it
// before it counts (so this replica never admits past usage it has recorded), or a flush sends it
// alone recordDelayMs (5 ms) after the first queued add. At 1,000 requests a second that makes one
// command per request instead of seven. Other replicas see a record up to that delay later: it
// counts as in flight a few ms longer. peek() and close() flush first, so nothing queued is lost.
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

// KEYS: the distinct counter keys. ARGV[1]: number of limits n; ARGV[2]: number of adds m. Per
// limit i (0-based) at 3+4i: index into KEYS (1-based), max, '1' for a request limit (incremented on
// success), expiry (PEXPIREAT ms). Per add j at 3+4n+4j: index into KEYS, amount, '1' for a float
// (budget) add, expiry. The adds are applied first, then the admission. Returns { failing limit
// index or -1, usage of limit 0, ..., value after add 0, ... } as strings, so float budgets keep
// their precision (Lua number replies are truncated to integers).
const ADMIT_SCRIPT = `
local n, m = tonumber(ARGV[1]), tonumber(ARGV[2])
local added = {}
for j = 0, m - 1 do
  local b = 3 + 4 * n + j * 4
  local key = KEYS[tonumber(ARGV[b])]
  if ARGV[b + 2] == '1' then
    added[j + 1] = redis.call('INCRBYFLOAT', key, ARGV[b + 1])
  else
    added[j + 1] = tostring(redis.call('INCRBY', key, ARGV[b + 1]))
  end
  redis.call('PEXPIREAT', key, ARGV[b + 3])
end
local raw, val = {}, {}
for i = 0, n - 1 do
  local k = tonumber(ARGV[3 + i * 4])
  if raw[k] == nil then
    raw[k] = redis.call('GET', KEYS[k]) or '0'
    val[k] = tonumber(raw[k]) or 0
  end
end
local fail = -1
for i = 0, n - 1 do
  local b = 3 + i * 4
  if not (val[tonumber(ARGV[b])] < tonumber(ARGV[b + 1])) then
    fail = i
    break
  end
end
if fail < 0 then
  local done = {}
  for i = 0, n - 1 do
    local b = 3 + i * 4
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
  out[i + 2] = raw[tonumber(ARGV[3 + i * 4])]
end
for j = 1, m do
  out[n + 1 + j] = added[j]
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
  /** Queued usage waits this long for an admission to carry it, then goes alone. Default 5 ms. */
  recordDelayMs?: number;
}

/** A limit's key and script arguments in one window. */
interface LimitPlan {
  window: Window;
  key: string;
  expiry: string;
  max: string;
  /** '1': a request limit, incremented by an admission. */
  request: '0' | '1';
  /** Added with INCRBYFLOAT (a budget). */
  float: boolean;
}

/** One queued add, as the admit script takes it. */
interface QueuedAdd {
  key: string;
  amount: string;
  float: boolean;
  expiry: string;
  limitKey: string;
  window: Window;
}

/** The adds queued since the last command that carried some, and the record() calls waiting on them. */
class RecordBatch {
  readonly adds: QueuedAdd[] = [];
  readonly done: Promise<void>;
  resolve!: () => void;
  reject!: (err: Error) => void;
  constructor() {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

/** At most this many adds ride in one command; a fuller batch is sent at once. */
const MAX_BATCH_ADDS = 512;

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
  readonly #recordDelayMs: number;
  readonly #plans = new WeakMap<Limit, LimitPlan>();
  #batch: RecordBatch | undefined;
  #batchTimer: NodeJS.Timeout | undefined;
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
    this.#recordDelayMs = options.recordDelayMs ?? 5;
    this.#client = redis().createClient(clientOptions(config, options));
    // Every command's deadline: node-redis's own times out only commands not yet written (one
    // already sent to a Redis that hangs would wait forever). A late reply is still read (and dropped).
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
    const args: string[] = [String(limits.length), '0'];
    const windows: Window[] = [];
    for (const limit of limits) {
      const p = this.#plan(limit, nowMs);
      windows.push(p.window);
      args.push(String(slotOf(keys, slot, p.key)), p.max, p.request, p.expiry);
    }
    // Usage recorded before this admission is applied ahead of it, in the same script.
    const batch = this.#takeBatch();
    if (batch) pushAdds(batch, keys, slot, args);
    let reply: string[];
    try {
      reply = await this.#guard.run(() => this.#admitScript(keys, args));
    } catch (err) {
      batch?.reject(new CounterStoreUnavailableError(err));
      if (this.#failOpen) return { ok: true, usage: limits.map((l) => this.#cache.get(l.key, nowMs) ?? 0) };
      throw new CounterStoreUnavailableError(err);
    }
    if (batch) this.#recorded(batch, reply, limits.length);
    const fail = Number(reply[0]);
    const usage: number[] = [];
    for (let i = 0; i < limits.length; i++) {
      usage.push(Number(reply[i + 1]));
      this.#cache.set(limits[i].key, usage[i], windows[i]);
    }
    if (fail < 0) return { ok: true, usage };
    return { ok: false, index: fail, usage, retryAfterMs: Math.max(0, windows[fail].end - nowMs) };
  }

  /** Queues the adds for the next admission (or a flush recordDelayMs later); resolves once Redis has them. */
  record(adds: readonly UsageAdd[], nowMs: number): Promise<void> {
    let batch = this.#batch;
    for (const add of adds) {
      const amount = addAmount(add);
      if (amount <= 0) continue;
      const p = this.#plan(add.limit, nowMs);
      if (!batch) {
        batch = this.#batch = new RecordBatch();
        this.#batchTimer = setTimeout(() => void this.#flush(), this.#recordDelayMs);
        this.#batchTimer.unref();
      }
      batch.adds.push({ key: p.key, amount: String(amount), float: p.float, expiry: p.expiry, limitKey: add.limit.key, window: p.window });
    }
    if (!batch) return Promise.resolve();
    if (batch.adds.length >= MAX_BATCH_ADDS) void this.#flush();
    return batch.done;
  }

  async peek(limits: readonly Limit[], nowMs: number): Promise<number[]> {
    if (limits.length === 0) return [];
    // Queued usage goes first (commands run in order), so a peek sees what this replica recorded.
    if (this.#batch) void this.#flush();
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
    // Usage still queued is sent before the connection closes (its record() learns if it failed).
    await this.#flush();
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

  /** What a limit's commands take in the window of `nowMs`, built once per window (limits are a snapshot's, reused by every request). */
  #plan(limit: Limit, nowMs: number): LimitPlan {
    const known = this.#plans.get(limit);
    if (known && nowMs >= known.window.start && nowMs < known.window.end) return known;
    const window = limitWindow(limit, nowMs);
    const kind = kindOf(limit);
    const plan: LimitPlan = { window, key: this.#key(limit, window), expiry: String(window.end + this.#margin), max: String(limit.max), request: kind === 'requests' ? '1' : '0', float: kind === 'budget' };
    this.#plans.set(limit, plan);
    return plan;
  }

  #takeBatch(): RecordBatch | undefined {
    const batch = this.#batch;
    if (!batch) return undefined;
    this.#batch = undefined;
    clearTimeout(this.#batchTimer);
    return batch;
  }

  /** Sends the queued usage on its own (no admission came to carry it). */
  async #flush(): Promise<void> {
    const batch = this.#takeBatch();
    if (!batch) return;
    const keys: string[] = [];
    const args = ['0', '0'];
    pushAdds(batch, keys, new Map(), args);
    let reply: string[];
    try {
      reply = await this.#guard.run(() => this.#admitScript(keys, args));
    } catch (err) {
      // The record() calls waiting on it learn it failed (that usage is lost); a flush never throws.
      batch.reject(new CounterStoreUnavailableError(err));
      return;
    }
    this.#recorded(batch, reply, 0);
  }

  /** The values after the adds (the reply's entries after the n limits') go to the cache. */
  #recorded(batch: RecordBatch, reply: string[], n: number): void {
    const adds = batch.adds;
    for (let j = 0; j < adds.length; j++) this.#cache.set(adds[j].limitKey, Number(reply[1 + n + j]), adds[j].window);
    batch.resolve();
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
    // args holds 2 + 4(n + m) entries, the reply 1 + n + m.
    if (!Array.isArray(reply) || reply.length !== (args.length - 2) / 4 + 1) throw new Error('unexpected reply from the admit script');
    return reply.map(String);
  }
}

/** The 1-based index of `key` in KEYS, added when new. */
function slotOf(keys: string[], slot: Map<string, number>, key: string): number {
  let idx = slot.get(key);
  if (idx === undefined) {
    keys.push(key);
    idx = keys.length;
    slot.set(key, idx);
  }
  return idx;
}

/** Appends a batch's adds to the admit script's KEYS and ARGV, and their count to ARGV[2]. */
function pushAdds(batch: RecordBatch, keys: string[], slot: Map<string, number>, args: string[]): void {
  for (const a of batch.adds) args.push(String(slotOf(keys, slot, a.key)), a.amount, a.float ? '1' : '0', a.expiry);
  args[1] = String(batch.adds.length);
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
    // No per-command timeout of node-redis's: it costs an AbortSignal.timeout per command (a timer,
    // and an exception built when it fires 2 s later, long after the answer); the guard's deadline
    // covers every command, written or not, and a command it failed stays queued only until the
    // socket drains or closes (bounded by commandsQueueMaxLength).
    // While Redis hangs, replies stop and commands pile up: past this many, fail at once.
    commandsQueueMaxLength: 10_000,
  };
  if ('url' in target) return { ...base, url: target.url, socket: common };
  const socket = config.tls
    ? { ...common, host: target.host, port: target.port, tls: true as const, servername: target.host }
    : { ...common, host: target.host, port: target.port };
  return { ...base, socket };
}
