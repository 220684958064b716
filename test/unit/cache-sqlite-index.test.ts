// The embedded cache file's lookup index: a direct lookup (the newest live entry of a scope and hash)
// reads it without sorting, and a file written by an earlier version, with its (scope, hash) index,
// keeps its entries and answers from the new index once opened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteCacheStore } from '../../proxy/src/cache/sqlite-store.ts';

const entry = (id: string, createdAt: number) => ({ id, scope: 's', cacheKey: 'k', hash: 'h', value: `answer ${id}`, createdAt, expiresAt: createdAt + 60_000 });

test('a cache.db written with the earlier (scope, hash) index answers direct lookups after the upgrade, from an index that needs no sort', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'skybridge-cache-index-')), 'cache.db');
  const first = new SqliteCacheStore(path);
  await first.init('ns', 1);
  const now = Date.now();
  await first.put('ns', entry('e1', now));
  await first.close();
  // As an earlier version left the file: the two-column index only.
  const raw = new DatabaseSync(path);
  const table = (raw.prepare('SELECT table_name FROM cache_namespaces WHERE name = ?').get('ns') as { table_name: string }).table_name;
  raw.exec(`DROP INDEX ${table}_hash_at`);
  raw.exec(`CREATE INDEX ${table}_hash ON ${table} (scope, hash)`);
  raw.close();

  const store = new SqliteCacheStore(path);
  try {
    await store.init('ns', 1);
    assert.equal(store.getDirectNow('ns', 's', 'h', Date.now())?.value, 'answer e1', 'the entry written before is found');
    const check = new DatabaseSync(path);
    const indexes = (check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name NOT LIKE 'sqlite_%'`).all(table) as { name: string }[]).map((r) => r.name).sort();
    assert.deepEqual(indexes, [`${table}_expires`, `${table}_hash_at`, `${table}_key`], 'the earlier index is replaced, not kept beside the new one');
    const plan = (check.prepare(`EXPLAIN QUERY PLAN SELECT id FROM ${table} WHERE scope = ? AND hash = ? AND expires_at > ? ORDER BY created_at DESC LIMIT 1`).all('s', 'h', 0) as { detail: string }[]).map((r) => r.detail).join('; ');
    check.close();
    assert.match(plan, new RegExp(`USING INDEX ${table}_hash_at`));
    assert.doesNotMatch(plan, /TEMP B-TREE/, 'no sort per lookup');
  } finally {
    await store.close();
  }
});
