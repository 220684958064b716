// The gateway's own calls (pipeline/own-calls.ts) run no stage, so nothing else sees them: the
// metric counts each by the feature that made it. A cache embedding, against the mock provider.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/load.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { embedText } from '../../proxy/src/cache/embed.ts';

let mock: MockProvider;
before(async () => {
  mock = await startMockProvider();
});
after(() => mock.close());

const counted = async (metrics: Metrics, purpose: string, outcome: string): Promise<number> =>
  (await metrics.internalRequests.get()).values.find((v) => v.labels.purpose === purpose && v.labels.outcome === outcome)?.value ?? 0;

test('a cache embedding is counted as an internal request with purpose cache_embedding', async () => {
  const config = { providers: { openai: { keys: [{ name: 'k', value: 'sk-test', weight: 1 }], network_config: { base_url: mock.url } } } };
  const snap = compileSnapshot(checkConfig(config, 'test').config);
  const metrics = new Metrics({ processMetrics: false });
  const embedded = await embedText(snap, metrics, 'openai', 'text-embedding-3-small', 'what is the capital of France?', AbortSignal.timeout(10_000));
  assert.ok(embedded.vector.length > 0);
  assert.equal(await counted(metrics, 'cache_embedding', 'success'), 1);
  assert.equal(mock.requests.filter((r) => r.path.endsWith('/embeddings')).length, 1);

  // A failed call counts too, as an error (a 400 is not retried).
  mock.inject({ status: 400 });
  await assert.rejects(embedText(snap, metrics, 'openai', 'text-embedding-3-small', 'again', AbortSignal.timeout(10_000)));
  assert.equal(await counted(metrics, 'cache_embedding', 'error'), 1);
  assert.equal(await counted(metrics, 'complexity_embedding', 'success'), 0);
  assert.match(await metrics.registry.metrics(), /skybridge_internal_requests_total\{purpose="cache_embedding",outcome="success"\} 1/);
});
