// Store files hold prompts, answers, job requests and webhook secrets: readable by the gateway's
// user only (0600), like config.store.json. SQLite creates a database's -wal and -shm files with the
// database file's permissions, so the database is created 0600 before SQLite opens it; files an
// earlier version left readable by others are tightened.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;

/** Prepares `path` (a SQLite database file) to be opened: its directory made, it and its -wal/-shm files 0600. */
export function privateSqliteFile(path: string): void {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return;
  mkdirSync(dirname(path), { recursive: true });
  // 'a': create if missing, never truncate a database that exists.
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    if (existsSync(file)) chmodSync(file, PRIVATE_FILE_MODE);
  }
}
