// The response cache on PostgreSQL with pgvector (`vector_store` type `postgres`, configured like
// the postgres `logs_store`): one table per namespace, `vector(d)` embeddings under an HNSW cosine
// index, exact lookups by (scope, hash), and nearest-neighbour lookups by `<=>` filtered by scope
// and expiry. Direct-only namespaces (dimension 1) have no vector column, so they work on a server
// without pgvector. Every replica on the same database shares the entries.
//
// Lookups and writes run under the store deadline (StoreGuard; SKYBRIDGE_STORE_TIMEOUT_MS), the
// clears and the sweep under the statement timeout: a server that stops answering without closing
// its connections turns lookups into misses after the deadline, and at once while it stays silent.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { lazy } from '../lazy.ts';
import { DEFAULT_STORE_TIMEOUT_MS, StoreGuard } from '../store-guard.ts';
import { DimensionMismatchError, type CacheEntry, type CacheStore, type SemanticMatch } from './store.ts';
import { optInt, optString, reqString, StoreConfigError } from './store-config.ts';
import { sslOption, SSL_MODES, type PgConnectionConfig } from '../config/postgres.ts';

const pgModule = lazy<typeof pg>('pg');

/** The pgvector vector_store's connection: the postgres logs_store's fields (statement_timeout_ms default 5 s). */
export type PgStoreConfig = PgConnectionConfig;


/** `vector_store.config` of type postgres: the postgres logs_store's fields (env.VAR allowed). */
export function parsePgStoreConfig(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = process.env): PgStoreConfig {
  const cfg = raw ?? {};
  const ssl = optString(cfg, 'ssl_mode', env);
  if (ssl !== undefined && ssl !== '' && !(SSL_MODES as readonly string[]).includes(ssl)) throw new StoreConfigError('ssl_mode', `must be one of ${SSL_MODES.join(', ')}`);
  const port = optInt(cfg, 'port', 1, 65535, env);
  if (port === undefined) throw new StoreConfigError('port', 'is required');
  return {
    host: reqString(cfg, 'host', env),
    port,
    user: reqString(cfg, 'user', env),
    password: optString(cfg, 'password', env) || undefined,
    db_name: reqString(cfg, 'db_name', env),
    ssl_mode: ssl || undefined,
    max_open_conns: optInt(cfg, 'max_open_conns', 2, 1000, env),
  };
}

/** pgvector's HNSW indexes take vectors of at most this many dimensions; larger ones are scanned. */
const HNSW_MAX_DIMENSIONS = 2000;
/** Creating a namespace (extension, table, indexes) may wait for another replica's: longer than a lookup. */
const INIT_TIMEOUT_MS = 10_000;
/** Any constant: serialises namespace creation by replicas starting together. */
const INIT_LOCK = 7_301_442_211;

/** The table of a namespace: readable, within PostgreSQL's 63-byte names, and distinct per namespace. */
export function tableName(namespace: string): string {
  const slug = namespace.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 30);
  return `skybridge_cache_${slug}_${createHash('sha256').update(namespace).digest('hex').slice(0, 10)}`;
}

function vectorLiteral(v: Float32Array): string {
  return `[${Array.from(v).join(',')}]`;
}

type Row = Record<string, unknown>;

function toEntry(row: Row): CacheEntry {
  return {
    id: String(row.id),
    scope: String(row.scope),
    cacheKey: String(row.cache_key),
    hash: String(row.hash),
    value: String(row.value),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

function isUndefinedTable(err: unknown): boolean {
  return (err as { code?: string }).code === '42P01';
}

const COLUMNS = 'id, scope, cache_key, hash, value, created_at, expires_at';

export class PgCacheStore implements CacheStore {
  readonly type = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly dims = new Map<string, number>();
  private closed = false;
  private readonly guard: StoreGuard;
  /** The deadline of the clears and the sweep: the server's statement timeout, and a second to say so. */
  private readonly slowMs: number;

  constructor(cfg: PgStoreConfig, timeoutMs = DEFAULT_STORE_TIMEOUT_MS) {
    const timeout = cfg.statement_timeout_ms ?? 5000;
    this.slowMs = timeout + 1000;
    this.guard = new StoreGuard({ name: `cache store (PostgreSQL ${cfg.host}:${cfg.port})`, timeoutMs, probe: () => this.pool.query('SELECT 1') });
    this.pool = new (pgModule().Pool)({
      host: cfg.host,
      port: Number(cfg.port),
      user: cfg.user,
      password: cfg.password,
      database: cfg.db_name,
      ssl: sslOption(cfg.ssl_mode, 'vector_store.config'),
      max: cfg.max_open_conns ?? 20,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 5_000,
      statement_timeout: timeout,
      query_timeout: timeout + 5_000,
      application_name: 'skybridge-cache',
      // pgvector >= 0.8: a filtered HNSW scan keeps going until it finds a row of the scope instead
      // of answering from the first ef_search candidates only (which may all be other scopes').
      // Set at connection start: a placeholder until the extension loads, so harmless without it.
      options: '-c hnsw.iterative_scan=strict_order',
    });
    // An idle connection dropped by the server must not crash the process; the pool reconnects.
    this.pool.on('error', () => undefined);
  }

  private async query(sql: string, params: unknown[] = [], timeoutMs?: number): Promise<pg.QueryResult<Row>> {
    if (this.closed) throw new Error('cache store closed');
    // A query abandoned at the deadline keeps its connection until query_timeout, which then drops it.
    return this.guard.run(() => this.pool.query<Row>(sql, params), timeoutMs);
  }

  unavailable(): string | undefined {
    return this.guard.stalled();
  }

  init(namespace: string, dimension: number): Promise<void> {
    return this.guard.run(() => this.create(namespace, dimension), Math.max(this.guard.timeoutMs, INIT_TIMEOUT_MS));
  }

  private async create(namespace: string, dimension: number): Promise<void> {
    const table = tableName(namespace);
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [INIT_LOCK]);
      const existing = await this.existingDimension(client, table);
      if (existing !== undefined) {
        await client.query('COMMIT');
        if (existing !== dimension) throw new DimensionMismatchError(namespace, existing, dimension);
        this.dims.set(namespace, dimension);
        return;
      }
      const t = pgModule().escapeIdentifier(table);
      if (dimension > 1) {
        try {
          await client.query('CREATE EXTENSION IF NOT EXISTS vector');
        } catch (err) {
          throw new Error(`vector_store: the pgvector extension is not available in database (CREATE EXTENSION vector: ${(err as Error).message}); install pgvector or have an administrator run CREATE EXTENSION vector`);
        }
      }
      await client.query(`CREATE TABLE ${t} (
        id text PRIMARY KEY,
        scope text NOT NULL,
        cache_key text NOT NULL,
        hash text NOT NULL,
        value text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL${dimension > 1 ? `,\n        embedding vector(${dimension})` : ''}
      )`);
      await client.query(`COMMENT ON TABLE ${t} IS ${pgModule().escapeLiteral(`skybridge response cache, namespace ${namespace}`)}`);
      await client.query(`CREATE INDEX ${pgModule().escapeIdentifier(`${table}_direct`)} ON ${t} (scope, hash)`);
      await client.query(`CREATE INDEX ${pgModule().escapeIdentifier(`${table}_key`)} ON ${t} (cache_key)`);
      await client.query(`CREATE INDEX ${pgModule().escapeIdentifier(`${table}_exp`)} ON ${t} (expires_at)`);
      if (dimension > 1 && dimension <= HNSW_MAX_DIMENSIONS) {
        await client.query(`CREATE INDEX ${pgModule().escapeIdentifier(`${table}_vec`)} ON ${t} USING hnsw (embedding vector_cosine_ops)`);
      }
      await client.query('COMMIT');
      this.dims.set(namespace, dimension);
    } catch (err) {
      failed = err as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // A connection whose query failed (timed out, perhaps still running) is closed, not reused.
      client.release(failed);
    }
  }

  /** The namespace table's embedding dimension (its typmod), 1 without the column, undefined without the table. */
  private async existingDimension(client: pg.PoolClient, table: string): Promise<number | undefined> {
    const rel = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [pgModule().escapeIdentifier(table)]);
    if (!rel.rows[0]?.oid) return undefined;
    const col = await client.query<{ atttypmod: number }>(
      "SELECT atttypmod FROM pg_attribute WHERE attrelid = $1::oid AND attname = 'embedding' AND NOT attisdropped",
      [rel.rows[0].oid],
    );
    return col.rows[0] ? col.rows[0].atttypmod : 1;
  }

  async getDirect(namespace: string, scope: string, hash: string, now: number): Promise<CacheEntry | undefined> {
    const t = pgModule().escapeIdentifier(tableName(namespace));
    const r = await this.query(`SELECT ${COLUMNS} FROM ${t} WHERE scope = $1 AND hash = $2 AND expires_at > $3 ORDER BY created_at DESC LIMIT 1`, [scope, hash, now]);
    return r.rows[0] ? toEntry(r.rows[0]) : undefined;
  }

  async nearest(namespace: string, scope: string, vector: Float32Array, minSimilarity: number, now: number): Promise<SemanticMatch | undefined> {
    if (this.dims.get(namespace) === 1) return undefined;
    const t = pgModule().escapeIdentifier(tableName(namespace));
    const r = await this.query(
      `SELECT ${COLUMNS}, embedding <=> $1::vector AS distance FROM ${t}
       WHERE scope = $2 AND expires_at > $3 AND embedding IS NOT NULL ORDER BY embedding <=> $1::vector LIMIT 1`,
      [vectorLiteral(vector), scope, now],
    );
    const row = r.rows[0];
    if (!row) return undefined;
    // Cosine distance is 1 - cosine similarity.
    const similarity = Math.min(1, Math.max(0, 1 - Number(row.distance)));
    return similarity >= minSimilarity ? { entry: toEntry(row), similarity } : undefined;
  }

  async put(namespace: string, entry: CacheEntry): Promise<void> {
    const t = pgModule().escapeIdentifier(tableName(namespace));
    const dim = this.dims.get(namespace);
    if (entry.vector && dim !== undefined && entry.vector.length !== dim) {
      throw new Error(`vector of dimension ${entry.vector.length} written to namespace ${namespace} of dimension ${dim}`);
    }
    const withVector = dim !== 1;
    const params: unknown[] = [entry.id, entry.scope, entry.cacheKey, entry.hash, entry.value, entry.createdAt, entry.expiresAt];
    if (withVector) params.push(entry.vector ? vectorLiteral(entry.vector) : null);
    // One live entry per request hash: an older one is replaced, not shadowed (one statement).
    await this.query(
      `WITH older AS (DELETE FROM ${t} WHERE scope = $2 AND hash = $4 AND id <> $1)
       INSERT INTO ${t} (${COLUMNS}${withVector ? ', embedding' : ''}) VALUES ($1, $2, $3, $4, $5, $6, $7${withVector ? ', $8::vector' : ''})
       ON CONFLICT (id) DO UPDATE SET scope = EXCLUDED.scope, cache_key = EXCLUDED.cache_key, hash = EXCLUDED.hash, value = EXCLUDED.value,
         created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at${withVector ? ', embedding = EXCLUDED.embedding' : ''}`,
      params,
    );
  }

  private async delete(namespace: string, where: string, params: unknown[], timeoutMs = this.slowMs): Promise<number> {
    try {
      return (await this.query(`DELETE FROM ${pgModule().escapeIdentifier(tableName(namespace))} WHERE ${where}`, params, timeoutMs)).rowCount ?? 0;
    } catch (err) {
      if (isUndefinedTable(err)) return 0;
      throw err;
    }
  }

  deleteById(namespace: string, id: string): Promise<number> {
    return this.delete(namespace, 'id = $1', [id], this.guard.timeoutMs);
  }

  deleteByKey(namespace: string, cacheKey: string): Promise<number> {
    return this.delete(namespace, 'cache_key = $1', [cacheKey]);
  }

  sweep(namespace: string, now: number): Promise<number> {
    return this.delete(namespace, 'expires_at <= $1', [now]);
  }

  async drop(namespace: string): Promise<void> {
    await this.query(`DROP TABLE IF EXISTS ${pgModule().escapeIdentifier(tableName(namespace))}`, [], this.slowMs);
    this.dims.delete(namespace);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Connections busy on a silent server are dropped by query_timeout; pool.end() waits for them.
    await this.guard.close();
    await this.pool.end();
  }
}

export function openPgCacheStore(raw: Record<string, unknown> | undefined, env: NodeJS.ProcessEnv = process.env, timeoutMs?: number): PgCacheStore {
  return new PgCacheStore(parsePgStoreConfig(raw, env), timeoutMs);
}
