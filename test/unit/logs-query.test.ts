// /api/logs parameters: what a client gets for bad input (400 naming the parameter), what a good
// query turns into (values only as bound parameters), and the bounds that keep a query cheap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildWhere, checkKnownParams, FILTER_PARAMS, MAX_LIMIT, parseFilters, parsePage } from '../../proxy/src/logs/query.ts';
import { bucketStarts, histogramWindow, MAX_BUCKETS } from '../../proxy/src/logs/window.ts';
import { capContent, bitsToEngines, enginesToBits } from '../../proxy/src/logs/record.ts';
import { numberPlaceholders, sslOption } from '../../proxy/src/logs/postgres-store.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

function refused(fn: () => unknown, param: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.param, param);
    assert.match(err.message, new RegExp(param));
    if (message) assert.match(err.message, message);
    return true;
  });
}

test('bad filter values are 400s naming the parameter and why', () => {
  refused(() => parseFilters({ status: 'success,bogus' }), 'status', /bogus/);
  refused(() => parseFilters({ routing_engine_used: 'magic' }), 'routing_engine_used', /routing-rule/);
  refused(() => parseFilters({ start_time: 'yesterday' }), 'start_time', /RFC 3339/);
  refused(() => parseFilters({ end_time: '2026-13-45T99:00:00Z' }), 'end_time');
  refused(() => parseFilters({ start_time: '2026-02-01T00:00:00Z', end_time: '2026-01-01T00:00:00Z' }), 'start_time', /after end_time/);
  refused(() => parseFilters({ min_latency: '-1' }), 'min_latency', /non-negative/);
  refused(() => parseFilters({ max_cost: 'cheap' }), 'max_cost');
  refused(() => parseFilters({ min_tokens: '1.5' }), 'min_tokens', /integer/);
  refused(() => parseFilters({ min_tokens: '10', max_tokens: '5' }), 'min_tokens', /greater than max_tokens/);
  refused(() => parseFilters({ missing_cost_only: 'maybe' }), 'missing_cost_only');
  refused(() => parseFilters({ min_cost: ['1', '2'] }), 'min_cost', /more than once/);
  refused(() => parseFilters({ content_search: 'x'.repeat(257) }), 'content_search');
  refused(() => parseFilters({ models: Array.from({ length: 101 }, (_, i) => `m${i}`).join(',') }), 'models', /at most 100/);
  refused(() => checkKnownParams({ provider: 'openai' }, FILTER_PARAMS), 'provider', /unknown parameter/);
});

test('bad page values are 400s; a too-large limit is capped', () => {
  refused(() => parsePage({ limit: '0' }), 'limit');
  refused(() => parsePage({ limit: 'ten' }), 'limit');
  refused(() => parsePage({ offset: '-3' }), 'offset');
  refused(() => parsePage({ offset: '1000000' }), 'offset', /narrow/);
  refused(() => parsePage({ sort_by: 'name' }), 'sort_by', /timestamp, latency, tokens, cost/);
  refused(() => parsePage({ order: 'up' }), 'order');
  assert.deepEqual(parsePage({}), { limit: 50, offset: 0, sort_by: 'timestamp', order: 'desc' });
  assert.equal(parsePage({ limit: '5000' }).limit, MAX_LIMIT);
});

test('good filters: lists split, trimmed and de-duplicated, repeated list parameters merged, times parsed', () => {
  const f = parseFilters({
    providers: ' openai , anthropic,openai,',
    models: ['a', 'b,c'],
    start_time: '2026-01-10T12:00:00+01:00',
    missing_cost_only: 'true',
    content_search: '  hello ',
    min_latency: '',
  });
  assert.deepEqual(f, {
    providers: ['openai', 'anthropic'],
    models: ['a', 'b', 'c'],
    start_time: Date.UTC(2026, 0, 10, 11),
    missing_cost_only: true,
    content_search: 'hello',
  });
});

test('the WHERE clause carries values only as parameters', () => {
  const hostile = "x' OR 1=1; DROP TABLE logs; --";
  const w = buildWhere(
    parseFilters({ providers: hostile, models: 'm', routing_rule_ids: hostile, content_search: hostile, min_cost: '1', routing_engine_used: 'governance' }),
    'ILIKE',
  );
  assert.ok(!w.sql.includes('DROP'), w.sql);
  assert.ok(!w.sql.includes("x'"), w.sql);
  assert.equal((w.sql.match(/\?/g) ?? []).length, w.params.length);
  assert.ok(w.params.includes(hostile));
  assert.ok(w.params.includes(`%x' OR 1=1; DROP TABLE logs; --%`));
  assert.ok(w.params.includes(enginesToBits(['governance'])));
  assert.deepEqual(buildWhere({}, 'LIKE'), { sql: 'WHERE +l.parent_request_id IS NULL', params: [] }, 'top-level records only');
  assert.deepEqual(buildWhere({}, 'ILIKE', false, false), { sql: 'WHERE l.parent_request_id IS NULL', params: [] }, 'on PostgreSQL too');
  assert.deepEqual(buildWhere(parseFilters({ parent_request_id: 'agent-1' }), 'LIKE'), { sql: 'WHERE l.parent_request_id = ?', params: ['agent-1'] }, 'the children of one request');
});

test('placeholders are numbered for PostgreSQL, quoted text left alone', () => {
  assert.equal(numberPlaceholders("SELECT ? , '?' , x LIKE ? ESCAPE '\\' AND y = ?"), "SELECT $1 , '?' , x LIKE $2 ESCAPE '\\' AND y = $3");
});

test('histogram windows: 24 h by default, never more than the bucket cap, whatever the range', () => {
  const now = Date.UTC(2026, 5, 1);
  const d = histogramWindow({}, now);
  assert.equal(d.end - d.start, 24 * 3600_000);
  assert.equal(d.bucketMs, 900_000);
  for (const span of [1000, 60_000, 3600_000, 86_400_000, 30 * 86_400_000, 3650 * 86_400_000]) {
    const w = histogramWindow({ start_time: now - span, end_time: now }, now);
    const n = bucketStarts(w).length;
    assert.ok(n <= MAX_BUCKETS + 1 && n >= 1, `${span} ms → ${n} buckets`);
  }
});

test('content is capped and says by how much; engines round-trip through the bit set', () => {
  assert.equal(capContent('short', 10), 'short');
  assert.equal(capContent('0123456789abc', 10), '0123456789…[truncated 3 characters]');
  assert.equal(capContent(undefined), undefined);
  assert.deepEqual(bitsToEngines(enginesToBits(['loadbalancing', 'routing-rule'])), ['routing-rule', 'loadbalancing']);
});

test('ssl_mode maps to the driver: no TLS, TLS without checks, or verified TLS', () => {
  assert.equal(sslOption('disable'), false);
  assert.equal(sslOption('prefer'), false);
  assert.deepEqual(sslOption('require'), { rejectUnauthorized: false });
  assert.deepEqual(sslOption('verify-full'), { rejectUnauthorized: true });
  assert.throws(() => sslOption('sometimes'), /ssl_mode/);
});
