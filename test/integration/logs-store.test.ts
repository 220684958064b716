// The request-log store, one suite run twice: against a SQLite file (node:sqlite) and against a real
// PostgreSQL server started for the test. Same records in, same answers out on both engines.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { openSqliteStore, SqliteDriver } from '../../proxy/src/logs/sqlite-store.ts';
import { openPostgresStore, PostgresDriver, type PostgresLogsConfig } from '../../proxy/src/logs/postgres-store.ts';
import { MIGRATIONS } from '../../proxy/src/logs/migrations.ts';
import type { LogStore } from '../../proxy/src/logs/store.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';
import { parseFilters, parsePage, type LogFilters, type Page } from '../../proxy/src/logs/query.ts';
import { histogramWindow } from '../../proxy/src/logs/window.ts';
import { LogWriter } from '../../proxy/src/logs/writer.ts';

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const HOUR = 3600_000;

/** Four requests covering every filter: providers, keys, rules, engines, content, a missing cost. */
const RECORDS: LogRecord[] = [
  {
    id: 'r1', timestamp: T0, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', requested_model: 'fast',
    virtual_key_id: 'vk1', virtual_key_name: 'Team A key', team_id: 'team-a', customer_id: 'cust-1',
    selected_key_id: 'k1', selected_key_name: 'openai-main', routing_rule_ids: ['rA'], routing_rule_name: 'Rule A',
    routing_engines_used: ['routing-rule'], routing_engine_logs: [{ rule: 'rA', matched: true }],
    status: 'success', stream: false, prompt_tokens: 10, completion_tokens: 20, cached_tokens: 4, cost: 0.01, latency: 100,
    input_content: '{"messages":[{"role":"user","content":"Hello Zebra world"}]}', output_content: 'Hi there',
    metadata: { env: 'prod' }, cache_debug: { cache_hit: false },
  },
  {
    id: 'r2', timestamp: T0 + 60_000, object: 'chat.completion', provider: 'anthropic', model: 'claude-sonnet',
    virtual_key_id: 'vk2', selected_key_id: 'k2', routing_engines_used: ['governance'], status: 'success', stream: true,
    prompt_tokens: 100, completion_tokens: 50, cost: 0.2, latency: 300, ttft: 40, number_of_retries: 1, fallback_index: 1,
  },
  {
    id: 'r3', timestamp: T0 + 120_000, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', virtual_key_id: 'vk1',
    selected_key_id: 'k1', routing_rule_ids: ['rA', 'rB'], routing_engines_used: ['routing-rule', 'loadbalancing'], status: 'error',
    error_details: { status: 429, message: 'rate limited' }, latency: 50,
  },
  {
    id: 'r4', timestamp: T0 - 2 * HOUR, object: 'embedding', provider: 'openai', model: 'gpt-4o-mini', status: 'success',
    prompt_tokens: 7, cost: 0.05, latency: 200, input_content: 'I am 100% sure_thing', output_content: '[0.1,0.2]',
  },
];

const PAGE: Page = { limit: 50, offset: 0, sort_by: 'timestamp', order: 'desc' };
const ids = (r: { logs: { id: string }[] }): string[] => r.logs.map((l) => l.id);
const search = async (store: LogStore, q: Record<string, string>, page: Partial<Page> = {}): Promise<string[]> =>
  ids(await store.search(parseFilters(q), { ...PAGE, ...page }));

interface Backend {
  name: string;
  open(db: string): Promise<LogStore>;
  driver(db: string): SqliteDriver | PostgresDriver;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

let pgServer: RunningPostgres | undefined;
const pgConfig = (db: string): PostgresLogsConfig => ({ host: '127.0.0.1', port: String(pgServer!.port), user: pgServer!.user, password: '', db_name: db, ssl_mode: 'disable' });
let dir = '';

const BACKENDS: Backend[] = [
  {
    name: 'sqlite',
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-'));
    },
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
    open: (db) => openSqliteStore(join(dir, db, 'logs.db')),
    driver: (db) => new SqliteDriver(join(dir, db, 'logs.db')),
  },
  {
    name: 'postgres',
    setup: async () => {
      pgServer = await startPostgres();
    },
    teardown: async () => pgServer?.stop(),
    open: async (db) => {
      if (!created.has(db)) created.set(db, pgServer!.createDatabase(db));
      await created.get(db);
      return openPostgresStore(pgConfig(db));
    },
    driver: (db) => new PostgresDriver(pgConfig(db)),
  },
];
const created = new Map<string, Promise<string>>();

for (const backend of BACKENDS) {
  describe(`request log store on ${backend.name}`, () => {
    let store: LogStore;
    before(async () => {
      await backend.setup();
      store = await backend.open('main');
      await store.insert(RECORDS);
    });
    after(async () => {
      await store?.close();
      await backend.teardown();
    });

    test('a page is newest first, without content, with the total count', async () => {
      const r = await store.search({}, PAGE);
      assert.deepEqual(ids(r), ['r3', 'r2', 'r1', 'r4']);
      assert.equal(r.total_count, 4);
      assert.equal(r.logs[2]!.raw_request, undefined, 'a list page carries no content');
    });

    test('one record round-trips every field, content included', async () => {
      const e = await store.get('r1');
      assert.ok(e);
      assert.equal(e.timestamp, new Date(T0).toISOString());
      assert.equal(e.provider, 'openai');
      assert.equal(e.requested_model, 'fast');
      assert.equal(e.virtual_key_name, 'Team A key');
      assert.equal(e.team_id, 'team-a');
      assert.equal(e.customer_id, 'cust-1');
      assert.equal(e.selected_key_id, 'k1');
      assert.deepEqual(e.routing_rule_ids, ['rA']);
      assert.equal(e.routing_rule_id, 'rA');
      assert.deepEqual(e.routing_engines_used, ['routing-rule']);
      assert.deepEqual(e.routing_engine_logs, [{ rule: 'rA', matched: true }]);
      assert.deepEqual(e.token_usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 4 } });
      assert.equal(e.cost, 0.01);
      assert.equal(e.latency, 100);
      assert.equal(e.stream, false);
      assert.deepEqual(e.metadata, { env: 'prod' });
      assert.deepEqual(e.cache_debug, { cache_hit: false });
      assert.match(e.raw_request!, /Hello Zebra/);
      assert.equal(e.raw_response, 'Hi there');
      assert.equal(e.parent_request_id, undefined);
      const e2 = await store.get('r2');
      assert.equal(e2?.ttft, 40);
      assert.equal(e2?.stream, true);
      assert.equal(e2?.number_of_retries, 1);
      assert.equal(e2?.fallback_index, 1);
      const e3 = await store.get('r3');
      assert.deepEqual(e3?.error_details, { status: 429, message: 'rate limited' });
      assert.equal(e3?.cost, undefined, 'an unknown cost stays unknown, not 0');
      assert.equal(await store.get('nope'), undefined);
    });

    test('every filter narrows the result', async () => {
      assert.deepEqual(await search(store, { providers: 'openai' }), ['r3', 'r1', 'r4']);
      assert.deepEqual(await search(store, { providers: 'anthropic,nobody' }), ['r2']);
      assert.deepEqual(await search(store, { models: 'gpt-4o' }), ['r3', 'r1']);
      assert.deepEqual(await search(store, { status: 'error' }), ['r3']);
      assert.deepEqual(await search(store, { objects: 'embedding' }), ['r4']);
      assert.deepEqual(await search(store, { virtual_key_ids: 'vk2' }), ['r2']);
      assert.deepEqual(await search(store, { selected_key_ids: 'k1' }), ['r3', 'r1']);
      assert.deepEqual(await search(store, { routing_rule_ids: 'rB' }), ['r3']);
      assert.deepEqual(await search(store, { routing_rule_ids: 'rA' }), ['r3', 'r1']);
      assert.deepEqual(await search(store, { routing_engine_used: 'loadbalancing' }), ['r3']);
      assert.deepEqual(await search(store, { routing_engine_used: 'governance,loadbalancing' }), ['r3', 'r2']);
      const at = (ms: number): string => new Date(ms).toISOString();
      assert.deepEqual(await search(store, { start_time: at(T0), end_time: at(T0 + 60_000) }), ['r2', 'r1']);
      assert.deepEqual(await search(store, { min_latency: '100', max_latency: '200' }), ['r1', 'r4']);
      assert.deepEqual(await search(store, { min_tokens: '30' }), ['r2', 'r1']);
      assert.deepEqual(await search(store, { max_tokens: '7' }), ['r3', 'r4']);
      assert.deepEqual(await search(store, { min_cost: '0.02', max_cost: '0.1' }), ['r4']);
      assert.deepEqual(await search(store, { missing_cost_only: 'true' }), ['r3']);
      assert.deepEqual(await search(store, { providers: 'openai', status: 'success', models: 'gpt-4o' }), ['r1']);
    });

    test('content search is case-insensitive and takes % and _ literally', async () => {
      assert.deepEqual(await search(store, { content_search: 'zebra' }), ['r1']);
      assert.deepEqual(await search(store, { content_search: 'hi THERE' }), ['r1']);
      assert.deepEqual(await search(store, { content_search: '100%' }), ['r4']);
      assert.deepEqual(await search(store, { content_search: '%' }), ['r4']);
      assert.deepEqual(await search(store, { content_search: 'a_w' }), [], '_ is not a wildcard');
      assert.deepEqual(await search(store, { content_search: 'sure_thing' }), ['r4']);
    });

    test('hostile filter values are data, not SQL', async () => {
      for (const v of ["x' OR '1'='1", "'; DROP TABLE logs; --", 'openai) OR (1=1', '$1', '?']) {
        assert.deepEqual(await search(store, { providers: v }), [], v);
        assert.deepEqual(await search(store, { content_search: v }), [], v);
      }
      assert.equal((await store.search({}, PAGE)).total_count, 4, 'the table is intact');
    });

    test('sorting by latency, tokens and cost (unknown cost last) and pages', async () => {
      assert.deepEqual(await search(store, {}, { sort_by: 'latency', order: 'asc' }), ['r3', 'r1', 'r4', 'r2']);
      assert.deepEqual(await search(store, {}, { sort_by: 'tokens', order: 'desc' }), ['r2', 'r1', 'r4', 'r3']);
      assert.deepEqual(await search(store, {}, { sort_by: 'cost', order: 'desc' }), ['r2', 'r4', 'r1', 'r3']);
      assert.deepEqual(await search(store, {}, { sort_by: 'cost', order: 'asc' }), ['r1', 'r4', 'r2', 'r3']);
      assert.deepEqual(await search(store, {}, { limit: 2, offset: 1 }), ['r2', 'r1']);
      const page = await store.search(parseFilters({ providers: 'openai' }), parsePage({ limit: '1', offset: '2' }));
      assert.deepEqual(ids(page), ['r4']);
      assert.equal(page.total_count, 3);
    });

    test('stats over the filtered records', async () => {
      const all = await store.stats({});
      assert.equal(all.total_requests, 4);
      assert.equal(all.total_tokens, 30 + 150 + 0 + 7);
      assert.ok(Math.abs(all.total_cost - 0.26) < 1e-9, String(all.total_cost));
      assert.equal(all.average_latency, (100 + 300 + 50 + 200) / 4);
      assert.equal(all.success_rate, 75);
      const none = await store.stats(parseFilters({ providers: 'nobody' }));
      assert.deepEqual(none, { total_requests: 0, total_tokens: 0, total_cost: 0, average_latency: 0, success_rate: 0 });
    });

    test('histograms: counts, tokens and cost per bucket and group, latency percentiles', async () => {
      const f: LogFilters = { start_time: T0 - 3 * HOUR, end_time: T0 + HOUR };
      const w = histogramWindow(f);
      assert.equal(w.bucketMs, 300_000, '4 h in at most 120 buckets → 5 min');
      const rows = await store.buckets(f, w, 'none');
      assert.deepEqual(
        rows.map((r) => [r.bucket, r.count, r.success, r.error, r.total_tokens]),
        [
          [T0 - 2 * HOUR, 1, 1, 0, 7],
          [T0, 3, 2, 1, 180],
        ],
      );
      const byProvider = await store.buckets(f, w, 'provider');
      assert.deepEqual(
        byProvider.map((r) => [r.bucket, r.group, r.count, Math.round(r.cost * 100)]),
        [
          [T0 - 2 * HOUR, 'openai', 1, 5],
          [T0, 'anthropic', 1, 20],
          [T0, 'openai', 2, 1],
        ],
      );
      const lat = await store.latency(f, w, 'none');
      assert.deepEqual(
        lat.map((r) => [r.bucket, r.count, r.avg, r.p90, r.p99]),
        [
          [T0 - 2 * HOUR, 1, 200, 200, 200],
          [T0, 3, 150, 300, 300],
        ],
      );
      const latModel = await store.latency({ ...f, providers: ['openai'] }, w, 'model');
      assert.deepEqual(latModel.map((r) => [r.group, r.count, r.p90]), [['gpt-4o-mini', 1, 200], ['gpt-4o', 2, 100]]);
    });

    test('filter data lists what the logs hold', async () => {
      const d = await store.filterData();
      assert.deepEqual(d.models, ['claude-sonnet', 'gpt-4o', 'gpt-4o-mini']);
      assert.deepEqual(d.providers, ['anthropic', 'openai']);
      assert.deepEqual(d.objects, ['chat.completion', 'embedding']);
      assert.deepEqual(d.selected_keys, [{ id: 'k1', name: 'openai-main' }, { id: 'k2' }]);
      assert.deepEqual(d.virtual_keys, [{ id: 'vk1', name: 'Team A key' }, { id: 'vk2' }]);
      assert.deepEqual(d.routing_rules, [{ id: 'rA', name: 'Rule A' }, { id: 'rB' }]);
      assert.deepEqual(d.routing_engines, ['routing-rule', 'governance', 'loadbalancing']);
    });

    test('child records (an agent request’s turns) are listed under their parent and counted nowhere: list, stats, roll-ups, histograms, deletes', async () => {
      const s = await backend.open('children');
      try {
        // The agent request and its turns in an hour long past (the roll-up answers for it), another request now.
        const at = T0 - 3 * HOUR;
        const parent: LogRecord = { id: 'agent', timestamp: at, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', status: 'success', prompt_tokens: 30, completion_tokens: 12, cost: 0.3, latency: 900 };
        const turn = (id: string, dt: number, prompt: number, completion: number, cost: number): LogRecord => ({
          id, parent_request_id: 'agent', timestamp: at + dt, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', status: 'success', prompt_tokens: prompt, completion_tokens: completion, cost, latency: 400,
        });
        const other: LogRecord = { id: 'other', timestamp: T0, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', status: 'success', prompt_tokens: 5, completion_tokens: 5, cost: 0.05, latency: 100 };
        // Turns finish (and are written) before their agent request, in a batch of their own.
        await s.insert([turn('turn-1', 10, 10, 2, 0.1), turn('turn-2', 500, 20, 10, 0.2)]);
        await s.insert([parent, other]);

        const top = await s.search({}, PAGE);
        assert.deepEqual(ids(top), ['other', 'agent']);
        assert.equal(top.total_count, 2);
        assert.deepEqual(await search(s, { parent_request_id: 'agent' }, { order: 'asc' }), ['turn-1', 'turn-2']);
        assert.deepEqual(await search(s, { parent_request_id: 'other' }), []);
        assert.equal((await s.get('turn-1'))?.parent_request_id, 'agent');
        assert.equal((await s.search(parseFilters({ providers: 'openai' }), PAGE)).total_count, 2);

        // Totals: from the roll-up (no range, a range of whole hours), from the records (a short range).
        const iso = (ms: number): string => new Date(ms).toISOString();
        const cases: [Record<string, string>, number, number][] = [
          [{}, 2, 42 + 10],
          [{ start_time: iso(T0 - 4 * HOUR), end_time: iso(T0 + HOUR) }, 2, 42 + 10],
          [{ start_time: iso(at - 1000), end_time: iso(at + 1000) }, 1, 42],
        ];
        for (const [q, requests, tokens] of cases) {
          const st = await s.stats(parseFilters(q));
          assert.deepEqual([st.total_requests, st.total_tokens], [requests, tokens], JSON.stringify(q));
        }
        for (const range of [6 * HOUR, 30 * 24 * HOUR]) {
          const w = histogramWindow(parseFilters({ start_time: new Date(T0 - range).toISOString(), end_time: new Date(T0 + 60_000).toISOString() }));
          const rows = await s.buckets({}, w, 'none');
          assert.equal(rows.reduce((a, r) => a + r.count, 0), 2, `histogram over ${range / HOUR} h`);
          assert.equal(rows.reduce((a, r) => a + r.total_tokens, 0), 52);
          const lat = await s.latency({}, w, 'none');
          assert.equal(lat.reduce((a, r) => a + r.count, 0), 2, `latency histogram over ${range / HOUR} h`);
        }

        // Deleting a child takes nothing off the totals; deleting the parent takes one request off.
        assert.equal(await s.deleteIds(['turn-1']), 1);
        assert.equal((await s.stats({})).total_requests, 2);
        assert.equal(await s.deleteIds(['agent']), 1);
        assert.deepEqual(await s.stats({}).then((t) => [t.total_requests, t.total_tokens]), [1, 10]);
      } finally {
        await s.close();
      }
    });

    test('a record written twice (same id) is stored once', async () => {
      await store.insert([RECORDS[0]!]);
      assert.equal((await store.search({}, PAGE)).total_count, 4);
    });

    test('delete by id and by age (retention), rule rows included', async () => {
      const s = await backend.open('deletes');
      try {
        await s.insert(RECORDS);
        assert.equal(await s.deleteIds(['r3', 'missing']), 1);
        assert.deepEqual(await search(s, { routing_rule_ids: 'rB' }), []);
        assert.deepEqual(await search(s, {}), ['r2', 'r1', 'r4']);
        assert.equal(await s.deleteOlderThan(T0), 1, 'only r4 is older than T0');
        assert.deepEqual(await search(s, {}), ['r2', 'r1']);
        assert.equal(await s.deleteOlderThan(T0 + HOUR), 2);
        assert.equal(await s.hasLogs(), false);
        assert.deepEqual((await s.filterData()).routing_rules, []);
      } finally {
        await s.close();
      }
    });

    test('migrations are versioned: a second open applies nothing, data kept', async () => {
      const d = backend.driver('main');
      try {
        assert.deepEqual(await d.migrate(MIGRATIONS), []);
        const rows = await d.query('SELECT version FROM logs_schema_migrations ORDER BY version');
        assert.deepEqual(rows.map((r) => Number(r.version)), MIGRATIONS.map((m) => m.version));
      } finally {
        await d.close();
      }
      const again = await backend.open('main');
      assert.equal((await again.search({}, PAGE)).total_count, 4);
      await again.close();
    });

    test('a query running past the statement timeout is cancelled, not left to hang the API', { skip: backend.name !== 'postgres' }, async () => {
      const d = new PostgresDriver({ ...pgConfig('main'), statement_timeout_ms: 100 });
      try {
        const t = Date.now();
        await assert.rejects(d.query('SELECT pg_sleep(5)'), /statement timeout/);
        assert.ok(Date.now() - t < 2000);
        assert.deepEqual(await d.query('SELECT 1 AS one'), [{ one: 1 }], 'the pool is still usable');
      } finally {
        await d.close();
      }
    });

    test('two gateways opening a new store at once: one migrates, both write, each sees all', async () => {
      const [a, b] = await Promise.all([backend.open('replicas'), backend.open('replicas')]);
      try {
        const wa = new LogWriter(a, { flushIntervalMs: 10 });
        const wb = new LogWriter(b, { flushIntervalMs: 10 });
        for (let i = 0; i < 50; i++) {
          wa.enqueue({ id: `a${i}`, timestamp: T0 + i, object: 'chat.completion', status: 'success', provider: 'openai' });
          wb.enqueue({ id: `b${i}`, timestamp: T0 + i, object: 'chat.completion', status: 'success', provider: 'anthropic' });
        }
        await Promise.all([wa.close(), wb.close()]);
        assert.equal((await a.search({}, PAGE)).total_count, 100);
        assert.equal((await b.stats(parseFilters({ providers: 'openai' }))).total_requests, 50);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
}
