// End to end: async jobs submitted with x-bf-async-webhook end with a signed delivery to a real
// receiver, shaped per the spec. A completed job inlines its response (which equals what result_url
// answers), a failed one its error. An endpoint with a small max_response_payload_kbs gets
// response_omitted instead, an endpoint not subscribed to an event gets nothing, and an unknown or
// disabled endpoint refuses the submit with 400 naming it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startReceiver, type Receiver, type Received } from '../helpers/webhook-receiver.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const VK_LIMITED = 'sk-bf-async-limited-0123456789';

let mock: MockProvider;
let receiver: Receiver;
let gw: InProcessGateway;

before(async () => {
  [mock, receiver] = await Promise.all([startMockProvider(), startReceiver()]);
  receiver.setSecret(SECRET);
  const hook = (name: string, over: Record<string, unknown> = {}) => ({
    name,
    url: `${receiver.url}?to=${name}`,
    events: ['async_job.completed', 'async_job.failed'],
    secret: 'env.SKYBRIDGE_TEST_WH_SECRET',
    allow_private_network: true,
    include_response: true,
    ...over,
  });
  gw = await startGateway(
    {
      providers: mockProviders(mock.url),
      logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
      governance: {
        // Deliveries to private-network receivers need dashboard authentication configured.
        auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'webhook-async-admin-password' },
        rate_limits: [{ id: 'one-per-hour', request_max_limit: 1, request_reset_duration: '1h' }],
        virtual_keys: [{ id: 'vk-limited', name: 'limited', value: VK_LIMITED, rate_limit_id: 'one-per-hour', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] }],
      },
      webhooks: [hook('full'), hook('tiny', { max_response_payload_kbs: 0 }), hook('done-only', { events: ['async_job.completed'] }), hook('paused', { disabled: true })],
    },
    { env: { SKYBRIDGE_TEST_WH_SECRET: SECRET } },
  );
});

after(async () => {
  await gw?.stop();
  await receiver?.close();
  await mock?.close();
});

async function submit(hook: string, content: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-async-webhook': hook },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function arrivalFor(jobId: string): Promise<Received> {
  let r: Received | undefined;
  await eventually(() => {
    r = receiver.received.find((x) => x.json.data.job_id === jobId);
    assert.ok(r, `no delivery for job ${jobId}`);
  }, 15_000);
  return r!;
}

test('a completed job: signed async_job.completed with the response inlined, equal to result_url', async () => {
  const sub = await submit('full', 'Hello');
  assert.equal(sub.status, 202, JSON.stringify(sub.body));
  const r = await arrivalFor(String(sub.body.id));
  assert.equal(r.verified, true);
  assert.equal(r.json.event, 'async_job.completed');
  const d = r.json.data;
  assert.equal(d.status, 'completed');
  assert.equal(d.status_code, 200);
  assert.equal(typeof d.request_type, 'string');
  assert.ok(Date.parse(String(d.result_expires_at)) > Date.now());
  const fetched = await fetch(`${gw.url}${String(d.result_url)}`);
  assert.equal(fetched.status, 200);
  const job = (await fetched.json()) as { result: unknown };
  assert.deepEqual(d.response, job.result);
  assert.equal(d.response_omitted, undefined);
});

test('a failed job: async_job.failed with the error; too large to inline -> response_omitted', async () => {
  mock.inject({ format: 'openai', model: 'gpt-4o', status: 400, message: 'the mock refuses this one' });
  const failed = await submit('full', 'fail please');
  const rf = await arrivalFor(String(failed.body.id));
  assert.equal(rf.json.event, 'async_job.failed');
  assert.equal(rf.json.data.status, 'failed');
  assert.equal(rf.json.data.status_code, 400);
  assert.match(JSON.stringify(rf.json.data.error), /the mock refuses this one/);
  assert.equal(rf.json.data.response, undefined);

  const tiny = await submit('tiny', 'Hello');
  const rt = await arrivalFor(String(tiny.body.id));
  assert.equal(rt.json.data.response, undefined);
  assert.equal(rt.json.data.response_omitted, true);
});

test('not subscribed at finish: no delivery; unknown or disabled endpoint: the submit is refused', async () => {
  mock.inject({ format: 'openai', model: 'gpt-4o', status: 400, message: 'nope' });
  const sub = await submit('done-only', 'fail please');
  assert.equal(sub.status, 202);
  await eventually(async () => {
    const v = (await (await fetch(`${gw.url}/v1/async/chat/completions/${String(sub.body.id)}`)).json()) as { status: string };
    assert.equal(v.status, 'failed');
  }, 10_000);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(receiver.received.filter((x) => x.json.data.job_id === sub.body.id).length, 0);
  for (const name of ['nowhere', 'paused']) {
    const res = await submit(name, 'Hello');
    assert.equal(res.status, 400);
    const err = (res.body as { error: { message: string; param: string } }).error;
    assert.equal(err.param, 'x-bf-async-webhook');
    assert.match(err.message, new RegExp(`'${name}'`));
  }
});

test('a refused webhook uses up no request of the caller\'s rate limit', async () => {
  const send = (hook: string) =>
    fetch(`${gw.url}/v1/async/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-async-webhook': hook, 'x-bf-vk': VK_LIMITED },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'limited' }] }),
    });
  for (const name of ['no-such-endpoint', 'paused']) assert.equal((await send(name)).status, 400, name);
  // The one request the hour allows is still there, and only one.
  const ok = await send('full');
  assert.equal(ok.status, 202, await ok.text());
  assert.equal((await send('full')).status, 429);
});
