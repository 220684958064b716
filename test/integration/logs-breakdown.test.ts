// Usage breakdowns and exports of the request-log store, one suite run on SQLite and on a real
// PostgreSQL: requests, errors by whose they were, tokens, spend, cache savings and latency
// percentiles per provider, model, virtual key and team, every bucket present (empty ones as 0),
// MCP tool calls beside them; and an export that pages through every match in order.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { openSqliteStore } from '../../proxy/src/logs/sqlite-store.ts';
import { openPostgresStore } from '../../proxy/src/logs/postgres-store.ts';
import type { SqlLogStore } from '../../proxy/src/logs/sql-store.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';
import { parseFilters } from '../../proxy/src/logs/query.ts';

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const MIN = 60_000;

const rec = (id: string, minute: number, extra: Partial<LogRecord>): LogRecord => ({
  id,
  timestamp: T0 + minute * MIN,
  object: 'chat.completion',
  status: 'success',
  status_code: 200,
  ...extra,
});

const RECORDS: LogRecord[] = [
  rec('a1', 0, { provider: 'openai', model: 'gpt-4o', virtual_key_id: 'vk-a', virtual_key_name: 'Alpha', team_id: 'team-a', total_tokens: 30, cost: 0.3, latency: 100 }),
  rec('a2', 1, { provider: 'openai', model: 'gpt-4o', virtual_key_id: 'vk-a', virtual_key_name: 'Alpha', team_id: 'team-a', total_tokens: 10, cost: 0.1, latency: 200, cache_hit: true }),
  rec('a3', 2, { provider: 'openai', model: 'gpt-4o-mini', virtual_key_id: 'vk-b', team_id: 'team-b', status: 'error', status_code: 400, error_class: 'client', latency: 5 }),
  rec('a4', 3, { provider: 'anthropic', model: 'claude', virtual_key_id: 'vk-b', team_id: 'team-b', status: 'error', status_code: 503, error_class: 'upstream', latency: 1000 }),
  rec('a5', 4, { provider: 'anthropic', model: 'claude', status: 'error', status_code: 502, error_class: 'gateway', latency: 50 }),
  // Minute 9 leaves buckets 5-8 empty in between: they must be there, as zeros.
  rec('a6', 9, { provider: 'gemini', model: 'gemini-2', total_tokens: 5, cost: 0.05, latency: 300 }),
  // A child (an agent turn) is part of its parent: never counted on its own.
  rec('a7', 9, { provider: 'openai', model: 'gpt-4o', parent_request_id: 'a1', total_tokens: 1000, cost: 10 }),
];

let pg: RunningPostgres | undefined;
let dir = '';

const BACKENDS: { name: string; open(): Promise<SqlLogStore>; setup(): Promise<void>; teardown(): Promise<void> }[] = [
  {
    name: 'sqlite',
    setup: async () => void (dir = mkdtempSync(join(tmpdir(), 'skybridge-breakdown-'))),
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
    open: () => openSqliteStore(join(dir, 'logs.db')),
  },
  {
    name: 'postgres',
    setup: async () => void (pg = await startPostgres()),
    teardown: async () => pg?.stop(),
    open: async () => openPostgresStore({ host: '127.0.0.1', port: String(pg!.port), user: pg!.user, password: '', db_name: await pg!.createDatabase('breakdown'), ssl_mode: 'disable' }),
  },
];

// The window: minutes 0-9 from T0, in one-minute buckets.
const WINDOW = { start: T0, end: T0 + 10 * MIN - 1, bucketMs: MIN };

for (const backend of BACKENDS) {
  describe(`usage breakdowns on ${backend.name}`, () => {
    let store: SqlLogStore;
    before(async () => {
      await backend.setup();
      store = await backend.open();
      await store.insert(RECORDS);
      await store.driver.insert([
        {
          table: 'mcp_tool_logs',
          columns: ['id', 'timestamp', 'client', 'tool', 'status', 'latency', 'cost', 'source'],
          types: ['text', 'bigint', 'text', 'text', 'text', 'double precision', 'double precision', 'text'],
          rows: [
            ['m1', T0 + MIN, 'files', 'read_file', 'success', 3, 0, 'agent'],
            ['m2', T0 + MIN, 'files', 'read_file', 'error', 3, 0, 'agent'],
            ['m3', T0 + 9 * MIN, 'web', 'search', 'success', 9, 0, 'execute'],
          ],
        },
      ]);
    });
    after(async () => {
      await store?.close();
      await backend.teardown();
    });

    test('totals: errors split by whose they were; a cache hit is saved spend, not spend; children are not counted', async () => {
      const b = await store.breakdown({}, WINDOW, 'provider', 8);
      assert.equal(b.totals.requests, 6);
      assert.equal(b.totals.client_errors, 1);
      assert.equal(b.totals.upstream_errors, 1);
      assert.equal(b.totals.gateway_errors, 1);
      assert.equal(b.totals.total_tokens, 45);
      assert.ok(Math.abs(b.totals.cost - 0.35) < 1e-9, String(b.totals.cost));
      assert.equal(b.totals.cache_hits, 1);
      assert.ok(Math.abs(b.totals.saved_cost - 0.1) < 1e-9);
      // p50 of [5, 50, 100, 200, 300, 1000] is 100 (binned: within the bin's ~35% width).
      assert.ok(b.totals.p50_latency! >= 74 && b.totals.p50_latency! <= 135, String(b.totals.p50_latency));
      assert.ok(b.totals.p99_latency! >= 740 && b.totals.p99_latency! <= 1350, String(b.totals.p99_latency));
    });

    test('every bucket of the window is present, an empty one 0 for counts and null for latency', async () => {
      const b = await store.breakdown({}, WINDOW, 'provider', 8);
      assert.equal(b.times.length, 10);
      assert.equal(b.times[0], new Date(T0).toISOString());
      assert.deepEqual(b.series.requests, [1, 1, 1, 1, 1, 0, 0, 0, 0, 1]);
      assert.equal(b.series.p95_latency[6], null);
      assert.equal(b.bucket_size_seconds, 60);
    });

    test('by provider, model, virtual key (with its name) and team, busiest first', async () => {
      const byProvider = await store.breakdown({}, WINDOW, 'provider', 8);
      assert.deepEqual(byProvider.groups.map((g) => [g.id, g.totals.requests]), [['openai', 3], ['anthropic', 2], ['gemini', 1]]);
      const anthropic = byProvider.groups.find((g) => g.id === 'anthropic')!;
      assert.equal(anthropic.totals.upstream_errors, 1);
      assert.equal(anthropic.totals.gateway_errors, 1);
      assert.deepEqual(anthropic.series.requests, [0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
      const byModel = await store.breakdown({}, WINDOW, 'model', 8);
      assert.deepEqual(byModel.groups.map((g) => g.id), ['claude', 'gpt-4o', 'gemini-2', 'gpt-4o-mini']);
      const byKey = await store.breakdown({}, WINDOW, 'virtual_key', 8);
      assert.deepEqual(byKey.groups.map((g) => [g.id, g.name ?? null, g.totals.requests]), [['', null, 2], ['vk-a', 'Alpha', 2], ['vk-b', null, 2]]);
      const byTeam = await store.breakdown({}, WINDOW, 'team', 8);
      const teamA = byTeam.groups.find((g) => g.id === 'team-a')!;
      assert.ok(Math.abs(teamA.totals.cost - 0.3) < 1e-9);
      assert.equal(teamA.totals.cache_hits, 1);
    });

    test('beyond the limit the rest is summed as other; filters apply', async () => {
      const b = await store.breakdown({}, WINDOW, 'model', 2);
      assert.equal(b.groups.length, 2);
      assert.equal(b.other?.totals.requests, 2);
      assert.equal(b.other?.id, '2 more');
      const openaiOnly = await store.breakdown(parseFilters({ providers: 'openai' }), WINDOW, 'model', 8);
      assert.equal(openaiOnly.totals.requests, 3);
    });

    test('MCP tool calls of the window: per bucket and by tool', async () => {
      const b = await store.breakdown({}, WINDOW, 'provider', 8);
      assert.deepEqual(b.mcp.calls, [0, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
      assert.deepEqual(b.mcp.errors, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
      assert.deepEqual(b.mcp.tools, [{ tool: 'read_file', calls: 2, errors: 1 }, { tool: 'search', calls: 1, errors: 0 }]);
    });

    test('a record keeps its status code, error class and cache hit', async () => {
      const e = await store.get('a4');
      assert.equal(e?.status_code, 503);
      assert.equal(e?.error_class, 'upstream');
      assert.equal(e?.cache_hit, false);
      assert.equal((await store.get('a2'))?.cache_hit, true);
    });

    test('scan pages through every match in order, a batch at a time', async () => {
      const batches: string[][] = [];
      for await (const batch of store.scan({}, { sort_by: 'timestamp', order: 'desc' }, 2)) batches.push(batch.map((e) => e.id));
      assert.deepEqual(batches, [['a6', 'a5'], ['a4', 'a3'], ['a2', 'a1']]);
      const byLatency: string[] = [];
      for await (const batch of store.scan(parseFilters({ providers: 'anthropic,gemini' }), { sort_by: 'latency', order: 'desc' }, 1)) byLatency.push(...batch.map((e) => e.id));
      assert.deepEqual(byLatency, ['a4', 'a6', 'a5']);
    });
  });
}
