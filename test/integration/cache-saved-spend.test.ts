// A response-cache hit is spend saved: its request-log record carries the price the stored answer
// had, the overview's breakdown counts it as saved (not spent), and the logs' stats total only what
// providers answered. Through a real gateway (SQLite logs and cache) with the official OpenAI SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import type { LogEntry, UsageBreakdown } from '../../proxy/src/api/answers.ts';

let mock: MockProvider;
let g: InProcessGateway;
let started = 0;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite' },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } }],
  });
  started = Date.now();
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

async function api<T>(path: string): Promise<T> {
  const res = await apiClient(g)<T>('GET', path);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

test("a cache hit's record carries the stored answer's price as saved spend, never as spend", async () => {
  const sdk = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: { 'x-bf-cache-key': 'saved-spend' } });
  const ask = () => sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'what does a hit save?' }] });
  await ask();
  // The entry is written after the answer: ask again until the cache answers.
  await eventually(async () => {
    const hit = (await ask()) as unknown as { extra_fields?: { cache_debug?: { cache_hit?: boolean } } };
    assert.equal(hit.extra_fields?.cache_debug?.cache_hit, true);
  }, 10_000);

  let records: { hit: LogEntry; misses: LogEntry[] } | undefined;
  await eventually(async () => {
    const r = await api<{ logs: LogEntry[] }>('/api/logs?limit=50');
    const hits = r.logs.filter((l) => l.cache_hit);
    const misses = r.logs.filter((l) => !l.cache_hit);
    assert.ok(hits.length >= 1 && misses.length >= 1, JSON.stringify(r.logs.map((l) => [l.cache_hit, l.cost])));
    records = { hit: hits[0]!, misses };
  }, 5000);
  assert.ok(records);
  const price = records.misses[0]!.cost!;
  assert.ok(price > 0, 'gpt-4o has a built-in price');
  assert.equal(records.hit.cost, price, "the hit's record carries the answer's price");

  const window = `start_time=${new Date(started - 60_000).toISOString()}&end_time=${new Date(Date.now() + 1000).toISOString()}`;
  const b = await api<UsageBreakdown>(`/api/logs/breakdown?by=provider&${window}`);
  const hits = b.totals.cache_hits;
  assert.ok(hits >= 1);
  assert.ok(Math.abs(b.totals.saved_cost - hits * price) < 1e-12, `saved ${b.totals.saved_cost} for ${hits} hit(s) at ${price}`);
  assert.ok(Math.abs(b.totals.cost - records.misses.length * price) < 1e-12, `spent ${b.totals.cost}: the misses only`);

  const stats = (await api<{ stats: { total_cost: number } }>('/api/logs?limit=1')).stats;
  assert.ok(Math.abs(stats.total_cost - records.misses.length * price) < 1e-12, `logs stats total ${stats.total_cost}: the misses only`);
});
