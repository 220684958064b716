// Webhook building blocks on their own: the retry schedule, the payload rules (inline cap, *_omitted,
// result_expired), receiver address checks, sealing of stored values, config rules, and the delivery
// queue's leases on a real SQLite database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { retryDelayMs } from '../../proxy/src/webhooks/schedule.ts';
import { deliveryBody, storedData } from '../../proxy/src/webhooks/payload.ts';
import { privateAddress, receiverUrlProblem, refusedReceiverAddress } from '../../proxy/src/upstream/egress.ts';
import { generateSecret, seal, unseal } from '../../proxy/src/webhooks/crypto.ts';
import { WEBHOOK_DEFAULTS } from '../../proxy/src/schema/webhooks.ts';
import { webhookConfigErrors } from '../../proxy/src/config/webhook-rules.ts';
import { SqliteDriver } from '../../proxy/src/logs/sqlite-driver.ts';
import { MIGRATIONS } from '../../proxy/src/logs/migrations.ts';
import { DeliveryQueue } from '../../proxy/src/webhooks/queue.ts';
import { checkWebhookForSubmit, enqueueJobEvent, type JobEvent } from '../../proxy/src/webhooks/enqueue.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';

const job = (over: Partial<JobEvent['job']> = {}): JobEvent['job'] => ({
  id: 'job_1',
  request_type: 'chat_completion',
  status: 'completed',
  status_code: 200,
  result_url: '/v1/async/chat/completions/job_1',
  result_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  response: { id: 'chatcmpl-1', choices: [] },
  ...over,
});

test('retry schedule: 30 s doubling to the 1800 s cap by default, none after max_retries', () => {
  const s = WEBHOOK_DEFAULTS;
  assert.deepEqual([1, 2, 3, 4].map((n) => retryDelayMs(n, s)), [30_000, 60_000, 120_000, 240_000]);
  assert.equal(retryDelayMs(5, s), undefined);
  const long = { ...s, max_retries: 10 };
  assert.equal(retryDelayMs(7, long), 1_800_000);
  assert.equal(retryDelayMs(1, { ...s, max_retries: 0 }), undefined);
});

test('payload: response inlined only with include_response and within max_response_payload_kbs', () => {
  assert.equal(storedData(job(), false, 256).response, undefined);
  assert.deepEqual(storedData(job(), true, 256).response, { id: 'chatcmpl-1', choices: [] });
  const big = storedData(job({ response: { text: 'x'.repeat(2048) } }), true, 1);
  assert.equal(big.response, undefined);
  assert.equal(big.response_omitted, true);
  const failed = storedData(job({ status: 'failed', status_code: 500, response: undefined, error: { error: { message: 'boom' } } }), true, 256);
  assert.deepEqual(failed.error, { error: { message: 'boom' } });
  assert.equal(failed.response, undefined);
  const failedBig = storedData(job({ status: 'failed', status_code: 500, error: { m: 'y'.repeat(5000) } }), true, 4);
  assert.equal(failedBig.error_omitted, true);
});

test('payload: spec fields, and result_expired drops the inline response', () => {
  const data = storedData(job(), true, 256);
  const created = Date.UTC(2026, 0, 2, 3, 4, 5);
  const body = JSON.parse(deliveryBody('async_job.completed', created, data, Date.now() + 60_000));
  assert.equal(body.event, 'async_job.completed');
  assert.equal(body.created_at, '2026-01-02T03:04:05.000Z');
  assert.deepEqual(Object.keys(body.data).sort(), ['job_id', 'request_type', 'response', 'result_expires_at', 'result_url', 'status', 'status_code']);
  const expired = JSON.parse(deliveryBody('async_job.completed', created, data, Date.now() - 1));
  assert.equal(expired.data.result_expired, true);
  assert.equal(expired.data.response, undefined);
});

test('receiver addresses: private, loopback, CGNAT, ULA refused unless allowed; metadata and link-local always', () => {
  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', 'fd12::1', '::ffff:10.0.0.1']) {
    assert.ok(privateAddress(ip), ip);
    assert.ok(refusedReceiverAddress(ip, false), ip);
    assert.equal(refusedReceiverAddress(ip, true), undefined, ip);
  }
  for (const ip of ['169.254.169.254', 'fe80::1', '100.100.100.200']) assert.ok(refusedReceiverAddress(ip, true), ip);
  assert.equal(refusedReceiverAddress('93.184.216.34', false), undefined);
  assert.match(receiverUrlProblem('http://example.com/h', false)!, /https/);
  assert.equal(receiverUrlProblem('https://example.com/h', false), undefined);
  assert.equal(receiverUrlProblem('http://127.0.0.1:9/h', true), undefined);
  assert.match(receiverUrlProblem('https://127.0.0.1/h', false)!, /loopback/);
  assert.match(receiverUrlProblem('https://localhost/h', false)!, /loopback/);
  assert.match(receiverUrlProblem('http://169.254.169.254/latest', true)!, /link-local/);
  assert.match(receiverUrlProblem('http://metadata.google.internal/', true)!, /metadata/);
});

test('stored values are sealed with the encryption key and unreadable without it', () => {
  const secret = generateSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  const sealed = seal(secret, 'a passphrase of some length');
  assert.ok(sealed.startsWith('enc:v1:') && !sealed.includes(secret.slice(6)));
  assert.equal(unseal(sealed, 'a passphrase of some length'), secret);
  assert.throws(() => unseal(sealed, 'another passphrase'), /cannot be decrypted/);
  assert.throws(() => unseal(sealed, undefined), /no encryption_key/);
  assert.equal(seal('plain', undefined), 'plain');
});

test('config rules: unique names, https, reserved headers, backoff order', () => {
  const base = { name: 'a', url: 'https://example.com/h', events: ['async_job.completed' as const] };
  assert.deepEqual(webhookConfigErrors([base]), []);
  const errors = webhookConfigErrors([
    base,
    { ...base },
    { ...base, name: 'b', url: 'http://example.com/h' },
    { ...base, name: 'c', headers: { 'Webhook-Signature': 'x', 'X-Ok': 'y' } },
    { ...base, name: 'd', retry_backoff_initial_seconds: 100, retry_backoff_max_seconds: 10 },
    { ...base, name: 'e', headers: { 'Transfer-Encoding': 'chunked', 'proxy-authorization': 'x', 'X-Keep': 'y' } },
  ]).map((e) => e.path);
  assert.deepEqual(errors, ['webhooks[1].name', 'webhooks[2].url', 'webhooks[3].headers.Webhook-Signature', 'webhooks[4].retry_backoff_max_seconds', 'webhooks[5].headers.Transfer-Encoding', 'webhooks[5].headers.proxy-authorization']);
});

async function queue(): Promise<{ db: SqliteDriver; q: DeliveryQueue }> {
  const db = new SqliteDriver(':memory:');
  await db.migrate(MIGRATIONS);
  return { db, q: new DeliveryQueue(db) };
}

test('queue: a claimed delivery is not claimed again until its lease expires; a stale lease cannot record', async () => {
  const { db, q } = await queue();
  const id = await q.add({ endpoint: 'e', event: 'async_job.completed', data: storedData(job(), false, 256) });
  const now = Date.now();
  const [first] = await q.claim('e', 5, 1000, now);
  assert.equal(first.id, id);
  assert.deepEqual(await q.claim('e', 5, 1000, now + 10), []);
  const [again] = await q.claim('e', 5, 1000, now + 1001);
  assert.equal(again.id, id, 'taken over after the lease ran out');
  const attempt = { deliveryId: id, sendNo: 1, attempt: 1, startedAt: now, durationMs: 1, statusCode: 200, outcome: 'success' as const, node: 'n' };
  assert.equal(await q.finish(first, attempt, { state: 'delivered' }), false, 'the old holder lost its lease');
  assert.equal(await q.finish(again, { ...attempt, attempt: 2 }, { state: 'delivered' }), true);
  assert.equal(await q.redeliver(id), 'queued');
  const [third] = await q.claim('e', 5, 1000);
  assert.equal(third.sendNo, 2);
  assert.equal(third.attempts, 0);
  assert.equal(await q.redeliver(id), 'pending');
  assert.equal(await q.redeliver('nope'), 'missing');
  await db.close();
});

test('enqueueJobEvent: queued when enabled and subscribed, skipped otherwise; submit check names the endpoint', async () => {
  const { db, q } = await queue();
  const snap = compileSnapshot(
    checkConfig(
      {
        webhooks: [
          { name: 'on', url: 'https://example.com/a', events: ['async_job.completed'] },
          { name: 'off', url: 'https://example.com/b', events: ['async_job.completed'], disabled: true },
        ],
      },
      'test',
    ).config,
  );
  assert.equal(await enqueueJobEvent(db, snap, { endpoint: 'on', event: 'async_job.completed', job: job() }), 'queued');
  assert.equal(await enqueueJobEvent(db, snap, { endpoint: 'on', event: 'async_job.failed', job: job({ status: 'failed' }) }), 'skipped');
  assert.equal(await enqueueJobEvent(db, snap, { endpoint: 'off', event: 'async_job.completed', job: job() }), 'skipped');
  assert.equal(await enqueueJobEvent(db, snap, { endpoint: 'gone', event: 'async_job.completed', job: job() }), 'skipped');
  assert.equal((await q.depth()).pending, 1);
  // A repeated enqueue of the same job's event (a recovering worker) adds no second delivery.
  assert.equal(await enqueueJobEvent(db, snap, { endpoint: 'on', event: 'async_job.completed', job: job() }), 'queued');
  assert.equal((await q.depth()).pending, 1);
  assert.equal(checkWebhookForSubmit(snap, 'on'), undefined);
  const missing = checkWebhookForSubmit(snap, 'gone')!;
  assert.equal(missing.status, 400);
  assert.equal(missing.param, 'x-bf-async-webhook');
  assert.match(missing.message, /'gone'.*does not exist/);
  assert.match(checkWebhookForSubmit(snap, 'off')!.message, /'off'.*is disabled/);
  await db.close();
});

test('signatures made with the package verify with it (the receiver side)', () => {
  const secret = generateSecret();
  const body = '{"event":"async_job.completed"}';
  const at = new Date();
  const sig = new Webhook(secret).sign('msg_1', at, body);
  assert.match(sig, /^v1,[A-Za-z0-9+/]+=*$/);
  new Webhook(secret).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': sig });
});

test('history retention deletes finished deliveries and their attempts, never pending ones', async () => {
  const { db, q } = await queue();
  const old = Date.now() - 40 * 86_400_000;
  const done = await q.add({ endpoint: 'e', event: 'async_job.completed', data: storedData(job(), false, 256) }, old);
  const waiting = await q.add({ endpoint: 'e', event: 'async_job.completed', data: storedData(job({ id: 'job_2' }), false, 256) }, old);
  const [claimed] = (await q.claim('e', 5, 1000)).filter((d) => d.id === done);
  await q.finish(claimed, { deliveryId: done, sendNo: 1, attempt: 1, startedAt: old, durationMs: 1, statusCode: 200, outcome: 'success', node: 'n' }, { state: 'delivered' });
  await db.execute('UPDATE webhook_deliveries SET updated_at = ? WHERE id = ?', [old, done]);
  assert.equal(await q.deleteFinishedBefore(Date.now() - 30 * 86_400_000), 1);
  const left = (await db.query('SELECT id FROM webhook_deliveries')).map((r) => r.id);
  assert.deepEqual(left, [waiting]);
  assert.deepEqual(await q.attemptsOf([done]), []);
  await db.close();
});
