// Replicas sharing a Redis config store: a write through /api on one replica is served by the
// others within a second, without a restart, and writes under load fail no in-flight request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

let mock: MockProvider;
let redis: RunningRedis;
let a: InProcessGateway;
let b: InProcessGateway;

before(async () => {
  mock = await startMockProvider({ latencyMs: 30 });
  redis = await startRedis();
  const config = { providers: mockProviders(mock.url), client: { enforce_auth_on_inference: true }, redis: { addr: redis.addr } };
  [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await mock.close();
  await redis.stop();
});

const chat = (g: InProcessGateway, key: string) =>
  fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': key },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });

const grant = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];

test('a virtual key created on one replica works on the other within a second', async () => {
  const created = await apiClient(a)('POST', '/api/governance/virtual-keys', { name: 'shared', value: 'sk-bf-shared-0123456789', provider_configs: grant });
  assert.equal(created.status, 201, created.text);
  const start = Date.now();
  let status = 0;
  while (Date.now() - start < 3000) {
    status = (await chat(b, 'sk-bf-shared-0123456789')).status;
    if (status === 200) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const elapsed = Date.now() - start;
  assert.equal(status, 200);
  assert.ok(elapsed < 1000, `served by the other replica after ${elapsed} ms`);
});

test('configuration writes during steady load fail no request on either replica', async () => {
  const created = await apiClient(a)('POST', '/api/governance/virtual-keys', { name: 'load', value: 'sk-bf-load-0123456789', provider_configs: grant });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { virtual_key: { id: string } }).virtual_key?.id ?? (created.body as { id: string }).id;
  await new Promise((r) => setTimeout(r, 1000));
  let stop = false;
  const failures: number[] = [];
  let served = 0;
  const load = [a, b, a, b].map(async (g) => {
    while (!stop) {
      const res = await chat(g, 'sk-bf-load-0123456789');
      await res.arrayBuffer();
      if (res.status === 200) served++;
      else failures.push(res.status);
    }
  });
  const api = apiClient(b);
  for (let i = 0; i < 20; i++) {
    const res = await api('PUT', `/api/governance/virtual-keys/${id}`, { description: `revision ${i}` });
    assert.equal(res.status, 200, res.text);
    await new Promise((r) => setTimeout(r, 50));
  }
  stop = true;
  await Promise.all(load);
  assert.deepEqual(failures, []);
  assert.ok(served > 20, `served ${served}`);
});
