// The shared log store: PostgreSQL through a `pg` pool, one database for every replica. Queries run
// under a statement timeout so a slow search cannot hold the API (or a pool connection) for long.
// Every call also runs under a deadline (StoreGuard): a server that stops answering without closing
// its connections never cancels anything, so the client gives up: calls on the request path (async
// job submits and fetches) after SKYBRIDGE_STORE_TIMEOUT_MS, the rest a second after the statement
// timeout; then every call fails at once until the server answers again.
import type pg from 'pg';
import { lazy } from '../lazy.ts';
import { DEFAULT_STORE_TIMEOUT_MS, StoreGuard } from '../store-guard.ts';
import type { Dialect, QueryOptions, Row, RowsToInsert, SqlDriver } from './driver.ts';
import { MIGRATIONS_TABLE, type Migration } from './migrations.ts';
import { SqlLogStore } from './sql-store.ts';
import { log } from '../log.ts';
import { sslOption, type PgConnectionConfig } from '../config/postgres.ts';

export { sslOption };

const DIALECT: Dialect = { name: 'postgres', ilike: 'ILIKE', double: 'DOUBLE PRECISION' };
/** Any constant: serialises schema migrations of replicas starting together. */
const MIGRATION_LOCK = 7_301_442_113;

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** The postgres logs_store's connection (statement_timeout_ms default 10 s). */
export type PostgresLogsConfig = PgConnectionConfig;

const pgModule = lazy<typeof pg>('pg');

// int8 (counts, sums of integers, timestamps in ms) and numeric (sums) as numbers: every value the
// store keeps fits a double exactly or is a cost/token sum where double precision is enough.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return pgModule().types.getTypeParser(oid, format);
  },
};

/** `?` placeholders → `$1..$n` (quoted text is left alone). */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let i = 0;
  let quoted = false;
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++i}` : ch;
  }
  return out;
}

export class PostgresDriver implements SqlDriver {
  readonly dialect = DIALECT;
  private readonly pool: pg.Pool;
  private closed = false;
  private readonly guard: StoreGuard;
  /** The deadline of calls off the request path: the server cancels them itself before. */
  private readonly slowMs: number;

  constructor(cfg: PostgresLogsConfig, timeoutMs = DEFAULT_STORE_TIMEOUT_MS) {
    const timeout = cfg.statement_timeout_ms ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    this.slowMs = timeout + 1000;
    this.guard = new StoreGuard({ name: `logs store (PostgreSQL ${cfg.host}:${cfg.port})`, timeoutMs, probe: () => this.pool.query('SELECT 1') });
    this.pool = new (pgModule().Pool)({
      host: cfg.host,
      port: Number(cfg.port),
      user: cfg.user,
      password: cfg.password || undefined,
      database: cfg.db_name,
      ssl: sslOption(cfg.ssl_mode),
      max: cfg.max_open_conns ?? 50,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 5_000,
      statement_timeout: timeout,
      // The client side gives up a little later than the server, in case the server is unreachable.
      query_timeout: timeout + 5_000,
      application_name: 'skybridge-logs',
      types,
    });
    // An idle connection dropped by the server must not crash the process; the pool reconnects.
    this.pool.on('error', (err) => {
      // After close() the server may still end connections that were closing: not news.
      if (!this.closed) log.warn('logs store: PostgreSQL connection lost', { error: err.message });
    });
  }

  /** The store deadline for calls on the request path; `slow` for the others (searches, writes, sweeps). */
  deadline(fast: boolean): number {
    return fast ? this.guard.timeoutMs : this.slowMs;
  }

  unavailable(): string | undefined {
    return this.guard.stalled();
  }

  async query(sql: string, params: readonly unknown[] = [], opts: QueryOptions = {}): Promise<Row[]> {
    // A query abandoned at the deadline keeps its connection until query_timeout, which then drops it.
    return (await this.guard.run(() => this.pool.query(numberPlaceholders(sql), params as unknown[]), this.deadline(opts.fast ?? false))).rows as Row[];
  }

  async execute(sql: string, params: readonly unknown[] = [], opts: QueryOptions = {}): Promise<number> {
    return (await this.guard.run(() => this.pool.query(numberPlaceholders(sql), params as unknown[]), this.deadline(opts.fast ?? false))).rowCount ?? 0;
  }

  insert(batches: readonly RowsToInsert[]): Promise<void> {
    return this.guard.run(() => this.insertAll(batches), this.slowMs);
  }

  private async insertAll(batches: readonly RowsToInsert[]): Promise<void> {
    await this.transaction(async (client) => {
      for (const b of batches) {
        // One array parameter per column, spread by unnest: one short statement per batch whatever
        // its size, and no per-value placeholders to parse.
        const columns = b.columns.map((_, c) => b.rows.map((row) => row[c] ?? null));
        const arrays = b.types.map((t, c) => `$${c + 1}::${t}[]`).join(', ');
        await client.query(`INSERT INTO ${b.table} (${b.columns.join(', ')}) SELECT * FROM unnest(${arrays}) ON CONFLICT DO NOTHING`, columns);
      }
    });
  }

  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      failed = err as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // A connection whose query failed (timed out, perhaps still running) is closed, not reused.
      client.release(failed);
    }
  }

  async migrate(migrations: readonly Migration[]): Promise<number[]> {
    const applied: number[] = [];
    await this.transaction(async (client) => {
      // Replicas starting together take turns; the second finds the work done.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
      const done = new Set((await client.query(`SELECT version FROM ${MIGRATIONS_TABLE}`)).rows.map((r: { version: number }) => r.version));
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        // DDL is transactional in PostgreSQL: a failed migration leaves nothing half-made.
        for (const sql of m.statements(DIALECT)) await client.query(sql);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, description, applied_at) VALUES ($1, $2, $3)`, [m.version, m.description, Date.now()]);
        applied.push(m.version);
      }
    });
    return applied;
  }

  async close(): Promise<void> {
    this.closed = true;
    // Connections busy on a silent server are dropped by query_timeout; pool.end() waits for them.
    await this.guard.close();
    await this.pool.end();
  }
}

export async function openPostgresStore(cfg: PostgresLogsConfig, timeoutMs?: number): Promise<SqlLogStore> {
  const driver = new PostgresDriver(cfg, timeoutMs);
  try {
    return await SqlLogStore.open(driver);
  } catch (err) {
    await driver.close().catch(() => undefined);
    throw err;
  }
}
