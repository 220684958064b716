// The request-log store with many records (50,000 on SQLite, 20,000 on a real PostgreSQL): the
// queries /api/logs makes read indexes or the roll-up, never the whole table, for the main filters;
// the roll-up agrees with the records (after inserts, deletes, retention and a migration of an
// existing store); keyset pagination returns every record exactly once in order.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { SqliteDriver } from '../../proxy/src/logs/sqlite-store.ts';
import { PostgresDriver, type PostgresLogsConfig } from '../../proxy/src/logs/postgres-store.ts';
import { SqlLogStore } from '../../proxy/src/logs/sql-store.ts';
import { MIGRATIONS } from '../../proxy/src/logs/migrations.ts';
import type { Row, RowsToInsert, SqlDriver, Migration } from '../../proxy/src/logs/driver.ts';
import { parseFilters, parsePage, type LogFilters, type Page } from '../../proxy/src/logs/query.ts';
import { histogramWindow } from '../../proxy/src/logs/window.ts';
import { seedLogs } from '../../scripts/seed-logs.ts';

const DAY = 86_400_000;
const END = Date.UTC(2026, 5, 30, 17, 23, 41, 500);
const iso = (ms: number): string => new Date(ms).toISOString();

/** A driver that remembers the SELECTs it ran, so a test can ask the database how it plans them. */
class Recording implements SqlDriver {
  readonly seen: { sql: string; params: readonly unknown[] }[] = [];
  readonly inner: SqlDriver;
  constructor(inner: SqlDriver) {
    this.inner = inner;
  }
  get dialect() {
    return this.inner.dialect;
  }
  query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    this.seen.push({ sql, params });
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

/** The calls GET /api/logs makes (api/logs.ts): the bounded summary, then the page. */
async function list(store: SqlLogStore, query: Record<string, string>): Promise<void> {
  const { limit, offset, sort_by, order, cursor, ...rest } = query;
  const page = parsePage({ limit, offset, sort_by, order, cursor });
  const f = parseFilters(rest);
  const summary = await store.listSummary(f);
  await store.search(f, page, { count: false, matching: summary.matching, many: summary.matching === undefined });
}

const MAIN_FILTERS: Record<string, string>[] = [
  {},
  { offset: '5000' },
  { providers: 'anthropic' },
  { models: 'gpt-4o' },
  { status: 'error' },
  { objects: 'embedding' },
  { virtual_key_ids: 'vk-7' },
  { selected_key_ids: 'groq-key-1' },
  { routing_rule_ids: 'rule-3' },
  { start_time: iso(END - DAY), end_time: iso(END) },
  { min_latency: '20000' },
  { min_tokens: '3000' },
  { min_cost: '0.02' },
  { missing_cost_only: 'true' },
  { routing_engine_used: 'governance' },
  { content_search: 'kubernetes' },
  { content_search: 'number 12345:' },
  { sort_by: 'latency' },
  { sort_by: 'tokens' },
  { sort_by: 'cost' },
];

/** Every record once, in order, following next_cursor from the first page to the last. */
async function walk(store: SqlLogStore, filters: LogFilters, base: Page): Promise<{ id: string; v: number | null }[]> {
  const out: { id: string; v: number | null }[] = [];
  let page: Page = base;
  for (let guard = 0; guard < 10_000; guard++) {
    const r = await store.search(filters, page, { count: false });
    for (const e of r.logs) {
      const v = base.sort_by === 'timestamp' ? Date.parse(e.timestamp) : base.sort_by === 'latency' ? (e.latency ?? null) : base.sort_by === 'cost' ? (e.cost ?? null) : e.token_usage.total_tokens;
      out.push({ id: e.id, v });
    }
    if (!r.next_cursor) return out;
    page = parsePage({ limit: String(base.limit), sort_by: base.sort_by, order: base.order, cursor: r.next_cursor });
  }
  throw new Error('pagination did not end');
}

/** Counted records: top-level ones (a child record, ~2% of the seeded ones, is part of its parent's request). */
const TOP = 'parent_request_id IS NULL';

/** Raw aggregates straight from the (counted) records, to hold the roll-up against (a cache hit's price is saved, not spent). */
async function raw(db: SqlDriver, where = ''): Promise<{ n: number; tokens: number; cost: number; ok: number }> {
  const [r] = await db.query(
    `SELECT count(*) AS n, COALESCE(sum(total_tokens), 0) AS tokens, COALESCE(sum(CASE WHEN cache_hit = 1 THEN 0 ELSE cost END), 0) AS cost, COALESCE(sum(CASE WHEN status = 'success' THEN 1 ELSE 0 END), 0) AS ok FROM logs ${where ? `${where} AND ${TOP}` : `WHERE ${TOP}`}`,
  );
  return { n: Number(r!.n), tokens: Number(r!.tokens), cost: Number(r!.cost), ok: Number(r!.ok) };
}

function shared(name: string, ctx: () => { store: SqlLogStore; db: SqlDriver }): void {
  test(`${name}: stats and histograms from the roll-up equal the records' own aggregates`, async () => {
    const { store, db } = ctx();
    const all = await raw(db);
    const s = await store.stats({});
    assert.equal(s.total_requests, all.n);
    assert.equal(s.total_tokens, all.tokens);
    assert.ok(Math.abs(s.total_cost - all.cost) < 1e-6, `${s.total_cost} vs ${all.cost}`);
    // A range with partial hours at both ends, filtered on roll-up dimensions.
    const start = END - 9 * DAY - 1234567;
    const f = parseFilters({ providers: 'openai,anthropic', status: 'success', start_time: iso(start), end_time: iso(END - 7777) });
    const want = await raw(db, `WHERE provider IN ('openai', 'anthropic') AND status = 'success' AND timestamp >= ${start} AND timestamp <= ${END - 7777}`);
    const got = await store.stats(f);
    assert.equal(got.total_requests, want.n);
    assert.equal(got.total_tokens, want.tokens);
    // Ending late in an hour: that hour from the roll-up, less the records after the end.
    const lateEnd = Math.floor(END / 3600_000) * 3600_000 - 3600_000 + 3_000_000;
    const late = await store.stats(parseFilters({ models: 'gpt-4o-mini', start_time: iso(start), end_time: iso(lateEnd) }));
    const lateWant = await raw(db, `WHERE model = 'gpt-4o-mini' AND timestamp >= ${start} AND timestamp <= ${lateEnd}`);
    assert.deepEqual([late.total_requests, late.total_tokens], [lateWant.n, lateWant.tokens]);
    // 30-day histogram per model (6-hour buckets, the coarse roll-up) against GROUP BY on the records.
    const w = histogramWindow(parseFilters({ start_time: iso(END - 30 * DAY + 999), end_time: iso(END) }));
    const rows = await store.buckets({}, w, 'model');
    // Buckets are whole: the first and last count every record in them.
    const from = Math.floor(w.start / w.bucketMs) * w.bucketMs;
    const to = Math.floor(w.end / w.bucketMs) * w.bucketMs + w.bucketMs;
    const expect = await db.query(
      `SELECT (timestamp / ${w.bucketMs}) * ${w.bucketMs} AS b, COALESCE(model, '') AS m, count(*) AS n, sum(total_tokens) AS t FROM logs
       WHERE timestamp >= ${from} AND timestamp < ${to} AND ${TOP} GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    assert.equal(rows.length, expect.length);
    rows.forEach((r, i) => {
      assert.equal(r.bucket, Number(expect[i]!.b));
      assert.equal(r.group, String(expect[i]!.m));
      assert.equal(r.count, Number(expect[i]!.n), `bucket ${iso(r.bucket)} ${r.group}`);
      assert.equal(r.total_tokens, Number(expect[i]!.t));
    });
    // Latency over 7 days (roll-up bins): estimates close to the exact nearest rank.
    const week = histogramWindow(parseFilters({ start_time: iso(END - 7 * DAY), end_time: iso(END) }));
    const lat = await store.latency({}, week, 'none');
    const counted = lat.reduce((a, r) => a + r.count, 0);
    const wFrom = Math.floor(week.start / week.bucketMs) * week.bucketMs;
    const wTo = Math.floor(week.end / week.bucketMs) * week.bucketMs + week.bucketMs;
    const [exact] = await db.query(`SELECT count(*) AS n FROM logs WHERE latency IS NOT NULL AND timestamp >= ${wFrom} AND timestamp < ${wTo} AND ${TOP}`);
    assert.equal(counted, Number(exact!.n));
    for (const r of lat) assert.ok(r.p90 <= r.p95 && r.p95 <= r.p99 && r.p99 > 0, JSON.stringify(r));
  });

  test(`${name}: cursor pagination returns every record exactly once, in order`, async () => {
    const { store, db } = ctx();
    for (const [filters, page, where] of [
      [{}, parsePage({ limit: '1000' }), ''],
      [parseFilters({ providers: 'openai' }), parsePage({ limit: '700', sort_by: 'latency', order: 'asc' }), "WHERE provider = 'openai'"],
      [{}, parsePage({ limit: '999', sort_by: 'cost', order: 'desc' }), ''],
      [parseFilters({ status: 'error' }), parsePage({ limit: '100', sort_by: 'tokens', order: 'asc' }), "WHERE status = 'error'"],
    ] as [LogFilters, Page, string][]) {
      const seen = await walk(store, filters, page);
      const ids = new Set(seen.map((s) => s.id));
      assert.equal(ids.size, seen.length, `no record twice (${page.sort_by} ${page.order})`);
      assert.equal(seen.length, (await raw(db, where)).n, `every record (${page.sort_by} ${page.order})`);
      // Order: values monotonic, NULLs last.
      for (let i = 1; i < seen.length; i++) {
        const a = seen[i - 1]!.v;
        const b = seen[i]!.v;
        if (a === null) assert.equal(b, null, 'nulls come last');
        else if (b !== null) assert.ok(page.order === 'asc' ? a <= b : a >= b, `${a} then ${b}`);
      }
    }
  });

  test(`${name}: a cursor is refused with another order, with an offset, or forged`, () => {
    const c = Buffer.from(JSON.stringify(['timestamp', 'desc', 1, 'x'])).toString('base64url');
    assert.throws(() => parsePage({ cursor: c, order: 'asc' }), (e: Error & { param?: string }) => e.param === 'cursor' && /sort_by=timestamp&order=desc/.test(e.message));
    assert.throws(() => parsePage({ cursor: c, offset: '10' }), /cannot be combined with offset/);
    assert.throws(() => parsePage({ cursor: 'bm90LWEtY3Vyc29y' }), /not a cursor this API returned/);
  });
}

describe('request logs at scale on SQLite (50,000 records)', () => {
  let dir = '';
  let store: SqlLogStore;
  let db: Recording;
  const ROWS = 50_000;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-scale-'));
    db = new Recording(new SqliteDriver(join(dir, 'logs.db')));
    store = await SqlLogStore.open(db);
    await seedLogs(store, { rows: ROWS, end: END, seed: 7, content: 0.3 });
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** EXPLAIN QUERY PLAN lines of every query the calls ran. */
  async function plans(run: () => Promise<unknown>): Promise<{ sql: string; plan: string[] }[]> {
    db.seen.length = 0;
    await run();
    const out: { sql: string; plan: string[] }[] = [];
    for (const q of [...db.seen]) {
      const rows = await db.inner.query(`EXPLAIN QUERY PLAN ${q.sql}`, q.params);
      out.push({ sql: q.sql, plan: rows.map((r) => String(r.detail)) });
    }
    return out;
  }
  /** A plain scan of the logs table (no index) is what these calls must never do. */
  const fullScan = (line: string): boolean => /^SCAN (l|logs)( |$)/.test(line) && !/USING (COVERING )?INDEX/.test(line);

  test('every main /api/logs filter, the stats, the histograms and filterdata read indexes, never the whole table', async () => {
    const calls: [string, () => Promise<unknown>][] = [
      ...MAIN_FILTERS.map((q): [string, () => Promise<unknown>] => [`list ${JSON.stringify(q)}`, () => list(store, q)]),
      ['stats', () => store.stats({})],
      ['stats 24 h', () => store.stats(parseFilters({ start_time: iso(END - DAY) }))],
      ['filterdata', () => store.filterData()],
    ];
    for (const [range, group] of [[DAY, 'none'], [7 * DAY, 'provider'], [30 * DAY, 'model']] as const) {
      const w = histogramWindow(parseFilters({ start_time: iso(END - range), end_time: iso(END) }));
      calls.push([`histogram ${range / DAY} d`, () => store.buckets({}, w, group)], [`latency ${range / DAY} d`, () => store.latency({}, w, group)]);
    }
    for (const [name, run] of calls) {
      for (const { sql, plan } of await plans(run)) {
        assert.ok(!plan.some(fullScan), `${name}: a full scan\n${sql}\n${plan.join('\n')}`);
      }
    }
  });

  test('stats and long histograms read the roll-up; a plain list page walks the time index', async () => {
    const statsPlans = await plans(() => store.stats({}));
    assert.ok(statsPlans.every((p) => /logs_rollup/.test(p.sql)), 'stats come from the roll-up alone');
    const w = histogramWindow(parseFilters({ start_time: iso(END - 30 * DAY), end_time: iso(END) }));
    const hist = await plans(() => store.buckets({}, w, 'none'));
    assert.ok(hist.some((p) => /logs_rollup_6h/.test(p.sql)), 'a 30-day chart reads the 6-hour roll-up');
    const page = await plans(() => store.search({}, parsePage({}), { count: false }));
    assert.ok(page[0]!.plan.some((l) => /USING INDEX logs_time\b/.test(l)) && !page[0]!.plan.some((l) => /TEMP B-TREE/.test(l)), page[0]!.plan.join('\n'));
    const search = await plans(() => list(store, { content_search: 'number 12345:' }));
    assert.ok(search.some((p) => p.plan.some((l) => /VIRTUAL TABLE/.test(l))), 'content search reads the trigram index');
  });

  test('content search through the index finds exactly what a substring match finds', async () => {
    for (const term of ['number 12345:', 'KUBERNETES task number 4', 'zz', '100%']) {
      const f = parseFilters({ content_search: term });
      const got = (await store.search(f, parsePage({ limit: '1000' }), { count: false, matching: 0 })).logs.map((l) => l.id).sort();
      const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const want = (await db.inner.query(`SELECT id FROM logs WHERE (input_content LIKE ? ESCAPE '\\' OR output_content LIKE ? ESCAPE '\\') AND ${TOP} ORDER BY timestamp DESC LIMIT 1000`, [pattern, pattern]))
        .map((r) => String(r.id))
        .sort();
      assert.deepEqual(got, want, term);
    }
  });

  test('the roll-up and the search index follow deletes by id and by age', async () => {
    const ids = (await store.search(parseFilters({ content_search: 'kubernetes' }), parsePage({ limit: '20' }), { count: false })).logs.map((l) => l.id);
    assert.equal(ids.length, 20);
    await store.deleteIds(ids);
    const [left] = await db.inner.query(`SELECT count(*) AS n FROM log_search WHERE log_id IN (${ids.map(() => '?').join(', ')})`, ids);
    assert.equal(Number(left!.n), 0, 'deleted records leave the search index');
    await store.deleteOlderThan(END - 20 * DAY);
    const all = await raw(db.inner);
    const s = await store.stats({});
    assert.equal(s.total_requests, all.n);
    assert.equal(s.total_tokens, all.tokens);
    const summary = await store.listSummary(parseFilters({ providers: 'openai' }));
    assert.equal(summary.stats.total_requests, (await raw(db.inner, "WHERE provider = 'openai'")).n);
    assert.equal(summary.matching, summary.stats.total_requests);
  });

  test('a list summary is exact whatever the filter; few matches are counted for the page plan, many are not', async () => {
    const many = await store.listSummary(parseFilters({ min_tokens: '10' }));
    assert.equal(many.matching, undefined, 'more than the cap: the page walks the time index');
    assert.equal(many.stats.total_requests, (await raw(db.inner, 'WHERE total_tokens >= 10')).n);
    const few = await store.listSummary(parseFilters({ virtual_key_ids: 'vk-150' }));
    const want = (await raw(db.inner, "WHERE virtual_key_id = 'vk-150'")).n;
    assert.ok(want > 0 && want < 10_000);
    assert.equal(few.matching, want);
    assert.equal(few.stats.total_requests, want);
    // The page for many matches is the same page a plain search gives.
    const f = parseFilters({ min_tokens: '10' });
    const hinted = await store.search(f, parsePage({}), { count: false, many: true });
    const plain = await store.search(f, parsePage({}));
    assert.deepEqual(hinted.logs.map((l) => l.id), plain.logs.map((l) => l.id));
  });

  test('the routing-engine and missing-cost filters are answered by the roll-up, exactly', async () => {
    for (const [q, where] of [
      [{ routing_engine_used: 'governance' }, 'WHERE (routing_engines & 2) <> 0'],
      [{ routing_engine_used: 'routing-rule,loadbalancing', providers: 'openai' }, "WHERE (routing_engines & 5) <> 0 AND provider = 'openai'"],
      [{ missing_cost_only: 'true', status: 'success' }, "WHERE cost IS NULL AND status = 'success'"],
    ] as [Record<string, string>, string][]) {
      const plan = await plans(() => store.stats(parseFilters(q)));
      assert.ok(plan.every((p) => /logs_rollup/.test(p.sql)), JSON.stringify(q));
      const s = await store.stats(parseFilters(q));
      const want = await raw(db.inner, where);
      assert.deepEqual([s.total_requests, s.total_tokens], [want.n, want.tokens], JSON.stringify(q));
    }
  });

  shared('sqlite', () => ({ store, db: db.inner }));
});

describe('a store from before the roll-up gains it on open, backfilled from its records', () => {
  test('sqlite: migration 4 backfills the roll-up and the search index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skybridge-logs-mig-'));
    try {
      const old = new SqliteDriver(join(dir, 'logs.db'));
      await old.migrate(MIGRATIONS.filter((m) => m.version < 4));
      // A writer from before migration 4: no schema changes, no roll-up upserts after its batches,
      // and only the columns its table had (later migrations added more).
      const had = new Set((await old.query("SELECT name FROM pragma_table_info('logs')")).map((r) => String(r.name)));
      const oldColumns = (b: RowsToInsert): RowsToInsert => {
        if (b.table !== 'logs') return b;
        const keep = b.columns.flatMap((c, i) => (had.has(c) ? [i] : []));
        return { ...b, columns: keep.map((i) => b.columns[i]), types: keep.map((i) => b.types[i]), rows: b.rows.map((r) => keep.map((i) => r[i])) };
      };
      const oldStore = await SqlLogStore.open(new (class extends Recording {
        override migrate(): Promise<number[]> {
          return Promise.resolve([]);
        }
        override insert(batches: readonly RowsToInsert[]): Promise<void> {
          return super.insert(batches.map(({ afterRange: _, ...b }) => oldColumns(b)));
        }
      })(old));
      await seedLogs(oldStore, { rows: 3000, end: END, seed: 3, content: 1 });
      await old.close();
      const db = new SqliteDriver(join(dir, 'logs.db'));
      const store = await SqlLogStore.open(db);
      const all = await raw(db);
      assert.equal(Number((await db.query('SELECT count(*) AS n FROM logs'))[0]!.n), 3000);
      assert.ok(all.n < 3000, 'some seeded records are children, not counted');
      const s = await store.stats({});
      assert.deepEqual([s.total_requests, s.total_tokens], [all.n, all.tokens]);
      const found = await store.search(parseFilters({ content_search: 'number 1234:' }), parsePage({}));
      assert.equal(found.logs.length, 1, 'old content is searchable through the new index');
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('request logs at scale on PostgreSQL (20,000 records)', () => {
  let pg_: RunningPostgres;
  let store: SqlLogStore;
  let db: PostgresDriver;
  const ROWS = 20_000;
  before(async () => {
    pg_ = await startPostgres();
    const cfg: PostgresLogsConfig = { host: pg_.host, port: pg_.port, user: pg_.user, password: '', db_name: pg_.database, ssl_mode: 'disable' };
    db = new PostgresDriver(cfg);
    store = await SqlLogStore.open(db);
    await seedLogs(store, { rows: ROWS, end: END, seed: 11, content: 0.3 });
    await db.execute('ANALYZE');
  });
  after(async () => {
    await store?.close();
    await pg_?.stop();
  });

  test('selective filters and content search use indexes (EXPLAIN shows no sequential scan of logs)', async () => {
    const explain = async (sql: string, params: unknown[]): Promise<string> =>
      (await db.query(`EXPLAIN ${sql}`, params)).map((r) => String(r['QUERY PLAN'])).join('\n');
    const rec = new Recording(db);
    const spy = await SqlLogStore.open(rec);
    for (const q of [{ virtual_key_ids: 'vk-150' }, { min_latency: '30000' }, { sort_by: 'latency' }, {}, { start_time: iso(END - DAY) }] as Record<string, string>[]) {
      rec.seen.length = 0;
      await list(spy, q);
      for (const { sql, params } of rec.seen) {
        const plan = await explain(sql, [...params]);
        assert.ok(!/Seq Scan on logs\b/.test(plan), `${JSON.stringify(q)}: a sequential scan\n${sql}\n${plan}`);
      }
    }
    // 20,000 records are few enough that a sequential scan may really be cheaper; what matters is
    // that the trigram index exists and can serve the substring search (it does at 1,000,000).
    const client = new pg.Client({ host: pg_.host, port: pg_.port, user: pg_.user, database: pg_.database });
    await client.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const plan = (await client.query("EXPLAIN SELECT id FROM logs l WHERE l.input_content ILIKE '%number 12345:%' OR l.output_content ILIKE '%number 12345:%'")).rows
        .map((r: Record<string, string>) => r['QUERY PLAN'])
        .join('\n');
      assert.match(plan, /Bitmap Index Scan on logs_input_trgm/, plan);
      assert.match(plan, /Bitmap Index Scan on logs_output_trgm/, plan);
    } finally {
      await client.end();
    }
  });

  shared('postgres', () => ({ store, db }));
});
