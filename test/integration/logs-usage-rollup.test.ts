// The usage roll-ups (logs/usage-rollup.ts, and per dimension logs/usage-dimensions.ts) behind the
// overview's 7- and 30-day breakdowns, on SQLite
// and on a real PostgreSQL: after mixed traffic (successes, errors of each class and without one,
// cache hits, unpriced and untimed records, agent turns), after more batches, deletes by id and the
// retention sweep, and in a store written before the roll-up existed, every breakdown the roll-up
// answers equals the one computed from the records themselves, and the long windows do read it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { SqliteDriver } from '../../proxy/src/logs/sqlite-store.ts';
import { PostgresDriver } from '../../proxy/src/logs/postgres-store.ts';
import { SqlLogStore } from '../../proxy/src/logs/sql-store.ts';
import { MIGRATIONS } from '../../proxy/src/logs/migrations.ts';
import { breakdownSql, foldBreakdown, mcpUsage } from '../../proxy/src/logs/breakdown.ts';
import { buildWhere, parseFilters, type LogFilters } from '../../proxy/src/logs/query.ts';
import { histogramWindow, type HistogramWindow } from '../../proxy/src/logs/window.ts';
import { BREAKDOWN_DIMENSIONS, type LogRecord, type UsageBreakdown } from '../../proxy/src/logs/record.ts';
import type { Migration, Row, RowsToInsert, SqlDriver } from '../../proxy/src/logs/driver.ts';
import { seedLogs } from '../../scripts/seed-logs.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const END = Date.UTC(2026, 5, 30, 17, 23, 41, 500);
const iso = (ms: number): string => new Date(ms).toISOString();
const TABLE = /logs_usage_rollup/;
const BY_TABLE = /logs_usage_rollup_by/;
const OWN_FILTER: Record<string, string> = { provider: 'providers', model: 'models', virtual_key: 'virtual_key_ids' };

/** A driver that remembers the queries it ran, to tell which table answered. */
class Recording implements SqlDriver {
  readonly seen: string[] = [];
  readonly inner: SqlDriver;
  constructor(inner: SqlDriver) {
    this.inner = inner;
  }
  get dialect() {
    return this.inner.dialect;
  }
  query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    this.seen.push(sql);
    return this.inner.query(sql, params);
  }
  execute(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.inner.execute(sql, params);
  }
  insert(batches: readonly RowsToInsert[]): Promise<void> {
    return this.inner.insert(batches);
  }
  migrate(m: readonly Migration[]): Promise<number[]> {
    return this.inner.migrate(m);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The breakdown from the records alone: the store's own short-window path over any window. */
async function fromRecords(db: SqlDriver, f: LogFilters, w: HistogramWindow, by: (typeof BREAKDOWN_DIMENSIONS)[number]): Promise<UsageBreakdown> {
  const start = Math.floor(w.start / w.bucketMs) * w.bucketMs;
  const end = Math.floor(w.end / w.bucketMs) * w.bucketMs + w.bucketMs - 1;
  const where = buildWhere({ ...f, start_time: start, end_time: end }, db.dialect.ilike, false, db.dialect.name === 'sqlite');
  const q = breakdownSql(by, where, w, db.dialect);
  return foldBreakdown(by, w, await db.query(q.sql, q.params), 8, await mcpUsage(db, w, start, end));
}

/**
 * The same answer: costs are float sums added in another order, so they agree to 1e-9 of a dollar;
 * every count, and the percentiles (the same bin counts), exactly.
 */
function assertSame(got: unknown, want: unknown, path: string): void {
  if (typeof got === 'number' && typeof want === 'number' && !(Number.isInteger(got) && Number.isInteger(want))) {
    assert.ok(Math.abs(got - want) < 1e-9, `${path}: ${got} != ${want}`);
    return;
  }
  if (got === null || want === null || typeof got !== 'object' || typeof want !== 'object') {
    assert.equal(got, want, path);
    return;
  }
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), path);
  for (const k of Object.keys(got)) assertSame((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], `${path}.${k}`);
}

/** Hand-made records the seed does not make: an error without a class, a priced cache hit, an untimed one. */
const extra = (t: number): LogRecord[] => [
  { id: 'x-err', timestamp: t, object: 'chat.completion', status: 'error', provider: 'openai', model: 'gpt-4o', virtual_key_id: 'vk-x', team_id: 'team-x', latency: 12 },
  { id: 'x-hit', timestamp: t + 1, object: 'chat.completion', status: 'success', status_code: 200, provider: 'openai', model: 'gpt-4o', virtual_key_id: 'vk-x', team_id: 'team-x', cache_hit: true, cost: 0.25, total_tokens: 40, latency: 3 },
  { id: 'x-untimed', timestamp: t + 2, object: 'responses', status: 'processing', provider: 'anthropic', model: 'claude', total_tokens: 7 },
  { id: 'x-child', timestamp: t + 3, object: 'chat.completion', status: 'success', provider: 'openai', model: 'gpt-4o', parent_request_id: 'x-hit', total_tokens: 999, cost: 9, latency: 5 },
];

const WINDOWS = {
  '30 days': histogramWindow(parseFilters({ start_time: iso(END - 30 * DAY + 999), end_time: iso(END) })),
  '7 days': histogramWindow(parseFilters({ start_time: iso(END - 7 * DAY), end_time: iso(END) })),
};
const FILTERS: Record<string, string>[] = [{}, { providers: 'openai,anthropic' }, { virtual_key_ids: 'vk-1,vk-x,vk-none' }, { models: 'gpt-4o-mini', virtual_key_ids: 'vk-1,vk-2,vk-x' }];

/** Every dimension × window × roll-up filter: read from the roll-up, and equal to the records' answer. */
async function agrees(store: SqlLogStore, rec: Recording, label: string): Promise<void> {
  for (const [name, w] of Object.entries(WINDOWS)) {
    for (const q of FILTERS) {
      for (const by of BREAKDOWN_DIMENSIONS) {
        rec.seen.length = 0;
        const f = parseFilters(q);
        const got = await store.breakdown(f, w, by, 8);
        assert.ok(rec.seen.some((s) => TABLE.test(s)), `${label} ${name} by ${by}: read from the roll-up`);
        // Unfiltered, or filtered on the dimension itself: the small per-dimension table; else the finer one.
        const own = Object.keys(q).every((k) => k === OWN_FILTER[by]);
        assert.equal(rec.seen.some((s) => BY_TABLE.test(s)), own, `${label} ${name} by ${by} ${JSON.stringify(q)}: per-dimension table read`);
        assert.ok(!rec.seen.some((s) => /FROM logs l/.test(s)), `${label} ${name} by ${by}: no record read`);
        const want = await fromRecords(rec.inner, f, w, by);
        for (const g of got.groups) delete g.name;
        assertSame(got, want, `${label} ${name} by ${by} ${JSON.stringify(q)}`);
      }
    }
  }
}

/** Counted (top-level) records in the 30-day window, straight from the table: an independent total. */
async function countedIn(db: SqlDriver, w: HistogramWindow): Promise<number> {
  const start = Math.floor(w.start / w.bucketMs) * w.bucketMs;
  const [r] = await db.query(`SELECT count(*) AS n FROM logs WHERE parent_request_id IS NULL AND timestamp >= ${start} AND timestamp < ${Math.floor(w.end / w.bucketMs) * w.bucketMs + w.bucketMs}`);
  return Number(r!.n);
}

interface Backend {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** A fresh database's driver. */
  driver(name: string): Promise<SqlDriver>;
}

let pg: RunningPostgres | undefined;
let dir = '';
const BACKENDS: Backend[] = [
  {
    name: 'sqlite',
    setup: async () => void (dir = mkdtempSync(join(tmpdir(), 'skybridge-usage-rollup-'))),
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
    driver: async (name) => new SqliteDriver(join(dir, `${name}.db`)),
  },
  {
    name: 'postgres',
    setup: async () => void (pg = await startPostgres()),
    teardown: async () => pg?.stop(),
    driver: async (name) => new PostgresDriver({ host: pg!.host, port: pg!.port, user: pg!.user, password: '', db_name: await pg!.createDatabase(name), ssl_mode: 'disable' }),
  },
];

for (const backend of BACKENDS) {
  describe(`usage roll-up on ${backend.name}`, () => {
    before(() => backend.setup());
    after(() => backend.teardown());

    test('after mixed traffic, more batches, deletes by id and retention, the roll-up answers as the records do', async () => {
      const rec = new Recording(await backend.driver('mixed'));
      const store = await SqlLogStore.open(rec);
      try {
        await seedLogs(store, { rows: 4000, end: END, seed: 5, content: 0, batch: 700 });
        await store.insert(extra(END - 2 * DAY));
        await agrees(store, rec, 'seeded');
        const month = WINDOWS['30 days'];
        const b = await store.breakdown({}, month, 'provider', 8);
        assert.equal(b.totals.requests, await countedIn(rec.inner, month));
        assert.ok(b.totals.client_errors > 0 && b.totals.upstream_errors > 0 && b.totals.gateway_errors > 0 && b.totals.cache_hits > 0, JSON.stringify(b.totals));
        const x = (await store.breakdown(parseFilters({ virtual_key_ids: 'vk-x' }), month, 'team', 8)).totals;
        // The classless error is the gateway's; the hit's price is saved spend; the child is not counted.
        assert.deepEqual([x.requests, x.gateway_errors, x.cache_hits, x.saved_cost, x.cost, x.total_tokens], [2, 1, 1, 0.25, 0, 40]);

        // Another seeding into the same hours lands on existing roll-up rows (the upserts add).
        await seedLogs(store, { rows: 1500, end: END, seed: 6, content: 0, prefix: 'more', batch: 500 });
        const ids = (await rec.inner.query("SELECT id FROM logs WHERE id LIKE 'more-%' ORDER BY id LIMIT 300")).map((r) => String(r.id));
        assert.equal(await store.deleteIds([...ids, 'x-err']), 301);
        await agrees(store, rec, 'after deletes by id');

        // Retention: a cutoff mid-hour, 12 days back; whole emptied periods leave the roll-up.
        const cutoff = END - 12 * DAY;
        assert.ok((await store.deleteOlderThan(cutoff)) > 0);
        await agrees(store, rec, 'after retention');
        for (const t of ['logs_usage_rollup', 'logs_usage_rollup_6h', 'logs_usage_rollup_by', 'logs_usage_rollup_by_6h']) {
          const [r] = await rec.inner.query(`SELECT count(*) AS n FROM ${t} WHERE period < ${Math.floor(cutoff / (6 * HOUR)) * 6 * HOUR - 6 * HOUR}`);
          assert.equal(Number(r!.n), 0, `${t} keeps no period the sweep emptied`);
        }
        assert.equal((await store.breakdown({}, month, 'model', 8)).totals.requests, await countedIn(rec.inner, month));
      } finally {
        await store.close();
      }
    });

    test('a breakdown the roll-up cannot answer exactly reads the records: short windows, and filters outside its dimensions', async () => {
      const rec = new Recording(await backend.driver('fallback'));
      const store = await SqlLogStore.open(rec);
      try {
        await seedLogs(store, { rows: 500, end: END, seed: 8, content: 0 });
        const day = histogramWindow(parseFilters({ start_time: iso(END - DAY), end_time: iso(END) }));
        const month = WINDOWS['30 days'];
        for (const [w, q] of [[day, {}], [month, { status: 'error' }], [month, { min_latency: '1000' }], [month, { selected_key_ids: 'openai-key-1' }]] as const) {
          rec.seen.length = 0;
          const f = parseFilters(q);
          const got = await store.breakdown(f, w, 'virtual_key', 8);
          assert.ok(!rec.seen.some((s) => TABLE.test(s)), `${JSON.stringify(q)} over ${w.bucketMs / 1000}-second buckets is not from the roll-up`);
          const want = await fromRecords(rec.inner, f, w, 'virtual_key');
          for (const g of got.groups) delete g.name;
          assertSame(got, want, JSON.stringify(q));
        }
      } finally {
        await store.close();
      }
    });

    // Before migration 13 (no usage roll-up at all: both are built from the records), and before 14
    // (the per-dimension table is built from the usage roll-up the older writer kept).
    for (const [version, skipped] of [[13, TABLE], [14, BY_TABLE]] as const) {
      test(`a store written before migration ${version} gains its roll-up on open, back-filled`, async () => {
        const inner = await backend.driver(`backfill${version}`);
        await inner.migrate(MIGRATIONS.filter((m) => m.version < version));
        // A writer from before that migration: no schema changes, and not that roll-up after its batches.
        const old = await SqlLogStore.open(new (class extends Recording {
          override migrate(): Promise<number[]> {
            return Promise.resolve([]);
          }
          override insert(batches: readonly RowsToInsert[]): Promise<void> {
            return super.insert(batches.map((b) => (b.afterRange ? { ...b, afterRange: b.afterRange.filter((s) => !skipped.test(s)) } : b)));
          }
        })(inner));
        await seedLogs(old, { rows: 2500, end: END, seed: 9, content: 0 });
        await old.insert(extra(END - 3 * DAY));
        assert.deepEqual((await inner.query("SELECT count(*) AS n FROM logs WHERE id LIKE 'x-%'")).map((r) => Number(r.n)), [4]);
        const rec = new Recording(inner);
        const store = await SqlLogStore.open(rec);
        try {
          await agrees(store, rec, 'back-filled');
          // And it is kept from then on.
          await seedLogs(store, { rows: 300, end: END, seed: 10, content: 0, prefix: 'new' });
          await agrees(store, rec, 'back-filled, then written');
        } finally {
          await store.close();
        }
      });
    }
  });
}
