// The response cache for in-process callers (execute, as async jobs and agent loops use it): they
// get values, so the cache stores and replays values: a JSON answer, and a stream as unified chunks
// with cache_debug on the last one. The embedded SQLite store is real; the mock plays the upstream.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot, type Snapshot } from '../../proxy/src/config/snapshot.ts';
import { createServices, type Services } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { execute } from '../../proxy/src/operations/execute.ts';
import { startResponseCache } from '../../proxy/src/cache/start.ts';
import type { CacheRuntime } from '../../proxy/src/cache/runtime.ts';
import type { Outcome } from '../../proxy/src/pipeline/outcome.ts';

let mock: MockProvider;
let services: Services;
let snapshot: Snapshot;
let cache: CacheRuntime;

before(async () => {
  mock = await startMockProvider();
  const config = checkConfig(
    {
      providers: mockProviders(mock.url),
      vector_store: { enabled: true, type: 'sqlite' },
      plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, default_cache_key: 'jobs' } }],
    },
    'in-process cache test',
    {},
  ).config;
  snapshot = compileSnapshot(config);
  cache = (await startResponseCache(config, mkdtempSync(join(tmpdir(), 'skybridge-cache-'))))!;
  services = createServices({ metrics: new Metrics({ processMetrics: false }), cache });
});
after(async () => {
  await services.close();
  await cache.close();
  await mock.close();
});

type Debugged = { extra_fields?: { cache_debug?: { cache_hit: boolean; hit_type?: string } } };

async function chunks(o: Outcome): Promise<Debugged[]> {
  assert.equal(o.kind, 'stream', o.kind === 'error' ? o.error.message : o.kind);
  const out: Debugged[] = [];
  for await (const batch of (o as Extract<Outcome, { kind: 'stream' }>).items) out.push(...(batch as Debugged[]));
  return out;
}

test('a JSON answer is stored and served again as a value', async () => {
  const body = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'in process question' }] };
  const first = await execute(services, snapshot, { operation: 'chat', body });
  assert.equal(first.kind, 'json');
  assert.equal(((first as { value: Debugged }).value).extra_fields?.cache_debug?.cache_hit, false);
  const n = mock.requests.length;
  await eventually(async () => {
    const again = await execute(services, snapshot, { operation: 'chat', body });
    assert.equal(again.kind, 'json');
    assert.equal(((again as { value: Debugged }).value).extra_fields?.cache_debug?.hit_type, 'direct');
  });
  assert.equal(mock.requests.length, n);
});

test('a stream of unified chunks is replayed as chunks, cache_debug on the last', async () => {
  const body = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'in process stream' }], stream: true };
  const first = await chunks(await execute(services, snapshot, { operation: 'chat', body }));
  assert.ok(first.length > 2);
  const n = mock.requests.length;
  let replayed: Debugged[] = [];
  await eventually(async () => {
    replayed = await chunks(await execute(services, snapshot, { operation: 'chat', body }));
    assert.equal(replayed.at(-1)?.extra_fields?.cache_debug?.cache_hit, true);
  });
  assert.equal(mock.requests.length, n);
  assert.equal(replayed.length, first.length);
  assert.equal(replayed.slice(0, -1).filter((c) => c.extra_fields?.cache_debug).length, 0);
  const text = (cs: Debugged[]) => cs.map((c) => (c as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '').join('');
  assert.equal(text(replayed), text(first));
});
