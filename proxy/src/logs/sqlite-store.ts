// The embedded log store: one SQLite file, its connection owned by a worker thread so inserts and
// long searches never stall the gateway's event loop. Same queries as PostgreSQL (sql-store.ts).
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Row, RowsToInsert, SqlDriver } from './driver.ts';
import type { Migration } from './migrations.ts';
import { SqlLogStore } from './sql-store.ts';
import { SQLITE_DIALECT } from './sqlite-driver.ts';
import type { WorkerAnswer, WorkerCall } from './sqlite-worker.ts';

export { SqliteDriver } from './sqlite-driver.ts';

// The worker file next to this one, whether running from .ts sources or the compiled .js build.
const WORKER_URL = new URL(`./sqlite-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class SqliteWorkerDriver implements SqlDriver {
  readonly dialect = SQLITE_DIALECT;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private dead: Error | undefined;
  private readonly ready: Promise<void>;

  constructor(path: string) {
    this.worker = new Worker(WORKER_URL, { workerData: { path } });
    // Open queries keep it referenced (see call); an idle store never keeps the process alive.
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (m: WorkerAnswer) => {
        if ('ready' in m) return resolve();
        if ('fatal' in m) return reject(new Error(`logs store: cannot open SQLite file ${path}: ${m.fatal}`));
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (this.pending.size === 0) this.worker.unref();
        if ('error' in m) p.reject(new Error(m.error));
        else p.resolve(m.result);
      });
      const fail = (err: Error): void => {
        this.dead = err;
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      };
      this.worker.on('error', fail);
      this.worker.on('exit', (code) => fail(new Error(`logs store: the SQLite worker exited (code ${code})`)));
    });
    this.ready.catch(() => undefined);
  }

  private async call(msg: Omit<WorkerCall, 'id'>): Promise<unknown> {
    await this.ready;
    if (this.dead) throw this.dead;
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ ...msg, id });
    });
  }

  async query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.call({ op: 'query', sql, params: [...params] })) as Row[];
  }

  async execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.call({ op: 'execute', sql, params: [...params] })) as number;
  }

  async insert(batches: readonly RowsToInsert[]): Promise<void> {
    await this.call({ op: 'insert', batches: [...batches] });
  }

  async migrate(migrations: readonly Migration[]): Promise<number[]> {
    const rendered = migrations.map((m) => ({ version: m.version, description: m.description, statements: m.statements(SQLITE_DIALECT) }));
    return (await this.call({ op: 'migrate', migrations: rendered })) as number[];
  }

  async close(): Promise<void> {
    if (!this.dead) await this.call({ op: 'close' }).catch(() => undefined);
    this.dead ??= new Error('logs store: closed');
    await this.worker.terminate();
  }
}

export async function openSqliteStore(path: string): Promise<SqlLogStore> {
  const driver = new SqliteWorkerDriver(path);
  try {
    return await SqlLogStore.open(driver);
  } catch (err) {
    await driver.close().catch(() => undefined);
    throw err;
  }
}
