// SQLite through node:sqlite, synchronously: each batch insert is one transaction nothing else
// can interleave with; WAL lets readers in other processes (a second gateway on the same file)
// proceed during a write. The gateway runs this inside a worker thread (sqlite-store.ts), so its
// event loop never waits on the disk or a long query.
import { privateSqliteFile } from '../private-file.ts';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { Dialect, Row, RowsToInsert, SqlDriver } from './driver.ts';
import { MIGRATIONS_TABLE, type Migration } from './migrations.ts';

export const SQLITE_DIALECT: Dialect = { name: 'sqlite', ilike: 'LIKE', double: 'REAL' };
const STATEMENT_CACHE = 64;

function bindable(v: unknown): SQLInputValue {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint' || v instanceof Uint8Array) return v;
  return JSON.stringify(v);
}

export class SqliteDriver implements SqlDriver {
  readonly dialect = SQLITE_DIALECT;
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  constructor(path: string) {
    privateSqliteFile(path);
    this.db = new DatabaseSync(path, { timeout: 5000 });
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec('PRAGMA synchronous = NORMAL');
    // The default 2 MB page cache makes every index insert and aggregate at a million records a
    // disk read; 64 MB of cache plus memory-mapped reads keep the hot pages resident.
    this.db.exec('PRAGMA cache_size = -65536');
    this.db.exec('PRAGMA mmap_size = 1073741824');
    this.db.exec('PRAGMA temp_store = MEMORY');
  }

  private prepare(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      // Filter combinations make many distinct statements; keep the most recent ones.
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value as string);
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    try {
      return Promise.resolve(this.prepare(sql).all(...params.map(bindable)) as Row[]);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    try {
      return Promise.resolve(Number(this.prepare(sql).run(...params.map(bindable)).changes));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  insert(batches: readonly RowsToInsert[]): Promise<void> {
    try {
      this.transaction(() => {
        for (const b of batches) {
          const stmt = this.prepare(`INSERT INTO ${b.table} (${b.columns.join(', ')}) VALUES (${b.columns.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`);
          const last = () => Number((this.prepare(`SELECT COALESCE(max(rowid), 0) AS r FROM ${b.table}`).get() as { r: number }).r);
          const after = b.afterRange?.length ? last() : 0;
          for (const row of b.rows) stmt.run(...row.map(bindable));
          if (b.afterRange?.length) {
            // Inside the write lock: the rows this batch added are exactly those past `after`.
            const upTo = last();
            if (upTo > after) for (const sql of b.afterRange) this.prepare(sql).run(after, upTo);
          }
        }
      });
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private transaction(fn: () => void): void {
    // IMMEDIATE takes the write lock up front, so two processes on one file queue instead of deadlocking.
    this.db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  migrate(migrations: readonly Migration[]): Promise<number[]> {
    try {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
      const applied: number[] = [];
      for (const m of migrations) {
        this.transaction(() => {
          // Re-read inside the write lock: another process may have applied it meanwhile.
          if (this.db.prepare(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE version = ?`).get(m.version)) return;
          for (const sql of m.statements(SQLITE_DIALECT)) this.db.exec(sql);
          this.db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, description, applied_at) VALUES (?, ?, ?)`).run(m.version, m.description, Date.now());
          applied.push(m.version);
        });
      }
      return Promise.resolve(applied);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  close(): Promise<void> {
    this.statements.clear();
    if (this.db.isOpen) this.db.close();
    return Promise.resolve();
  }
}

