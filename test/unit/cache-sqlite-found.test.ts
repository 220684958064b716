// The embedded cache file answers a repeated direct hit without reading its row again; what another
// connection (another worker on the same file) or this one changed is still what a lookup sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SqliteCacheStore } from '../../proxy/src/cache/sqlite-store.ts';

const entry = (id: string, createdAt: number, ttlMs = 60_000) => ({ id, scope: 's', cacheKey: 'k', hash: 'h', value: `answer ${id}`, createdAt, expiresAt: createdAt + ttlMs });

async function twoWorkers(run: (a: SqliteCacheStore, b: SqliteCacheStore, path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-cache-found-'));
  const a = new SqliteCacheStore(join(dir, 'cache.db'));
  const b = new SqliteCacheStore(join(dir, 'cache.db'));
  try {
    await a.init('ns', 1);
    await b.init('ns', 1);
    await run(a, b, join(dir, 'cache.db'));
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an entry found before and then cleared through another worker (by id, by key) is not served again', async () => {
  await twoWorkers(async (a, b) => {
    const now = Date.now();
    await a.put('ns', entry('e1', now));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e1');
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e1');
    assert.equal(await b.deleteById('ns', 'e1'), 1);
    assert.equal(a.getDirectNow('ns', 's', 'h', now), undefined, 'cleared by id elsewhere');
    await b.put('ns', entry('e2', now + 1));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e2', 'written elsewhere');
    assert.equal(await b.deleteByKey('ns', 'k'), 1);
    assert.equal(a.getDirectNow('ns', 's', 'h', now), undefined, 'cleared by key elsewhere');
  });
});

test('a newer entry of the same request, written by this worker or another, is served instead of the one found before', async () => {
  await twoWorkers(async (a, b) => {
    const now = Date.now();
    await a.put('ns', entry('e1', now));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e1');
    await a.put('ns', entry('e2', now + 1));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e2', 'written here');
    await b.put('ns', entry('e3', now + 2));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e3', 'written elsewhere');
    assert.equal(await a.deleteById('ns', 'e3'), 1);
    assert.equal(a.getDirectNow('ns', 's', 'h', now), undefined, 'cleared here');
  });
});

test('an entry found before is not served at or after its expiry', async () => {
  await twoWorkers(async (a) => {
    const now = Date.now();
    await a.put('ns', entry('e1', now, 1_000));
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e1');
    assert.equal(a.getDirectNow('ns', 's', 'h', now + 1_000), undefined);
  });
});

test('a row changed by any other connection to the file (not a cache store) is seen, also when this worker wrote after it', async () => {
  await twoWorkers(async (a, _b, path) => {
    const now = Date.now();
    await a.put('ns', entry('e1', now));
    await a.put('ns', { ...entry('x1', now), hash: 'other' });
    assert.equal(a.getDirectNow('ns', 's', 'h', now)?.id, 'e1');
    const other = new DatabaseSync(path);
    try {
      const table = (other.prepare('SELECT table_name FROM cache_namespaces WHERE name = ?').get('ns') as { table_name: string }).table_name;
      other.prepare(`UPDATE ${table} SET value = ? WHERE id = ?`).run('changed', 'e1');
      // This worker's own write between the other's commit and the lookup.
      await a.put('ns', { ...entry('x2', now), hash: 'other2' });
      assert.equal(a.getDirectNow('ns', 's', 'h', now)?.value, 'changed', 'updated elsewhere, then this worker wrote');
      other.prepare(`DELETE FROM ${table} WHERE id = ?`).run('e1');
      assert.equal(a.getDirectNow('ns', 's', 'h', now), undefined, 'deleted elsewhere');
    } finally {
      other.close();
    }
  });
});
