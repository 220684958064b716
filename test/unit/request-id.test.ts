// Request ids on their own: which client ids are kept, the shape and uniqueness of made ones, the
// error object's request_id, the provider's id relayed under its own name, the webhook payload's
// request_id, the /api/logs filter, the access line's level per path, and the logs store's
// migration on a real SQLite database (a record and a job written and read back with the id).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceptableRequestId, MAX_REQUEST_ID_LENGTH, newRequestId, requestIdFrom } from '../../proxy/src/request-id.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { relayHeaders } from '../../proxy/src/pipeline/body-relay.ts';
import { relayedAnswerHeaders } from '../../proxy/src/endpoints/passthrough-request.ts';
import { deliveryBody, storedData } from '../../proxy/src/webhooks/payload.ts';
import { buildWhere, parseFilters } from '../../proxy/src/logs/query.ts';
import { accessLevel } from '../../proxy/src/http/access-log.ts';
import { SqliteDriver } from '../../proxy/src/logs/sqlite-driver.ts';
import { SqlLogStore } from '../../proxy/src/logs/sql-store.ts';
import { JobStore } from '../../proxy/src/async/job-store.ts';

test('a client id is kept when it is a bounded plain token, else refused', () => {
  for (const ok of ['abc', 'req_123', '0f8fad5b-d9cb-469f-a165-70867728950e', '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'Root=1-5759e988:bd862e3fe1be46a994272793', 'a+b/c==', 'x'.repeat(MAX_REQUEST_ID_LENGTH)]) {
    assert.equal(acceptableRequestId(ok), ok, ok);
    assert.equal(requestIdFrom(ok), ok);
  }
  for (const bad of ['', 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'a b', 'a,b', 'a, b', 'quote"', 'semi;colon', 'tab\t', 'new\nline', 'caf\u00e9', '<script>']) {
    assert.equal(acceptableRequestId(bad), undefined, JSON.stringify(bad));
    assert.notEqual(requestIdFrom(bad), bad);
  }
  // A repeated header (node gives an array for some headers) is not one id.
  assert.equal(acceptableRequestId(['a', 'b']), undefined);
  assert.equal(acceptableRequestId(undefined), undefined);
});

test('made ids: one random prefix per process and a counter, all unique and all acceptable', () => {
  const ids = Array.from({ length: 10_000 }, () => newRequestId());
  assert.equal(new Set(ids).size, ids.length);
  const prefixes = new Set(ids.map((id) => id.slice(0, 9)));
  assert.equal(prefixes.size, 1);
  for (const id of ids.slice(0, 50)) {
    assert.match(id, /^[A-Za-z0-9_-]{8}-[0-9a-z]{6,}$/);
    assert.equal(acceptableRequestId(id), id, 'a made id is kept when a client sends it back');
  }
});

test('the error object carries request_id when one is given, nothing otherwise', () => {
  const e = new GatewayError(429, 'slow down', { code: 'rate_limited' });
  assert.equal(e.toBody(undefined, 'rid-1').error.request_id, 'rid-1');
  assert.deepEqual(e.toBody(), { is_bifrost_error: true, status_code: 429, error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limited' } });
});

test("a provider's x-request-id goes on as x-upstream-request-id: relayed bodies and passthrough", () => {
  const relayed = relayHeaders({ 'content-type': 'audio/mpeg', 'x-request-id': 'req_up' }, 'application/octet-stream');
  assert.equal(relayed['x-request-id'], undefined);
  assert.equal(relayed['x-upstream-request-id'], 'req_up');
  assert.deepEqual(relayHeaders({}, 'text/plain'), { 'content-type': 'text/plain' });
  const passed = relayedAnswerHeaders({ 'content-type': 'application/json', 'x-request-id': 'req_up2', 'openai-processing-ms': '5' });
  assert.equal(passed['x-request-id'], undefined);
  assert.equal(passed['x-upstream-request-id'], 'req_up2');
  assert.equal(passed['openai-processing-ms'], '5');
});

test("webhook payloads name the submit's request id when the job has one", () => {
  const base = { id: 'job_1', request_type: 'chat_completion', status: 'completed' as const, status_code: 200, result_url: '/v1/async/chat/completions/job_1', result_expires_at: new Date(Date.now() + 60_000).toISOString() };
  const body = JSON.parse(deliveryBody('async_job.completed', Date.now(), storedData({ ...base, request_id: 'rid-9' }, false, 256), undefined));
  assert.equal(body.data.request_id, 'rid-9');
  assert.equal(body.data.job_id, 'job_1');
  assert.equal('request_id' in storedData(base, false, 256), false);
});

test('/api/logs request_id: every record of the request (agent turns too), bounded like the ids', () => {
  const f = parseFilters({ request_id: ' rid-7 ' });
  assert.equal(f.request_id, 'rid-7');
  const where = buildWhere(f, 'LIKE');
  assert.match(where.sql, /l\.request_id = \?/);
  assert.doesNotMatch(where.sql, /parent_request_id IS NULL/, 'children match too');
  assert.ok(where.params.includes('rid-7'));
  assert.match(buildWhere(parseFilters({}), 'LIKE').sql, /parent_request_id IS NULL/);
  assert.throws(() => parseFilters({ request_id: 'r'.repeat(MAX_REQUEST_ID_LENGTH + 1) }), (err: GatewayError) => err.status === 400 && err.param === 'request_id');
});

test('access lines: inference and writes at info; probes, scrapes, the dashboard and its polling of /api at debug', () => {
  assert.equal(accessLevel('POST', '/v1/chat/completions'), 'info');
  assert.equal(accessLevel('GET', '/v1/models'), 'info');
  assert.equal(accessLevel('POST', '/api/governance/virtual-keys'), 'info');
  assert.equal(accessLevel('DELETE', '/api/cache/clear/x'), 'info');
  for (const [m, p] of [['GET', '/health'], ['GET', '/ready'], ['GET', '/metrics'], ['GET', '/api/logs'], ['GET', '/api/dashboard'], ['GET', '/'], ['GET', '/assets/app-1234.js']] as const) {
    assert.equal(accessLevel(m, p), 'debug', `${m} ${p}`);
  }
});

test('the logs store keeps request_id on records and async jobs (migration 11, SQLite)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-reqid-'));
  const driver = new SqliteDriver(join(dir, 'logs.db'));
  try {
    const store = await SqlLogStore.open(driver);
    await store.insert([{ id: 'rec-1', request_id: 'rid-a', timestamp: Date.now(), object: 'chat.completion', status: 'success' }]);
    const found = await store.search(parseFilters({ request_id: 'rid-a' }), { limit: 10, offset: 0, sort_by: 'timestamp', order: 'desc' });
    assert.deepEqual(found.logs.map((l) => [l.id, l.request_id]), [['rec-1', 'rid-a']]);
    const jobs = new JobStore(driver);
    const now = Date.now();
    await jobs.insert({ id: 'job-1', operation: 'chat', path: 'chat/completions', request_type: 'chat_completion', virtual_key_id: undefined, request_body: '{}', request_headers: '{}', webhook: undefined, created_at: now, ttl_seconds: 60, request_id: 'rid-b' });
    assert.equal((await jobs.get('job-1'))?.request_id, 'rid-b');
  } finally {
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
