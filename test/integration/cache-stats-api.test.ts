// GET /api/cache/stats: the dashboard's hit rates, counted from the same counters as /metrics, and
// the store named by type only. A gateway without a store answers zeros and says why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

interface Stats {
  store: { type: string | null; enabled: boolean; open: boolean };
  problem?: string;
  hits: { direct: number; semantic: number; total: number };
  misses: { direct: number; semantic: number; total: number };
  hit_rate: number | null;
  bypassed: Record<string, number>;
  writes: number;
}

let mock: MockProvider;
let g: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite' },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } }],
  });
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

async function chat(headers: Record<string, string>): Promise<boolean | undefined> {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'stats question' }] }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { extra_fields?: { cache_debug?: { cache_hit: boolean } } };
  return body.extra_fields?.cache_debug?.cache_hit;
}

test('hits, misses, bypasses and writes are counted; the hit rate follows; clearing by key makes the next one a miss', async () => {
  const api = apiClient(g);
  const zero = await api<Stats>('GET', '/api/cache/stats');
  assert.equal(zero.status, 200, zero.text);
  assert.deepEqual(zero.body.store, { type: 'sqlite', enabled: true, open: true });
  assert.equal(zero.body.hit_rate, null);
  assert.equal(zero.body.hits.total, 0);

  const key = `stats-${Date.now()}`;
  assert.equal(await chat({ 'x-bf-cache-key': key }), false);
  await eventually(async () => assert.equal(await chat({ 'x-bf-cache-key': key }), true), 5000);
  await chat({});
  const s = (await api<Stats>('GET', '/api/cache/stats')).body;
  assert.ok(s.hits.direct >= 1 && s.hits.total === s.hits.direct + s.hits.semantic, JSON.stringify(s));
  assert.ok(s.misses.total >= 1, JSON.stringify(s));
  assert.equal(s.hit_rate, s.hits.total / (s.hits.total + s.misses.total));
  assert.equal(s.bypassed.no_key, 1);
  assert.equal(s.writes, 1);

  const cleared = await api<{ deleted: number }>('DELETE', `/api/cache/clear-by-key/${encodeURIComponent(key)}`);
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.body.deleted, 1);
  assert.equal(await chat({ 'x-bf-cache-key': key }), false);
  const after = (await api<Stats>('GET', '/api/cache/stats')).body;
  assert.equal(after.misses.total, s.misses.total + 1);
});

test('without a store the stats are zeros and say why', async () => {
  const plain = await startGateway({ providers: mockProviders(mock.url) });
  try {
    const s = await apiClient(plain)<Stats>('GET', '/api/cache/stats');
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.store.open, false);
    assert.match(s.body.problem ?? '', /no response cache store/);
    assert.equal(s.body.hits.total, 0);
    assert.equal((await apiClient(plain)('POST', '/api/cache/stats', {})).status, 405);
  } finally {
    await plain.stop();
  }
});
