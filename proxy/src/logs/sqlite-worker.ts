// The worker thread that owns the SQLite connection: runs the driver calls sqlite-store.ts sends
// and answers each with its result or its error message.
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDriver } from './sqlite-driver.ts';
import type { Migration } from './migrations.ts';
import type { RowsToInsert } from './driver.ts';

export interface WorkerCall {
  id: number;
  op: 'query' | 'execute' | 'insert' | 'migrate' | 'close';
  sql?: string;
  params?: unknown[];
  batches?: RowsToInsert[];
  /** Migrations with their statements already rendered for SQLite (functions do not cross threads). */
  migrations?: { version: number; description: string; statements: string[] }[];
}

export type WorkerAnswer = { id: number; result: unknown } | { id: number; error: string } | { ready: true } | { fatal: string };

const port = parentPort!;
let driver: SqliteDriver;
try {
  driver = new SqliteDriver((workerData as { path: string }).path);
  port.postMessage({ ready: true } satisfies WorkerAnswer);
} catch (err) {
  port.postMessage({ fatal: (err as Error).message } satisfies WorkerAnswer);
  process.exit(1);
}

port.on('message', (call: WorkerCall) => {
  const run = (): Promise<unknown> => {
    switch (call.op) {
      case 'query':
        return driver.query(call.sql!, call.params);
      case 'execute':
        return driver.execute(call.sql!, call.params);
      case 'insert':
        return driver.insert(call.batches!);
      case 'migrate':
        return driver.migrate((call.migrations ?? []).map((m): Migration => ({ version: m.version, description: m.description, statements: () => m.statements })));
      case 'close':
        return driver.close();
    }
  };
  run().then(
    (result) => port.postMessage({ id: call.id, result } satisfies WorkerAnswer),
    (err: unknown) => port.postMessage({ id: call.id, error: (err as Error)?.message ?? String(err) } satisfies WorkerAnswer),
  );
});
