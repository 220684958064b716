// The response cache on Redis Stack / Redis with RediSearch (the spec's `vector_store` type
// `redis`, as the reference gateway keeps it): one hash per entry under `<namespace>:<id>`, one
// RediSearch index per namespace over them (TAG fields for scope, request hash and cache key, NUMERIC
// expires_at, and in semantic mode a FLOAT32 COSINE HNSW vector field), KNN queries filtered by
// scope and expiry, and PEXPIREAT on every hash so Redis removes expired entries by itself. Every
// replica pointed at the same Redis shares the entries.
//
// Scope and cache key are free text; RediSearch TAG queries would need every punctuation character
// escaped, so the indexed tags are hex digests of them and the text itself is kept beside (and
// compared on read).
//
// Plain Redis (no search module, the common case) serves direct-only mode (dimension 1), which
// needs no vectors and no index: a pointer `<namespace>:direct:<scope tag>:<hash>` names the entry,
// a sorted set `<namespace>:key:<cache key tag>` lists the entries of a cache key (for
// clear-by-key), and every key expires with its entry. Semantic mode there is refused at init, with
// the reason, so the plugin's status says it.
//
// Every command runs under the store deadline (StoreGuard): a Redis that stops answering without
// closing the connection turns lookups into misses and writes into no-ops after the deadline, and
// at once while it stays silent; `unavailable()` says so in the plugin's status and /health.
import { createHash } from 'node:crypto';
import type { RedisClientType } from 'redis';
import { lazy } from '../lazy.ts';
import { DEFAULT_STORE_TIMEOUT_MS, StoreGuard } from '../store-guard.ts';
import { parseAddr } from '../governance/counters/redis.ts';
import { DimensionMismatchError, type CacheEntry, type CacheStore, type SemanticMatch } from './store.ts';
import { optBool, optInt, optString, reqString, StoreConfigError } from './store-config.ts';

const redis = lazy<typeof import('redis')>('redis');

export interface RedisStoreConfig {
  /** host:port (or a redis:// / rediss:// URL). */
  addr: string;
  username?: string;
  password?: string;
  db?: number;
  tls?: boolean;
  /** Per command; default SKYBRIDGE_STORE_TIMEOUT_MS, 2000 ms (a search over a large index takes a few ms). */
  commandTimeoutMs?: number;
}

/** `vector_store.config` of type redis: addr, username, password, db (env.VAR allowed); other reference fields are accepted and unused. */
export function parseRedisStoreConfig(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = process.env): RedisStoreConfig {
  const cfg = raw ?? {};
  const addr = reqString(cfg, 'addr', env);
  try {
    parseAddr(addr);
  } catch (err) {
    throw new StoreConfigError('addr', (err as Error).message.replace(/^invalid redis addr '[^']*': /, ''));
  }
  return {
    addr,
    username: optString(cfg, 'username', env) || undefined,
    password: optString(cfg, 'password', env) || undefined,
    db: optInt(cfg, 'db', 0, 15, env),
    tls: optBool(cfg, 'tls'),
  };
}

/** Scopes with fewer entries are brute-forced; larger ones searched through HNSW (hybridPolicy). */
const BRUTE_FORCE_MAX = 1000;
/** Scope and index sizes only choose the search strategy: a few seconds old is fine. */
const SIZE_CACHE_MS = 5000;
const SIZE_CACHE_MAX = 10_000;

/** How long the first commands wait for the first connection. */
const FIRST_CONNECT_WAIT_MS = 5000;

const FIELDS = ['id', 'scope', 'cache_key', 'hash', 'value', 'created_at', 'expires_at'] as const;
/** Deletes go in batches of this many keys. */
const BATCH = 500;

function tag(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

function blob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function isUnknownIndex(err: unknown): boolean {
  return /unknown index|no such index/i.test((err as Error).message ?? '');
}

/** A RESP2 flat [k, v, k, v] array as an object. */
function pairs(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (let i = 0; i + 1 < list.length; i += 2) out[String(list[i])] = list[i + 1];
  return out;
}

function toEntry(fields: Record<string, unknown>): CacheEntry | undefined {
  if (typeof fields.id !== 'string' || typeof fields.value !== 'string') return undefined;
  return {
    id: fields.id,
    scope: String(fields.scope ?? ''),
    cacheKey: String(fields.cache_key ?? ''),
    hash: String(fields.hash ?? ''),
    value: fields.value,
    createdAt: Number(fields.created_at),
    expiresAt: Number(fields.expires_at),
  };
}

/** The vector field's dimension in an FT.INFO reply, 1 when the index has none (direct-only). */
export function indexDimension(info: unknown[]): number {
  const attrs = info[info.indexOf('attributes') + 1];
  if (!Array.isArray(attrs)) return 1;
  for (const a of attrs) {
    const f = pairs(a);
    if (f.type === 'VECTOR') return Number(f.dim);
  }
  return 1;
}

/** Glob metacharacters escaped, for SCAN MATCH. */
const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

export class RedisCacheStore implements CacheStore {
  readonly type = 'redis' as const;
  private readonly client: RedisClientType<Record<string, never>, Record<string, never>, Record<string, never>, 2>;
  private readonly ready: Promise<unknown>;
  /** Namespaces initialised here, with their dimension (a search needs to know if a vector field exists). */
  private readonly dims = new Map<string, number>();
  /** Entries per scope, for hybridPolicy. */
  private readonly scopeSizes = new Map<string, { n: number; at: number }>();
  /** host:port as configured, for messages (never the password). */
  private readonly addr: string;
  private everReady = false;
  private firstWait: Promise<void> | undefined;
  /** Set once init found no search module: direct-only entries without an index. */
  private plain = false;
  private readonly guard: StoreGuard;

  constructor(cfg: RedisStoreConfig) {
    this.addr = cfg.addr.replace(/\/\/[^@/]*@/, '//');
    const target = parseAddr(cfg.addr);
    const timeoutMs = cfg.commandTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    const socket = {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000) + Math.floor(Math.random() * 50),
      ...('url' in target ? {} : { host: target.host, port: target.port, ...(cfg.tls && { tls: true as const, servername: target.host }) }),
    };
    this.client = redis().createClient({
      ...('url' in target && { url: target.url }),
      socket,
      username: cfg.username,
      password: cfg.password,
      database: cfg.db ?? 0,
      // RESP2: FT.SEARCH / FT.INFO replies are flat arrays in every RediSearch version.
      RESP: 2,
      // A lookup while Redis is away fails at once (a miss) instead of waiting for its return.
      disableOfflineQueue: true,
      commandOptions: { timeout: timeoutMs },
      // While Redis hangs, replies stop and commands would pile up: past this many, fail at once.
      commandsQueueMaxLength: 10_000,
    }) as typeof this.client;
    // node-redis times out only commands not yet written: one already sent to a Redis that hangs
    // would wait forever. The guard bounds it; its late reply is still read (and dropped).
    this.guard = new StoreGuard({ name: `cache store (Redis ${this.addr})`, timeoutMs, probe: () => this.client.ping() });
    // Failed reconnects are reported through the commands that fail meanwhile.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => (this.everReady = true));
    this.ready = this.client.connect();
    // Settled by connected() or close(); a failure here is reported by the commands.
    this.ready.catch(() => undefined);
  }

  /** Until the first connection, commands wait for it this long, then fail (never forever). */
  private async connected(): Promise<void> {
    if (this.client.isReady) return;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`cache store: cannot reach Redis at ${this.addr}`)), FIRST_CONNECT_WAIT_MS);
    });
    try {
      await Promise.race([this.ready, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async cmd(args: (string | Buffer)[]): Promise<unknown> {
    // Once connected, a command during an outage fails at once (no offline queue): a miss. Before
    // that, the first commands wait once for the connection; after that wait failed, at once too.
    if (!this.everReady) await (this.firstWait ??= this.connected());
    return this.guard.run(() => this.client.sendCommand(args));
  }

  /** A MULTI transaction under the deadline, like any command. */
  private async exec(multi: { exec(): Promise<unknown> }): Promise<unknown> {
    if (!this.everReady) await (this.firstWait ??= this.connected());
    return this.guard.run(() => multi.exec());
  }

  unavailable(): string | undefined {
    if (this.everReady && !this.client.isReady) return `cache store (Redis ${this.addr}) is not connected`;
    return this.guard.stalled();
  }

  async init(namespace: string, dimension: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.existingDimension(namespace, dimension);
      if (existing !== undefined) {
        if (existing !== dimension) throw new DimensionMismatchError(namespace, existing, dimension);
        this.dims.set(namespace, dimension);
        return;
      }
      const schema = ['scope_tag', 'TAG', 'hash', 'TAG', 'key_tag', 'TAG', 'expires_at', 'NUMERIC', 'SORTABLE'];
      if (dimension > 1) schema.push('vector', 'VECTOR', 'HNSW', '6', 'TYPE', 'FLOAT32', 'DIM', String(dimension), 'DISTANCE_METRIC', 'COSINE');
      try {
        await this.cmd(['FT.CREATE', namespace, 'ON', 'HASH', 'PREFIX', '1', `${namespace}:`, 'SCHEMA', ...schema]);
        this.dims.set(namespace, dimension);
        return;
      } catch (err) {
        if (/db != 0/.test((err as Error).message)) throw new StoreConfigError('db', 'RediSearch keeps indexes in database 0 only; set db to 0');
        // Another replica created it first: check its dimension on the next turn.
        if (attempt > 0 || !/already exists/i.test((err as Error).message)) throw err;
      }
    }
  }

  private async existingDimension(namespace: string, dimension: number): Promise<number | undefined> {
    try {
      return indexDimension((await this.cmd(['FT.INFO', namespace])) as unknown[]);
    } catch (err) {
      if (isUnknownIndex(err)) return undefined;
      if (/unknown command/i.test((err as Error).message)) {
        // Direct-only mode needs no index (spec rule 6: a store that accepts entries without vectors).
        if (dimension === 1) {
          this.plain = true;
          return 1;
        }
        throw new Error(
          `cache store: the Redis server at ${this.addr} has no search module (FT.* commands), which semantic mode (dimension ${dimension}) needs: use Redis Stack, Redis 8 or Valkey with valkey-search, or direct-only mode (dimension 1, no provider)`,
        );
      }
      throw err;
    }
  }

  private pointer(namespace: string, scope: string, hash: string): string {
    return `${namespace}:direct:${tag(scope)}:${hash.toLowerCase()}`;
  }

  private keySet(namespace: string, cacheKey: string): string {
    return `${namespace}:key:${tag(cacheKey)}`;
  }

  private async plainGet(namespace: string, scope: string, hash: string, now: number): Promise<CacheEntry | undefined> {
    const id = await this.cmd(['GET', this.pointer(namespace, scope, hash)]);
    if (typeof id !== 'string') return undefined;
    const e = toEntry(pairs(await this.cmd(['HGETALL', `${namespace}:${id}`])));
    return e && e.scope === scope && e.hash === hash.toLowerCase() && e.expiresAt > now ? e : undefined;
  }

  private async plainPut(namespace: string, entry: CacheEntry, fields: (string | Buffer)[]): Promise<void> {
    const key = `${namespace}:${entry.id}`;
    const pointer = this.pointer(namespace, entry.scope, entry.hash);
    const set = this.keySet(namespace, entry.cacheKey);
    const at = String(entry.expiresAt);
    // One live entry per request hash: the one the pointer named is replaced.
    const old = await this.cmd(['GET', pointer]);
    const older = typeof old === 'string' && old !== entry.id ? [`${namespace}:${old}`] : [];
    await this.exec(
      this.client
        .multi()
        .addCommand(['DEL', key, ...older])
        .addCommand(['HSET', key, ...fields])
        .addCommand(['PEXPIREAT', key, at])
        .addCommand(['SET', pointer, entry.id, 'PXAT', at])
        .addCommand(['ZADD', set, at, entry.id])
        .addCommand(['ZREMRANGEBYSCORE', set, '-inf', `(${Date.now()}`]),
    );
    // The set lives as long as its longest-lived entry.
    const last = (await this.cmd(['ZRANGE', set, '-1', '-1', 'WITHSCORES'])) as unknown[];
    if (last.length === 2) await this.cmd(['PEXPIREAT', set, String(last[1])]);
  }

  private async plainDeleteByKey(namespace: string, cacheKey: string): Promise<number> {
    const set = this.keySet(namespace, cacheKey);
    const ids = ((await this.cmd(['ZRANGE', set, '0', '-1'])) as unknown[]).map(String);
    let removed = 0;
    for (let i = 0; i < ids.length; i += BATCH) removed += Number(await this.cmd(['DEL', ...ids.slice(i, i + BATCH).map((id) => `${namespace}:${id}`)]));
    await this.cmd(['DEL', set]);
    return removed;
  }

  private async plainDrop(namespace: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = (await this.cmd(['SCAN', cursor, 'MATCH', `${globEscape(namespace)}:*`, 'COUNT', '1000'])) as [string, string[]];
      if (keys.length) await this.cmd(['DEL', ...keys]);
      cursor = String(next);
    } while (cursor !== '0');
  }

  private async search(namespace: string, query: string, extra: (string | Buffer)[] = []): Promise<Record<string, unknown>[]> {
    const reply = (await this.cmd(['FT.SEARCH', namespace, query, ...extra, 'DIALECT', '2'])) as unknown[];
    const out: Record<string, unknown>[] = [];
    for (let i = 1; i + 1 < reply.length; i += 2) out.push(pairs(reply[i + 1]));
    return out;
  }

  async getDirect(namespace: string, scope: string, hash: string, now: number): Promise<CacheEntry | undefined> {
    // Request hashes are hex: safe in a TAG query as they are.
    if (!/^[0-9a-f]+$/i.test(hash)) return undefined;
    if (this.plain) return this.plainGet(namespace, scope, hash, now);
    const rows = await this.search(namespace, `@scope_tag:{${tag(scope)}} @hash:{${hash.toLowerCase()}} @expires_at:[(${now} +inf]`, [
      'RETURN', String(FIELDS.length), ...FIELDS, 'LIMIT', '0', '10',
    ]);
    let best: CacheEntry | undefined;
    for (const row of rows) {
      const e = toEntry(row);
      if (e && e.scope === scope && e.expiresAt > now && (!best || e.createdAt > best.createdAt)) best = e;
    }
    return best;
  }

  async nearest(namespace: string, scope: string, vector: Float32Array, minSimilarity: number, now: number): Promise<SemanticMatch | undefined> {
    if (this.plain || this.dims.get(namespace) === 1) return undefined;
    const rows = await this.search(namespace, `(@scope_tag:{${tag(scope)}} @expires_at:[(${now} +inf])=>[KNN 1 @vector $vec${await this.hybridPolicy(namespace, scope)} AS distance]`, [
      'PARAMS', '2', 'vec', blob(vector), 'SORTBY', 'distance', 'ASC', 'RETURN', String(FIELDS.length + 1), ...FIELDS, 'distance', 'LIMIT', '0', '1',
    ]);
    const row = rows[0];
    if (!row) return undefined;
    const entry = toEntry(row);
    if (!entry || entry.scope !== scope || entry.expiresAt <= now) return undefined;
    // COSINE distance is 1 - cosine similarity.
    const similarity = Math.min(1, Math.max(0, 1 - Number(row.distance)));
    return similarity >= minSimilarity ? { entry, similarity } : undefined;
  }

  /**
   * How RediSearch combines the scope filter with the HNSW search. Its own choice brute-forces
   * every vector of the scope once the scope is more than a few percent of the index (~50 ms p99
   * at 100,000 entries of 1536 dimensions); walking the HNSW graph in batches finds the nearest
   * entry of a large scope in about a millisecond, while a small scope is cheapest brute-forced
   * (batches would walk most of the graph, and may give up). Scope sizes are cached for a while.
   */
  private async hybridPolicy(namespace: string, scope: string): Promise<string> {
    const key = `${namespace}\0${scope}`;
    const now = Date.now();
    let known = this.scopeSizes.get(key);
    if (!known || now - known.at >= SIZE_CACHE_MS) {
      const reply = (await this.cmd(['FT.SEARCH', namespace, `@scope_tag:{${tag(scope)}}`, 'LIMIT', '0', '0', 'DIALECT', '2'])) as unknown[];
      if (this.scopeSizes.size >= SIZE_CACHE_MAX) this.scopeSizes.clear();
      known = { n: Number(reply[0]), at: now };
      this.scopeSizes.set(key, known);
    }
    // Batch size: RediSearch derives it from the scope's share of the index.
    return known.n < BRUTE_FORCE_MAX ? ' HYBRID_POLICY ADHOC_BF' : ' HYBRID_POLICY BATCHES';
  }

  async put(namespace: string, entry: CacheEntry): Promise<void> {
    if (!/^[0-9a-f]+$/i.test(entry.hash)) throw new Error('cache entry hash must be hex');
    const key = `${namespace}:${entry.id}`;
    const fields: (string | Buffer)[] = [
      'id', entry.id, 'scope', entry.scope, 'scope_tag', tag(entry.scope), 'cache_key', entry.cacheKey, 'key_tag', tag(entry.cacheKey),
      'hash', entry.hash.toLowerCase(), 'value', entry.value, 'created_at', String(entry.createdAt), 'expires_at', String(entry.expiresAt),
    ];
    const dim = this.dims.get(namespace);
    if (entry.vector && dim !== undefined && entry.vector.length !== dim) {
      throw new Error(`vector of dimension ${entry.vector.length} written to namespace ${namespace} of dimension ${dim}`);
    }
    if (this.plain) return this.plainPut(namespace, entry, fields);
    if (entry.vector) fields.push('vector', blob(entry.vector));
    // One live entry per request hash: an older one is replaced, not shadowed.
    const same = (await this.cmd(['FT.SEARCH', namespace, `@scope_tag:{${tag(entry.scope)}} @hash:{${entry.hash.toLowerCase()}}`, 'NOCONTENT', 'LIMIT', '0', '100', 'DIALECT', '2'])) as unknown[];
    const older = same.slice(1).map(String).filter((k) => k !== key);
    // One transaction: a replica never sees the hash without its expiry. DEL first: a replaced
    // entry keeps no field of the old one (a vector it no longer has).
    await this.exec(this.client.multi().addCommand(['DEL', key, ...older]).addCommand(['HSET', key, ...fields]).addCommand(['PEXPIREAT', key, String(entry.expiresAt)]));
  }

  async deleteById(namespace: string, id: string): Promise<number> {
    return Number(await this.cmd(['DEL', `${namespace}:${id}`]));
  }

  /** Deletes every key a query matches, a batch at a time. */
  private async deleteMatching(namespace: string, query: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const reply = (await this.cmd(['FT.SEARCH', namespace, query, 'NOCONTENT', 'LIMIT', '0', String(BATCH), 'DIALECT', '2'])) as unknown[];
      const keys = reply.slice(1).map(String);
      if (keys.length === 0) return removed;
      const n = Number(await this.cmd(['DEL', ...keys]));
      removed += n;
      // Keys the index still lists but that are gone (expired meanwhile): stop rather than spin.
      if (n === 0) return removed;
    }
  }

  async deleteByKey(namespace: string, cacheKey: string): Promise<number> {
    // Scopes may have shrunk: their sizes are counted again.
    this.scopeSizes.clear();
    if (this.plain) return this.plainDeleteByKey(namespace, cacheKey);
    try {
      return await this.deleteMatching(namespace, `@key_tag:{${tag(cacheKey)}}`);
    } catch (err) {
      if (isUnknownIndex(err)) return 0;
      throw err;
    }
  }

  async sweep(namespace: string, now: number): Promise<number> {
    // Plain Redis removes expired entries by itself (every key has its expiry).
    if (this.plain) return 0;
    try {
      return await this.deleteMatching(namespace, `@expires_at:[-inf ${now}]`);
    } catch (err) {
      if (isUnknownIndex(err)) return 0;
      throw err;
    }
  }

  async drop(namespace: string): Promise<void> {
    if (this.plain) {
      await this.plainDrop(namespace);
      this.dims.delete(namespace);
      return;
    }
    try {
      // DD: the entries go with the index.
      await this.cmd(['FT.DROPINDEX', namespace, 'DD']);
      this.scopeSizes.clear();
    } catch (err) {
      if (!isUnknownIndex(err)) throw err;
    }
    this.dims.delete(namespace);
  }

  async close(): Promise<void> {
    if (this.client.isReady) await this.guard.close(() => this.client.close(), () => this.client.destroy());
    else {
      void this.guard.close();
      this.client.destroy();
    }
  }
}

/** Opens a store from `vector_store.config`; init() then creates or checks each namespace. */
export function openRedisCacheStore(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = process.env, timeoutMs?: number): RedisCacheStore {
  return new RedisCacheStore({ ...parseRedisStoreConfig(raw, env), ...(timeoutMs !== undefined && { commandTimeoutMs: timeoutMs }) });
}
