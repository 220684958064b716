// Delivery under failure, through running gateways and real receivers: the retry schedule with
// shortened backoff (same webhook-id on every attempt), exhaustion and redelivery, timeouts,
// connection resets and slow receivers, the connect-time address check, and a gateway killed in the
// middle of a delivery (the same webhook-id arrives after the restart).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, basic, type Api } from '../helpers/api.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ENV = { SKYBRIDGE_TEST_WH_SECRET: SECRET };

interface Delivery {
  id: string;
  state: string;
  sends: number;
  attempts: { send: number; attempt: number; status_code: number | null; outcome: string; error?: string; started_at: string }[];
}

let receiver: Receiver;
let gw: RunningGateway;
let api: Api;

const endpoint = (name: string, url: string, over: Record<string, unknown> = {}) => ({
  name,
  url,
  events: ['async_job.completed', 'async_job.failed'],
  secret: 'env.SKYBRIDGE_TEST_WH_SECRET',
  allow_private_network: true,
  retry_backoff_initial_seconds: 1,
  retry_backoff_max_seconds: 2,
  attempt_timeout_seconds: 1,
  ...over,
});

function config(url: string, extra: Record<string, unknown>[] = []) {
  return {
    client: { enable_logging: true },
    governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } },
    webhooks: [endpoint('flaky', url), endpoint('once', url, { max_retries: 1 }), endpoint('public-only', url.replace('127.0.0.1', hostname()).replace('http:', 'https:'), { allow_private_network: false }), ...extra],
  };
}

before(async () => {
  receiver = await startReceiver();
  receiver.setSecret(SECRET);
  gw = await startGateway(config(receiver.url), { env: ENV });
  api = apiClient(gw, basic(ADMIN, PASSWORD));
});

after(async () => {
  await gw?.stop();
  await receiver?.close();
});

async function sendTest(a: Api, name: string): Promise<string> {
  const res = await a<{ delivery: Delivery }>('POST', `/api/webhooks/${name}/test`, { event: 'async_job.completed' });
  assert.equal(res.status, 202, res.text);
  return res.body.delivery.id;
}

async function until(a: Api, id: string, state: string, timeoutMs = 15_000): Promise<Delivery> {
  let d!: Delivery;
  await eventually(async () => {
    d = (await a<{ deliveries: Delivery[] }>('GET', `/api/webhooks/deliveries?delivery_id=${id}`)).body.deliveries[0];
    assert.equal(d?.state, state);
  }, timeoutMs);
  return d;
}

const arrivals = (id: string) => receiver.received.filter((r) => r.id === id);

test('500s then success: retried after 1 s, 2 s, 2 s (doubling, capped) with the same webhook-id', async () => {
  let seen = 0;
  receiver.behave((_n, r) => (r.headers['webhook-id'] && arrivals(r.id).length <= 3 ? (seen++, 500) : 200));
  const id = await sendTest(api, 'flaky');
  const d = await until(api, id, 'delivered');
  const got = arrivals(id);
  assert.equal(got.length, 4);
  assert.ok(seen >= 3);
  assert.ok(got.every((r) => r.verified), 'every attempt is signed (fresh timestamp, same id)');
  const gaps = got.slice(1).map((r, i) => (r.at - got[i].at) / 1000);
  const expected = [1, 2, 2];
  gaps.forEach((g, i) => assert.ok(g >= expected[i] - 0.05 && g < expected[i] + 1.5, `gap ${i}: ${g}s, expected ~${expected[i]}s`));
  assert.deepEqual(d.attempts.map((a) => [a.attempt, a.status_code, a.outcome]), [[1, 500, 'failure'], [2, 500, 'failure'], [3, 500, 'failure'], [4, 200, 'success']]);
});

test('retries run out: exhausted after 1 + max_retries attempts; redeliver re-queues it as a new send', async () => {
  receiver.behave(() => 503);
  const id = await sendTest(api, 'once');
  const d = await until(api, id, 'exhausted');
  assert.equal(d.attempts.length, 2);
  assert.equal(arrivals(id).length, 2);
  const statusFiltered = (await api<{ deliveries: Delivery[] }>('GET', '/api/webhooks/deliveries?outcome=exhausted&status_class=5xx')).body.deliveries.map((x) => x.id);
  assert.ok(statusFiltered.includes(id));
  receiver.behave(() => 200);
  const again = await api<{ delivery: Delivery }>('POST', `/api/webhooks/deliveries/${id}/redeliver`, {});
  assert.equal(again.status, 202);
  const done = await until(api, id, 'delivered');
  assert.equal(done.sends, 2);
  assert.deepEqual(done.attempts.map((a) => [a.send, a.attempt, a.outcome]), [[1, 1, 'failure'], [1, 2, 'failure'], [2, 1, 'success']]);
  assert.equal(arrivals(id).length, 3, 'same webhook-id on the new send');
  assert.equal((await api('POST', `/api/webhooks/deliveries/${id}/redeliver`, {})).status, 202);
  await until(api, id, 'delivered');
});

test('timeout, connection reset and a slow receiver: the first two retried, the last delivered', async () => {
  receiver.behave((_n, r) => {
    const k = arrivals(r.id).length;
    return k === 1 ? 'hang' : k === 2 ? 'reset' : { delayMs: 500, status: 204 };
  });
  const id = await sendTest(api, 'flaky');
  const d = await until(api, id, 'delivered');
  assert.equal(d.attempts.length, 3);
  assert.match(d.attempts[0].error ?? '', /timed out after 1000 ms/);
  assert.equal(d.attempts[0].status_code, null);
  assert.ok(d.attempts[1].error, 'a reset is a failed attempt');
  assert.equal(d.attempts[2].status_code, 204);
  const none = (await api<{ deliveries: Delivery[] }>('GET', '/api/webhooks/deliveries?status_class=none')).body.deliveries.map((x) => x.id);
  assert.ok(!none.includes(id), 'the last answer had a status');
});

// This machine's own name resolves (through /etc/hosts) to a loopback or private address: a receiver
// name that passes the URL check but resolves inward is stopped when the connection opens.
test('connect-time check: a name resolving to a private address is refused without allow_private_network; nothing arrives', async () => {
  receiver.behave(() => 200);
  const before = receiver.received.length;
  const res = await apiClient(gw, basic(ADMIN, PASSWORD))<{ delivery: Delivery }>('POST', '/api/webhooks/public-only/test', {});
  assert.equal(res.status, 202);
  let d!: Delivery;
  await eventually(async () => {
    d = (await api<{ deliveries: Delivery[] }>('GET', `/api/webhooks/deliveries?delivery_id=${res.body.delivery.id}`)).body.deliveries[0];
    assert.ok(d.attempts.length >= 1);
  }, 10_000);
  assert.match(d.attempts[0].error ?? '', new RegExp(`refusing to connect to ${hostname()}: \\S+ is a (loopback|private|unique-local \\(private\\)) address`));
  assert.equal(receiver.received.length, before);
});

test('a redirect is not followed: a 3xx answer is a failed attempt', async () => {
  const target = await startReceiver();
  receiver.behave(() => ({ redirect: target.url }));
  const id = await sendTest(api, 'once');
  const d = await until(api, id, 'exhausted');
  assert.equal(d.attempts[0].status_code, 307);
  assert.equal(target.received.length, 0);
  await target.close();
});

test('max_concurrent_deliveries bounds the attempts in flight per endpoint on a node', async () => {
  const r = await startReceiver();
  r.behave(() => ({ delayMs: 300, status: 200 }));
  const g = await startGateway({ ...config(r.url), webhooks: [endpoint('narrow', r.url, { max_concurrent_deliveries: 2 })] }, { env: ENV });
  try {
    const a = apiClient(g, basic(ADMIN, PASSWORD));
    for (let i = 0; i < 6; i++) await sendTest(a, 'narrow');
    await eventually(() => assert.equal(r.received.length, 6), 10_000);
    assert.equal(r.maxInFlight(), 2);
  } finally {
    await g.stop();
    await r.close();
  }
});

test('killed mid-delivery: after the restart the same webhook-id arrives (lease expiry)', async () => {
  const r = await startReceiver();
  r.setSecret(SECRET);
  r.behave((n) => (n === 0 ? 'hang' : 200));
  const cfg = { ...config(r.url), webhooks: [endpoint('durable', r.url, { attempt_timeout_seconds: 2 })] };
  const g1 = await startGateway(cfg, { env: ENV });
  const a1 = apiClient(g1, basic(ADMIN, PASSWORD));
  const id = await sendTest(a1, 'durable');
  await eventually(() => assert.equal(r.received.length, 1), 5000);
  g1.process.kill('SIGKILL');
  await new Promise((res) => g1.process.once('exit', res));
  const g2 = await startGateway(undefined, { env: ENV, appDir: g1.appDir });
  try {
    const a2 = apiClient(g2, basic(ADMIN, PASSWORD));
    const d = await until(a2, id, 'delivered', 20_000);
    assert.equal(r.received.length, 2);
    assert.equal(r.received[1].id, id, 'the same webhook-id');
    assert.equal(r.received[1].verified, true);
    assert.equal(d.attempts.at(-1)?.status_code, 200);
  } finally {
    await g2.stop();
    await r.close();
  }
});
