// /api/webhooks through a running gateway (SQLite logs store): the secret shown once and never again,
// field validation, test deliveries verified by a real receiver with standardwebhooks, rotation,
// the 403 rule for private-network tests without dashboard auth, history filters and config.json
// endpoints with env.VAR secrets and headers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, basic, type Api, type ApiError } from '../helpers/api.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const CONFIG_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

let receiver: Receiver;
let gw: RunningGateway;
let api: Api;

interface Delivery {
  id: string;
  webhook: string;
  event: string;
  state: string;
  sends: number;
  request_id: string;
  attempts: { send: number; attempt: number; status_code: number | null; outcome: string; error?: string }[];
}

before(async () => {
  receiver = await startReceiver();
  gw = await startGateway(
    {
      client: { enable_logging: true },
      encryption_key: 'env.SKYBRIDGE_TEST_ENC_KEY',
      governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } },
      webhooks: [
        {
          name: 'from-config',
          url: receiver.url,
          events: ['async_job.completed', 'async_job.failed'],
          secret: 'env.SKYBRIDGE_TEST_WH_SECRET',
          headers: { 'x-team': 'env.SKYBRIDGE_TEST_WH_HEADER' },
          allow_private_network: true,
          include_response: true,
        },
      ],
    },
    { env: { SKYBRIDGE_TEST_WH_SECRET: CONFIG_SECRET, SKYBRIDGE_TEST_WH_HEADER: 'team-blue', SKYBRIDGE_TEST_ENC_KEY: 'a test passphrase for sealing' } },
  );
  api = apiClient(gw, basic(ADMIN, PASSWORD));
});

after(async () => {
  await gw?.stop();
  await receiver?.close();
});

const arrivals = (id: string) => receiver.received.filter((r) => r.id === id);

async function delivered(id: string): Promise<Delivery> {
  let d!: Delivery;
  await eventually(async () => {
    const res = await api<{ deliveries: Delivery[] }>('GET', `/api/webhooks/deliveries?delivery_id=${id}`);
    d = res.body.deliveries[0];
    assert.equal(d?.state, 'delivered');
  }, 10_000);
  return d;
}

test('config.json endpoint: env.VAR secret and header, defaults filled in, secret never shown', async () => {
  const res = await api<{ webhook: Record<string, unknown> }>('GET', '/api/webhooks/from-config');
  assert.equal(res.status, 200);
  const w = res.body.webhook;
  assert.equal(w.max_retries, 4);
  assert.equal(w.retry_backoff_initial_seconds, 30);
  assert.equal(w.retry_backoff_max_seconds, 1800);
  assert.equal(w.attempt_timeout_seconds, 10);
  assert.equal(w.max_response_payload_kbs, 256);
  assert.equal(w.max_concurrent_deliveries, 10);
  assert.equal(w.disabled, false);
  assert.equal(w.secret_source, 'env');
  assert.deepEqual(w.headers, { 'x-team': 'env.SKYBRIDGE_TEST_WH_HEADER' });
  assert.ok(!res.text.includes(CONFIG_SECRET) && !res.text.includes('team-blue'));
  const rotate = await api<ApiError>('POST', '/api/webhooks/from-config/rotate-secret', {});
  assert.equal(rotate.status, 409);
  // config.json's webhooks are read-only through /api: the answer names the file to edit.
  assert.match(rotate.body.error.message, /config\.json/);
});

test('test delivery: signed per the spec, verified by the receiver, custom headers sent, history grouped', async () => {
  receiver.setSecret(CONFIG_SECRET);
  const res = await api<{ delivery: Delivery }>('POST', '/api/webhooks/from-config/test', { event: 'async_job.failed' });
  assert.equal(res.status, 202);
  const d = await delivered(res.body.delivery.id);
  const [r] = arrivals(d.id);
  assert.ok(r, 'the receiver got it');
  assert.equal(r.verified, true);
  assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
  assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['x-team'], 'team-blue');
  assert.equal(r.json.event, 'async_job.failed');
  assert.ok(!Number.isNaN(Date.parse(r.json.created_at)));
  assert.equal(r.json.data.status, 'failed');
  assert.equal(r.json.data.status_code, 500);
  assert.equal(typeof r.json.data.job_id, 'string');
  assert.match(String(r.json.data.result_url), /^\/v1\/async\//);
  assert.ok(r.json.data.error, 'include_response inlines the error');
  assert.equal(r.json.data.response, undefined);
  assert.equal(d.attempts.length, 1);
  assert.equal(d.attempts[0].status_code, 200);
  const bad = await api<ApiError>('POST', '/api/webhooks/from-config/test', { event: 'job.done' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, 'event');
});

test('create returns the whsec_ secret once; rotation replaces it at once; the old one no longer verifies', async () => {
  const created = await api<{ webhook: Record<string, unknown>; secret: string }>('POST', '/api/webhooks', {
    name: 'orders',
    url: receiver.url,
    events: ['async_job.completed'],
    allow_private_network: true,
    headers: { authorization: 'Bearer receiver-token-123' },
  });
  assert.equal(created.status, 201, created.text);
  const first = created.body.secret;
  assert.match(first, /^whsec_/);
  assert.equal(created.body.webhook.secret_source, 'generated');
  assert.deepEqual(created.body.webhook.headers, { authorization: '<redacted>' });
  const got = await api('GET', '/api/webhooks/orders');
  assert.ok(!got.text.includes(first.slice(6)) && !got.text.includes('receiver-token-123'));
  // Header values written through /api are sealed at rest with the encryption key.
  const stored = readFileSync(join(gw.appDir, 'config.store.json'), 'utf8');
  assert.ok(!stored.includes('receiver-token-123') && stored.includes('enc:v1:'));
  // /api/config shows webhook header values redacted too (not the sealed blob), env.VAR as it is.
  const doc = await api<{ webhooks: { name: string; headers?: Record<string, string> }[] }>('GET', '/api/config');
  assert.ok(!doc.text.includes('receiver-token-123') && !doc.text.includes('enc:v1:'), doc.text);
  assert.deepEqual(doc.body.webhooks.find((w) => w.name === 'orders')?.headers, { authorization: '<redacted>' });
  assert.deepEqual(doc.body.webhooks.find((w) => w.name === 'from-config')?.headers, { 'x-team': 'env.SKYBRIDGE_TEST_WH_HEADER' });

  const t1 = await api<{ delivery: Delivery }>('POST', '/api/webhooks/orders/test', {});
  const d1 = await delivered(t1.body.delivery.id);
  const r1 = arrivals(d1.id)[0];
  assert.ok(receiver.verify(r1, first));
  assert.equal(r1.headers.authorization, 'Bearer receiver-token-123');
  assert.equal(r1.json.event, 'async_job.completed');

  const rotated = await api<{ secret: string }>('POST', '/api/webhooks/orders/rotate-secret', {});
  assert.equal(rotated.status, 200);
  assert.notEqual(rotated.body.secret, first);
  const t2 = await api<{ delivery: Delivery }>('POST', '/api/webhooks/orders/test', {});
  const r2 = arrivals((await delivered(t2.body.delivery.id)).id)[0];
  assert.ok(receiver.verify(r2, rotated.body.secret));
  assert.ok(!receiver.verify(r2, first), 'no grace window for the old secret');
  assert.ok(!gw.logs().includes(first.slice(6)) && !gw.logs().includes(rotated.body.secret.slice(6)), 'secrets never logged');

  // Update keeps the secret and the redacted header; a secret in the body is refused.
  const upd = await api<{ webhook: Record<string, unknown> }>('PUT', '/api/webhooks/orders', { max_retries: 2, headers: { authorization: '<redacted>', 'x-extra': 'v' } });
  assert.equal(upd.status, 200, upd.text);
  assert.equal(upd.body.webhook.max_retries, 2);
  const t3 = await api<{ delivery: Delivery }>('POST', '/api/webhooks/orders/test', {});
  const r3 = arrivals((await delivered(t3.body.delivery.id)).id)[0];
  assert.ok(receiver.verify(r3, rotated.body.secret));
  assert.equal(r3.headers.authorization, 'Bearer receiver-token-123');
  assert.equal(r3.headers['x-extra'], 'v');
  const withSecret = await api<ApiError>('PUT', '/api/webhooks/orders', { secret: 'whsec_AAAA' });
  assert.equal(withSecret.status, 400);
  assert.equal(withSecret.body.error.param, 'secret');
});

test('create refuses bad input with the field named', async () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ name: 'x1', url: 'https://example.com/h', events: ['async_job.completed'], secret: 'whsec_AAAA' }, 'secret', /never accepted/],
    [{ name: 'x2', url: 'http://example.com/h', events: ['async_job.completed'] }, 'url', /https/],
    [{ name: 'x3', url: 'https://127.0.0.1/h', events: ['async_job.completed'] }, 'url', /loopback/],
    [{ name: 'x4', url: 'https://10.0.0.5/h', events: ['async_job.completed'] }, 'url', /private/],
    [{ name: 'x5', url: 'http://169.254.169.254/latest/meta-data', events: ['async_job.completed'], allow_private_network: true }, 'url', /link-local|metadata/],
    [{ name: 'x6', url: 'https://example.com/h', events: ['async_job.completed'], headers: { 'Webhook-Id': 'x' } }, 'headers.Webhook-Id', /reserved/],
    [{ name: 'x7', url: 'https://example.com/h', events: ['job.done'] }, 'events/0', /./],
    // Hop-by-hop and framing headers are refused (they describe a connection, not the delivery).
    ...['Connection', 'Keep-Alive', 'Transfer-Encoding', 'TE', 'Trailer', 'Upgrade', 'Proxy-Authorization', 'Content-Length'].map((h): [Record<string, unknown>, string, RegExp] => [
      { name: `hop-${h.toLowerCase()}`, url: 'https://example.com/h', events: ['async_job.completed'], headers: { [h]: 'x' } },
      `headers.${h}`,
      new RegExp(`${h.toLowerCase()}.*(hop-by-hop|reserved)`),
    ]),
    [{ name: 'from-config', url: 'https://example.com/h', events: ['async_job.completed'] }, 'name', /already exists/],
  ];
  for (const [body, param, message] of cases) {
    const res = await api<ApiError>('POST', '/api/webhooks', body);
    assert.ok(res.status === 400 || res.status === 409, `${param}: ${res.status} ${res.text}`);
    // The field named as the body has it (`headers.Webhook-Id`, `events[0]` or `events/0`).
    assert.equal(String(res.body.error.param).split(/[.[/]/)[0], param.split(/[./]/)[0], `${param}: ${res.text}`);
    if (param.includes('.')) assert.equal(res.body.error.param, param);
    assert.match(res.body.error.message, message);
  }
});

test('list filters by search, event and status; delete removes the endpoint', async () => {
  await api('POST', '/api/webhooks', { name: 'billing-off', url: 'https://example.com/billing', events: ['async_job.failed'], disabled: true });
  const names = async (q: string) => (await api<{ webhooks: { name: string }[] }>('GET', `/api/webhooks${q}`)).body.webhooks.map((w) => w.name).sort();
  assert.deepEqual(await names('?search=billing'), ['billing-off']);
  assert.deepEqual(await names('?status=disabled'), ['billing-off']);
  assert.ok(!(await names('?event=async_job.completed')).includes('billing-off'));
  assert.ok((await names('?event=async_job.failed')).includes('from-config'));
  assert.equal((await api<ApiError>('GET', '/api/webhooks?status=maybe')).status, 400);
  const test409 = await api<ApiError>('POST', '/api/webhooks/billing-off/test', {});
  assert.equal(test409.status, 409);
  assert.equal((await api('DELETE', '/api/webhooks/billing-off')).status, 200);
  assert.equal((await api('GET', '/api/webhooks/billing-off')).status, 404);
});

test('history filters: outcome, event, status class, webhook, request id, time range', async () => {
  const all = await api<{ deliveries: Delivery[]; total_count: number }>('GET', '/api/webhooks/deliveries?limit=100');
  assert.ok(all.body.total_count >= 4);
  const ids = (q: string) => api<{ deliveries: Delivery[] }>('GET', `/api/webhooks/deliveries?${q}`).then((r) => r.body.deliveries.map((d) => d.id));
  const orders = await api<{ deliveries: Delivery[] }>('GET', '/api/webhooks/orders/deliveries');
  assert.equal(orders.body.deliveries.length, 3);
  assert.ok(orders.body.deliveries.every((d) => d.webhook === 'orders' && d.attempts.length === 1));
  assert.deepEqual((await ids('webhook=orders&status_class=2xx&outcome=delivered')).sort(), orders.body.deliveries.map((d) => d.id).sort());
  assert.deepEqual(await ids('status_class=5xx'), []);
  assert.deepEqual(await ids('outcome=exhausted'), []);
  const failed = await ids('event=async_job.failed');
  assert.equal(failed.length, 1);
  const one = orders.body.deliveries[0];
  assert.deepEqual(await ids(`request_id=${one.request_id}`), [one.id]);
  assert.deepEqual(await ids(`start_time=${new Date(Date.now() + 60_000).toISOString()}`), []);
  assert.equal((await api<ApiError>('GET', '/api/webhooks/deliveries?status_class=6xx')).body.error.param, 'status_class');
  assert.equal((await api('POST', '/api/webhooks/deliveries/msg_nope/redeliver', {})).status, 404);
});

test('metrics count deliveries by outcome and report the queue', async () => {
  // A delivery queued by an earlier test may still be pending on a busy machine: the queue empties.
  await eventually(async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(text, /skybridge_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    assert.match(text, /skybridge_webhook_attempt_duration_seconds_count\{status_class="2xx"\} [1-9]/);
    assert.match(text, /skybridge_webhook_queue_depth 0/);
    assert.match(text, /skybridge_webhook_oldest_pending_age_seconds 0/);
  }, 5000);
});

test('test delivery to an allow_private_network endpoint needs dashboard auth (403 without it)', async () => {
  const open = await startGateway({ client: { enable_logging: true }, webhooks: [{ name: 'lan', url: receiver.url, events: ['async_job.completed'], allow_private_network: true }] });
  try {
    const res = await apiClient(open)<ApiError>('POST', '/api/webhooks/lan/test', {});
    assert.equal(res.status, 403);
    assert.match(res.body.error.message, /auth/);
  } finally {
    await open.stop();
  }
});
