// Store files hold prompts, answers and job requests: created readable by the gateway's user only
// (0600, like config.store.json), their -wal and -shm files too, and a file an earlier version left
// readable by others is tightened when it is opened. The real SQLite stores on a temp directory.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDriver } from '../../proxy/src/logs/sqlite-driver.ts';
import { MIGRATIONS } from '../../proxy/src/logs/migrations.ts';
import { SqliteCacheStore } from '../../proxy/src/cache/sqlite-store.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

before(() => {
  // The usual umask, under which files are created readable by everyone unless the code says otherwise.
  process.umask(0o022);
});

function assertPrivate(db: string): void {
  for (const file of [db, `${db}-wal`, `${db}-shm`]) {
    assert.ok(existsSync(file), `${file} exists`);
    assert.equal(mode(file).toString(8), '600', file);
  }
}

test('logs.db and its -wal and -shm files are created 0600', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'skybridge-files-')), 'logs.db');
  const db = new SqliteDriver(path);
  try {
    await db.migrate(MIGRATIONS);
    await db.execute(`INSERT INTO webhook_secrets (name, secret, updated_at) VALUES ('w', 'whsec_x', 1)`);
    assertPrivate(path);
  } finally {
    await db.close();
  }
});

test('cache.db and its -wal and -shm files are created 0600', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'skybridge-files-')), 'nested', 'cache.db');
  const store = new SqliteCacheStore(path);
  try {
    await store.init('ns', 1);
    await store.put('ns', { id: 'e1', scope: 's', cacheKey: 'k', hash: 'h', value: 'an answer', createdAt: Date.now(), expiresAt: Date.now() + 60_000 });
    assertPrivate(path);
  } finally {
    await store.close();
  }
});

test('a store file left readable by others (an earlier version) is tightened on open, its data kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-files-'));
  const path = join(dir, 'logs.db');
  const first = new SqliteDriver(path);
  await first.migrate(MIGRATIONS);
  await first.execute(`INSERT INTO webhook_secrets (name, secret, updated_at) VALUES ('kept', 'whsec_y', 1)`);
  await first.close();
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o644);
  writeFileSync(`${path}-wal`, '', { flag: 'a', mode: 0o644 });
  const again = new SqliteDriver(path);
  try {
    assert.equal(mode(path).toString(8), '600');
    assert.equal(mode(`${path}-wal`).toString(8), '600');
    const rows = await again.query(`SELECT name FROM webhook_secrets`);
    assert.deepEqual(rows.map((r) => r.name), ['kept']);
  } finally {
    await again.close();
  }
});
