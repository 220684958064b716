// /api/logs over HTTP: the real management app on a real server, with the log store on a SQLite
// file and on a real PostgreSQL (two "replicas" sharing it). What a dashboard or a script sees:
// answer shapes, filters, histograms, 400s naming the parameter, delete, and a request's record
// being searchable within 2 s of the writer receiving it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiHandler } from '../../proxy/src/api/app.ts';
import type { LogsApiSource } from '../../proxy/src/api/logs.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';
import { openSqliteStore } from '../../proxy/src/logs/sqlite-store.ts';
import { openPostgresStore } from '../../proxy/src/logs/postgres-store.ts';
import type { LogStore } from '../../proxy/src/logs/store.ts';
import type { LogRecord } from '../../proxy/src/logs/record.ts';
import { LogWriter } from '../../proxy/src/logs/writer.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';

const BASE_CONFIG = { providers: { openai: { keys: [{ name: 'k', value: 'sk-openai-logs' }], network_config: { base_url: 'http://127.0.0.1:9' } } } };
const HOUR = 3600_000;

interface Api {
  url: string;
  close(): Promise<void>;
}

async function serveApi(logs?: LogsApiSource): Promise<Api> {
  const loaded = checkConfig(structuredClone(BASE_CONFIG), 'test', {});
  const cfgStore = new MemoryConfigStore();
  const stored = await ConfigService.initialDocument(cfgStore, loaded.raw);
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), cfgStore, stored);
  const server: Server = createServer(createApiHandler(service, logs));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// Answers of a dozen shapes are read field by field below; their types are what the assertions check.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = Record<string, any>;

async function call(api: Api, path: string, init: RequestInit = {}): Promise<{ status: number; body: Answer }> {
  const res = await fetch(api.url + path, init);
  return { status: res.status, body: (await res.json()) as Answer };
}

function records(now: number): LogRecord[] {
  return [
    { id: 'a1', timestamp: now - 5 * 60_000, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', status: 'success', prompt_tokens: 10, completion_tokens: 5, cost: 0.01, latency: 120, virtual_key_id: 'vk1', selected_key_id: 'k', routing_rule_ids: ['cheap'], routing_engines_used: ['routing-rule'], input_content: 'what is the capital of France', output_content: 'Paris' },
    { id: 'a2', timestamp: now - 4 * 60_000, object: 'chat.completion', provider: 'anthropic', model: 'claude', status: 'error', latency: 30, error_details: { message: 'overloaded' } },
    { id: 'a3', timestamp: now - 2 * HOUR, object: 'embedding', provider: 'openai', model: 'text-embedding-3-small', status: 'success', prompt_tokens: 8, cost: 0.001, latency: 80 },
  ];
}

interface Backend {
  name: string;
  /** Opens `n` stores on one database (n > 1: replicas sharing it). */
  open(n: number): Promise<LogStore[]>;
  cleanup(): Promise<void>;
}

let pgServer: RunningPostgres | undefined;
let dir = '';
const BACKENDS: Backend[] = [
  {
    name: 'sqlite',
    open: async (n) => {
      dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-api-'));
      return Promise.all(Array.from({ length: n }, () => openSqliteStore(join(dir, 'logs.db'))));
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  },
  {
    name: 'postgres',
    open: async (n) => {
      pgServer = await startPostgres();
      const cfg = { host: pgServer.host, port: pgServer.port, user: pgServer.user, password: '', db_name: pgServer.database, ssl_mode: 'disable' };
      const first = await openPostgresStore(cfg);
      return [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => openPostgresStore(cfg))))];
    },
    cleanup: async () => pgServer?.stop(),
  },
];

for (const backend of BACKENDS) {
  describe(`/api/logs on ${backend.name}`, () => {
    const now = Date.now();
    let stores: LogStore[] = [];
    let writer: LogWriter;
    let api: Api;
    let replica: Api;

    before(async () => {
      stores = await backend.open(2);
      await stores[0]!.insert(records(now));
      writer = new LogWriter(stores[0]!, { flushIntervalMs: 100 });
      api = await serveApi({ store: stores[0]!, dropped: () => writer.dropped });
      replica = await serveApi({ store: stores[1]!, dropped: () => 0 });
    });
    after(async () => {
      await api?.close();
      await replica?.close();
      await writer?.close();
      for (const s of stores) await s.close();
      await backend.cleanup();
    });

    test('search answers logs, pagination, stats and has_logs; filters apply', async () => {
      const r = await call(api, '/api/logs');
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.logs.map((l: { id: string }) => l.id), ['a2', 'a1', 'a3']);
      assert.deepEqual(r.body.pagination, { limit: 50, offset: 0, sort_by: 'timestamp', order: 'desc', total_count: 3, next_cursor: null });
      // A full page carries a cursor; following it gives the rest, nothing twice.
      const first = await call(api, '/api/logs?limit=2');
      assert.deepEqual(first.body.logs.map((l: { id: string }) => l.id), ['a2', 'a1']);
      const rest = await call(api, `/api/logs?limit=2&cursor=${first.body.pagination.next_cursor}`);
      assert.deepEqual(rest.body.logs.map((l: { id: string }) => l.id), ['a3']);
      assert.equal(rest.body.pagination.next_cursor, null);
      assert.equal(r.body.stats.total_requests, 3);
      assert.equal(r.body.has_logs, true);
      const f = await call(api, '/api/logs?providers=openai&min_latency=100&content_search=FRANCE&routing_rule_ids=cheap&routing_engine_used=routing-rule');
      assert.deepEqual(f.body.logs.map((l: { id: string }) => l.id), ['a1']);
      assert.equal(f.body.stats.total_requests, 1);
      assert.equal(f.body.stats.success_rate, 100);
      const page = await call(api, '/api/logs?limit=5000&offset=1&sort_by=latency&order=asc');
      assert.equal(page.body.pagination.limit, 1000, 'the limit is capped');
      assert.deepEqual(page.body.logs.map((l: { id: string }) => l.id), ['a3', 'a1']);
    });

    test('bad query parameters are 400s naming the parameter', async () => {
      const cases: [string, string][] = [
        ['/api/logs?status=done', 'status'],
        ['/api/logs?limit=abc', 'limit'],
        ['/api/logs?sort_by=name', 'sort_by'],
        ['/api/logs?order=sideways', 'order'],
        ['/api/logs?start_time=last-week', 'start_time'],
        ['/api/logs?min_tokens=5&max_tokens=1', 'min_tokens'],
        ['/api/logs?provider=openai', 'provider'],
        ['/api/logs/stats?limit=5', 'limit'],
        ['/api/logs/histogram?routing_engine_used=dice', 'routing_engine_used'],
        ['/api/logs/histogram/latency?max_latency=slow', 'max_latency'],
        ['/api/logs/filterdata?x=1', 'x'],
      ];
      for (const [path, param] of cases) {
        const r = await call(api, path);
        assert.equal(r.status, 400, path);
        assert.equal(r.body.error.param, param, path);
        assert.match(r.body.error.message, new RegExp(param), path);
      }
    });

    test('one record with its content; an unknown id is 404', async () => {
      const r = await call(api, '/api/logs/a1');
      assert.equal(r.status, 200);
      assert.equal(r.body.raw_request, 'what is the capital of France');
      assert.equal(r.body.raw_response, 'Paris');
      assert.deepEqual(r.body.token_usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
      const missing = await call(api, '/api/logs/nope');
      assert.equal(missing.status, 404);
      assert.match(missing.body.error.message, /nope/);
      assert.equal((await call(api, '/api/logs/' + 'x'.repeat(300))).status, 400);
    });

    test('stats, filter data and the dropped count', async () => {
      const s = await call(api, '/api/logs/stats?providers=openai');
      assert.equal(s.status, 200);
      assert.equal(s.body.total_requests, 2);
      assert.equal(s.body.total_tokens, 23);
      assert.equal(s.body.average_latency, 100);
      const d = await call(api, '/api/logs/filterdata');
      assert.deepEqual(d.body.models, ['claude', 'gpt-4o', 'text-embedding-3-small']);
      assert.deepEqual(d.body.virtual_keys, [{ id: 'vk1' }]);
      assert.deepEqual(d.body.routing_rules, [{ id: 'cheap' }]);
      const dropped = await call(api, '/api/logs/dropped');
      assert.deepEqual(dropped.body, { dropped_requests: 0 });
    });

    test('histograms: the last 24 h by default in bounded buckets, each endpoint in its shape', async () => {
      const h = await call(api, '/api/logs/histogram');
      assert.equal(h.status, 200);
      assert.equal(h.body.bucket_size_seconds, 900);
      assert.ok(h.body.buckets.length >= 96 && h.body.buckets.length <= 121, String(h.body.buckets.length));
      const total = h.body.buckets.reduce((a: number, b: { count: number }) => a + b.count, 0);
      assert.equal(total, 3);
      assert.equal(h.body.buckets.reduce((a: number, b: { error: number }) => a + b.error, 0), 1);
      const start = new Date(now - 10 * 60_000).toISOString();
      const end = new Date(now).toISOString();
      const win = `start_time=${start}&end_time=${end}`;
      const t = await call(api, `/api/logs/histogram/tokens?${win}`);
      assert.equal(t.body.bucket_size_seconds, 5);
      assert.equal(t.body.buckets.reduce((a: number, b: { total_tokens: number }) => a + b.total_tokens, 0), 15);
      const c = await call(api, `/api/logs/histogram/cost?${win}`);
      assert.deepEqual(c.body.models, ['claude', 'gpt-4o']);
      assert.ok(c.body.buckets.some((b: { by_model: Record<string, number> }) => b.by_model['gpt-4o'] === 0.01));
      const m = await call(api, `/api/logs/histogram/models?${win}`);
      assert.ok(m.body.buckets.some((b: { by_model: Record<string, unknown> }) => JSON.stringify(b.by_model.claude) === JSON.stringify({ total: 1, success: 0, error: 1 })));
      const l = await call(api, `/api/logs/histogram/latency?${win}`);
      assert.equal(l.body.buckets.reduce((a: number, b: { total_requests: number }) => a + b.total_requests, 0), 2);
      assert.ok(l.body.buckets.some((b: { p99_latency: number }) => b.p99_latency === 120));
      const cp = await call(api, '/api/logs/histogram/cost/by-provider');
      assert.deepEqual(cp.body.providers, ['anthropic', 'openai']);
      const tp = await call(api, '/api/logs/histogram/tokens/by-provider?providers=openai');
      assert.deepEqual(tp.body.providers, ['openai']);
      assert.equal(tp.body.buckets.reduce((a: number, b: { by_provider: Record<string, { total_tokens: number }> }) => a + (b.by_provider.openai?.total_tokens ?? 0), 0), 23);
      const lp = await call(api, '/api/logs/histogram/latency/by-provider');
      assert.ok(lp.body.buckets.some((b: { by_provider: Record<string, { avg_latency: number }> }) => b.by_provider.anthropic?.avg_latency === 30));
      const year = await call(api, `/api/logs/histogram?start_time=${new Date(now - 365 * 86_400_000).toISOString()}&end_time=${end}`);
      assert.ok(year.body.buckets.length <= 121, 'a year is still a bounded number of buckets');
    });

    test('a record handed to the writer is searchable within 2 s, on every replica', async () => {
      const t = Date.now();
      assert.equal(writer.enqueue({ id: 'fresh-1', timestamp: t, object: 'chat.completion', provider: 'openai', model: 'gpt-4o', status: 'success', latency: 5 }), true);
      const seen = async (a: Api): Promise<number> => {
        for (;;) {
          const r = await call(a, '/api/logs?models=gpt-4o&min_latency=1&max_latency=10');
          if (r.body.logs.some((l: { id: string }) => l.id === 'fresh-1')) return Date.now() - t;
          if (Date.now() - t > 2000) return Infinity;
          await new Promise((r) => setTimeout(r, 25));
        }
      };
      const here = await seen(api);
      assert.ok(here <= 2000, `visible after ${here} ms`);
      const there = await seen(replica);
      assert.ok(there <= 2000, `visible on the other replica after ${there} ms`);
    });

    test('delete by ids; bad bodies are 400s naming the field; other methods 405', async () => {
      const json = { 'content-type': 'application/json' };
      const bad: [unknown, string][] = [
        [{}, 'ids'],
        [{ ids: [] }, 'ids'],
        [{ ids: ['ok', 7] }, 'ids[1]'],
        [{ ids: Array.from({ length: 1001 }, (_, i) => `x${i}`) }, 'ids'],
        [{ ids: ['a'], all: true }, 'all'],
      ];
      for (const [body, param] of bad) {
        const r = await call(api, '/api/logs', { method: 'DELETE', headers: json, body: JSON.stringify(body) });
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
        assert.equal(r.body.error.param, param);
      }
      const del = await call(api, '/api/logs', { method: 'DELETE', headers: json, body: JSON.stringify({ ids: ['a2', 'a2', 'ghost'] }) });
      assert.equal(del.status, 200);
      assert.equal(del.body.message, 'deleted 1 log');
      assert.equal((await call(api, '/api/logs/a2')).status, 404);
      assert.equal((await call(replica, '/api/logs/a2')).status, 404, 'gone for the other replica too');
      assert.equal((await call(api, '/api/logs', { method: 'POST', headers: json, body: '{}' })).status, 405);
    });
  });
}

test('with request logging off, /api/logs says why', async () => {
  const api = await serveApi();
  try {
    const r = await call(api, '/api/logs');
    assert.equal(r.status, 404);
    assert.match(r.body.error.message, /client\.enable_logging is false/);
  } finally {
    await api.close();
  }
});
