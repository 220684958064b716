// The cache settings' vector store line (dashboard/src/pages/cache/store-line.ts): the cache
// statistics it comes from load apart from the plugin list, so the line says it is loading (or that
// the statistics failed) instead of looking like no store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storeLine } from '../../dashboard/src/pages/cache/store-line.ts';
import type { CacheStats } from '../../proxy/src/api/answers.ts';

const stats = (store: CacheStats['store']): CacheStats => ({
  store,
  namespaces: [],
  hits: { direct: 0, semantic: 0, total: 0 },
  misses: { direct: 0, semantic: 0, total: 0 },
  hit_rate: null,
  bypassed: {},
  writes: 0,
  key_budget: {},
  store_errors: {},
});

test('while the statistics load the line says so; a failed load says the store is unknown', () => {
  assert.equal(storeLine(undefined, false), 'loading…');
  assert.equal(storeLine(undefined, true), 'unknown (the cache statistics could not be read)');
});

test('once the statistics are in, the store type and whether it is open', () => {
  assert.equal(storeLine(stats({ type: 'sqlite', enabled: true, open: true }), false), 'sqlite — open');
  assert.equal(storeLine(stats({ type: 'redis', enabled: false, open: false }), false), 'redis (disabled) — not open on this gateway');
  assert.equal(storeLine(stats({ type: null, enabled: false, open: false }), false), 'none (disabled) — not open on this gateway');
  // Statistics already shown stay shown when a later refresh fails.
  assert.equal(storeLine(stats({ type: 'sqlite', enabled: true, open: true }), true), 'sqlite — open');
});
