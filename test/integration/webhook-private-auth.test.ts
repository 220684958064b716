// allow_private_network endpoints without dashboard authentication: nothing is sent to them, however
// the delivery came about. The rule is checked when a delivery is sent, so it holds for an async
// job's event, for a URL changed to a private one after the delivery was queued, and (403 at once)
// for a redelivery, as for a test delivery. A real gateway without auth_config, a real receiver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

interface Delivery {
  id: string;
  webhook: string;
  state: string;
  attempts: { attempt: number; outcome: string; error?: string }[];
}

let mock: MockProvider;
let receiver: Receiver;
let gw: InProcessGateway;
let api: Api;

before(async () => {
  [mock, receiver] = await Promise.all([startMockProvider(), startReceiver()]);
  gw = await startGateway({
    providers: mockProviders(mock.url),
    client: { enable_logging: true },
    webhooks: [
      { name: 'lan', url: receiver.url, events: ['async_job.completed', 'async_job.failed'], allow_private_network: true, max_retries: 0 },
    ],
  });
  api = apiClient(gw);
  // Public at first (the name never resolves, so the first attempt fails and a retry is scheduled);
  // made through /api, where the test changes its URL later (config.json's webhooks are read-only there).
  const flip = await api('POST', '/api/webhooks', { name: 'flip', url: 'https://receiver.invalid/hook', events: ['async_job.completed'], max_retries: 3, retry_backoff_initial_seconds: 1, retry_backoff_max_seconds: 1 });
  assert.equal(flip.status, 201, flip.text);
});

after(async () => {
  await gw?.stop();
  await receiver?.close();
  await mock?.close();
});

async function deliveriesOf(webhook: string): Promise<Delivery[]> {
  return (await api<{ deliveries: Delivery[] }>('GET', `/api/webhooks/deliveries?webhook=${webhook}`)).body.deliveries;
}

test("an async job's event to a private receiver is not sent without dashboard auth; the attempt says why and redeliver answers 403", async () => {
  const submit = await fetch(`${gw.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-async-webhook': 'lan' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'private receiver' }] }),
  });
  assert.equal(submit.status, 202);
  let d!: Delivery;
  await eventually(async () => {
    [d] = await deliveriesOf('lan');
    assert.equal(d?.state, 'exhausted');
  }, 20_000);
  assert.equal(d.attempts.length, 1);
  assert.match(d.attempts[0].error ?? '', /dashboard authentication/);
  assert.equal(receiver.received.length, 0, 'nothing reached the private receiver');

  const again = await api<ApiError>('POST', `/api/webhooks/deliveries/${d.id}/redeliver`, {});
  assert.equal(again.status, 403, again.text);
  assert.equal(again.body.error.code, 'auth_required');
  assert.match(again.body.error.message, /'lan'.*dashboard authentication/);
  // Nothing was re-queued.
  assert.equal((await deliveriesOf('lan'))[0].state, 'exhausted');
});

test('a delivery queued for a public URL is refused at send time once the endpoint was changed to a private one', async () => {
  const queued = await api<{ delivery: Delivery }>('POST', '/api/webhooks/flip/test', {});
  assert.equal(queued.status, 202, queued.text);
  const id = queued.body.delivery.id;
  await eventually(async () => {
    const [d] = await deliveriesOf('flip');
    assert.ok(d.attempts.length >= 1 && d.state === 'pending', JSON.stringify(d));
  }, 20_000);
  const changed = await api('PUT', '/api/webhooks/flip', { url: receiver.url, allow_private_network: true });
  assert.equal(changed.status, 200, changed.text);
  let d!: Delivery;
  await eventually(async () => {
    [d] = await deliveriesOf('flip');
    assert.equal(d.id, id);
    assert.match(d.attempts.at(-1)?.error ?? '', /dashboard authentication/);
  }, 20_000);
  assert.ok(!receiver.received.some((r) => r.id === id), 'the retry did not reach the now-private receiver');
  assert.equal((await api<ApiError>('POST', '/api/webhooks/flip/test', {})).status, 403);
});
