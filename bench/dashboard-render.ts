// The dashboard's first render with 1,000,000 request-log records in its store, in Chromium:
//   node bench/dashboard-render.ts [--rows 1000000] [--runs 5] [--store sqlite|postgres] [--records] [--backfill]
// The store is seeded once (scripts/seed-logs.ts seedSqliteFile: one transaction, prepared
// statements) into ~/.cache/skybridge, keyed by a digest of the records the seed makes and the seed's
// options, so a rerun skips seeding; a cached file from before a newer migration gains it (its
// roll-ups back-filled) when the run's copy is opened, and the run says how long that took. A
// gateway is started on a copy of that file (nothing the run does reaches the cached one) or, with
// `--store postgres`, on a throw-away PostgreSQL cluster the copy's records are loaded into through
// the store's own insert (its triggers keep the roll-ups, as a gateway's writes would); each page is
// opened in a fresh browser context (no cache): the time from navigation to its first meaningful
// render (the overview's totals, its seven uPlot charts and the breakdown table; the logs page's
// first rows), and the API call behind it as the browser timed it. The overview's ranges end when the
// seed did, so a rerun days later reads the same records ("last 24 hours" at seeding time, as a custom
// range). `--records` also times the 30-day breakdown computed from the records (the path before the
// usage roll-ups), once; `--backfill` times migrations 13 and 14 on the SQLite copy (the usage
// roll-ups dropped, then built again).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from 'playwright-core';
import { breakdownSql, foldBreakdown } from '../proxy/src/logs/breakdown.ts';
import { buildWhere, parseFilters } from '../proxy/src/logs/query.ts';
import { SqliteDriver } from '../proxy/src/logs/sqlite-store.ts';
import { LOG_COLUMNS, LOG_TYPES, RULE_COLUMNS, RULE_TYPES, SqlLogStore } from '../proxy/src/logs/sql-store.ts';
import { PostgresDriver } from '../proxy/src/logs/postgres-store.ts';
import { histogramWindow } from '../proxy/src/logs/window.ts';
import { recordMaker, seedSqliteFile, type SeedOptions } from '../scripts/seed-logs.ts';
import { startPostgres, type RunningPostgres } from '../test/helpers/postgres.ts';
import { DatabaseSync } from 'node:sqlite';
import { launchChromium } from '../test/helpers/browser.ts';
import { startGateway } from '../test/helpers/gateway.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    store: { type: 'string', default: 'sqlite' },
    records: { type: 'boolean', default: false },
    backfill: { type: 'boolean', default: false },
  },
});
if (values.store !== 'sqlite' && values.store !== 'postgres') throw new Error('--store is sqlite or postgres');
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
const DAY = 86_400_000;

// ---- the seeded store, cached ----
// No request or response content: the pages measured never show it, and its trigram index is most of the seeding's cost.
const SEED: Omit<SeedOptions, 'end'> = { rows: ROWS, days: 30, content: 0, seed: 1 };
// What the seed makes, not the script's text: its first thousand records at a fixed end time.
const make = recordMaker({ ...SEED, end: 0 });
const sample = JSON.stringify(Array.from({ length: 1000 }, (_, i) => make(i)));
const key = createHash('sha256').update(sample).update(JSON.stringify(SEED)).digest('hex').slice(0, 16);
const cacheDir = join(homedir(), '.cache', 'skybridge');
const cached = join(cacheDir, `dashboard-logs-${ROWS}-${key}.db`);
const metaFile = `${cached}.json`;

interface Meta {
  end: number;
  rows: number;
  seed_seconds: number;
  records_per_second: number;
}

async function seeded(): Promise<Meta> {
  if (existsSync(metaFile) && existsSync(cached)) return JSON.parse(readFileSync(metaFile, 'utf8')) as Meta;
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${cached}.partial`;
  rmSync(partial, { force: true });
  const end = Date.now();
  const t = performance.now();
  process.stderr.write(`seeding ${ROWS} records into ${cached}\n`);
  const rps = await seedSqliteFile(partial, { ...SEED, end, onProgress: (n) => process.stderr.write(`  ${n} records\n`) });
  renameSync(partial, cached);
  const meta: Meta = { end, rows: ROWS, seed_seconds: Math.round((performance.now() - t) / 100) / 10, records_per_second: Math.round(rps) };
  writeFileSync(metaFile, JSON.stringify(meta));
  return meta;
}

// ---- the measurement ----
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const iso = (ms: number): string => new Date(ms).toISOString();
/** Every chart of the overview has drawn (uPlot's canvases), as the browser tests wait for it. */
const CHARTS_DRAWN = "document.querySelectorAll('.uplot canvas').length >= 7";

interface Target {
  name: string;
  path: string;
  /** Resolves once the page shows what it is for. */
  ready(page: Page): Promise<void>;
  /** The API call (a regular expression's source, over path and query) whose timing is reported beside the render. */
  api: string;
}

function overview(label: string, ms: number, end: number, by = 'provider'): Target {
  const dim = by === 'virtual_key' ? 'virtual key' : by;
  return {
    name: `overview, ${label}, by ${dim}`,
    path: `#/overview?range=custom&from=${encodeURIComponent(iso(end - ms))}&to=${encodeURIComponent(iso(end))}${by === 'provider' ? '' : `&by=${by}`}`,
    api: String.raw`/^\/api\/logs\/breakdown\?/`,
    ready: async (page) => {
      await page.getByLabel('Totals, custom range').getByText('Requests').waitFor();
      await page.waitForFunction(CHARTS_DRAWN);
      await page.getByRole('table', { name: `Usage by ${dim}` }).getByRole('row').nth(2).waitFor();
    },
  };
}

const logsPage: Target = {
  name: 'logs, first page',
  path: '#/logs',
  api: String.raw`/^\/api\/logs(\?|$)/`,
  ready: async (page) => {
    await page.getByRole('table', { name: 'Request logs' }).getByRole('row').nth(10).waitFor();
  },
};

async function timeOnce(browser: Awaited<ReturnType<typeof launchChromium>>, url: string, t: Target): Promise<{ render: number; api: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(300_000);
  try {
    const page = await context.newPage();
    const start = performance.now();
    await page.goto(`${url}/${t.path}`);
    await t.ready(page);
    const render = performance.now() - start;
    // A string: the project's typings have no DOM.
    const api = Number(
      await page.evaluate(`Math.max(0, ...performance.getEntriesByType('resource').filter((e) => ${t.api}.test(new URL(e.name).pathname + new URL(e.name).search)).map((e) => e.duration))`),
    );
    return { render, api };
  } finally {
    await context.close();
  }
}

/** The 30-day breakdown by virtual key from the records, as the store computed it before the roll-up. */
async function fromRecords(file: string, end: number): Promise<number> {
  const db = new SqliteDriver(file);
  try {
    const w = histogramWindow(parseFilters({ start_time: iso(end - 30 * DAY), end_time: iso(end) }));
    const start = Math.floor(w.start / w.bucketMs) * w.bucketMs;
    const last = Math.floor(w.end / w.bucketMs) * w.bucketMs + w.bucketMs - 1;
    const q = breakdownSql('virtual_key', buildWhere({ start_time: start, end_time: last }, db.dialect.ilike, true, true), w, db.dialect);
    const t = performance.now();
    foldBreakdown('virtual_key', w, await db.query(q.sql, q.params), 8, { calls: [], errors: [], tools: [] });
    return performance.now() - t;
  } finally {
    await db.close();
  }
}

/** Migrations 13 and 14 on an existing store: the usage roll-ups dropped as if they never ran, then the store opened. */
async function backfill(file: string): Promise<number> {
  const db = new SqliteDriver(file);
  for (const sql of [
    'DROP TRIGGER logs_usage_rollup_delete',
    'DROP TABLE logs_usage_rollup',
    'DROP TABLE logs_usage_rollup_6h',
    'DROP TRIGGER logs_usage_rollup_by_delete',
    'DROP TABLE logs_usage_rollup_by',
    'DROP TABLE logs_usage_rollup_by_6h',
    'DELETE FROM logs_schema_migrations WHERE version IN (13, 14)',
  ])
    await db.execute(sql);
  return opened(file, db);
}

/** Opens the store (applying the migrations the file lacks), closed again: how long that took. */
async function opened(file: string, db = new SqliteDriver(file)): Promise<number> {
  const t = performance.now();
  const store = await SqlLogStore.open(db);
  const ms = performance.now() - t;
  await store.close();
  return ms;
}

/**
 * A throw-away PostgreSQL cluster holding the file's records, loaded through the driver's insert in
 * batches: the statement triggers keep every roll-up, as replicas' writes would.
 */
async function loadPostgres(file: string): Promise<{ pg: RunningPostgres; ms: number }> {
  const pg = await startPostgres();
  const t = performance.now();
  const driver = new PostgresDriver({ host: pg.host, port: pg.port, user: pg.user, password: '', db_name: pg.database, ssl_mode: 'disable', statement_timeout_ms: 600_000 });
  const store = await SqlLogStore.open(driver);
  const src = new DatabaseSync(file, { readOnly: true });
  try {
    const logs = src.prepare(`SELECT rowid AS rid, ${LOG_COLUMNS.join(', ')} FROM logs WHERE rowid > ? ORDER BY rowid LIMIT 5000`);
    let after = 0;
    for (let done = 0; ; ) {
      const rows = logs.all(after) as Record<string, unknown>[];
      if (!rows.length) break;
      after = Number(rows.at(-1)!.rid);
      const ids = rows.map((r) => r.id);
      const rules = src.prepare(`SELECT ${RULE_COLUMNS.join(', ')} FROM log_routing_rules WHERE log_id IN (${ids.map(() => '?').join(', ')})`).all(...(ids as string[]));
      await driver.insert([
        { table: 'logs', columns: LOG_COLUMNS, types: LOG_TYPES, rows: rows.map((r) => LOG_COLUMNS.map((c) => r[c])) },
        ...(rules.length ? [{ table: 'log_routing_rules', columns: RULE_COLUMNS, types: RULE_TYPES, rows: rules.map((r) => RULE_COLUMNS.map((c) => (r as Record<string, unknown>)[c])) }] : []),
      ]);
      done += rows.length;
      if (done % 100_000 === 0) process.stderr.write(`  ${done} records into PostgreSQL\n`);
    }
    await driver.execute('ANALYZE');
  } finally {
    src.close();
    await store.close();
  }
  return { pg, ms: performance.now() - t };
}

const meta = await seeded();
const work = mkdtempSync(join(tmpdir(), 'skybridge-render-'));
const file = join(work, 'logs.db');
copyFileSync(cached, file);
const size = statSync(file).size;
const backfillMs = values.backfill ? await backfill(file) : undefined;
// A cached file from before the newest migrations gains them here, not during the first visit.
const migrateMs = await opened(file);
const pgLoad = values.store === 'postgres' ? await loadPostgres(file) : undefined;
const gw = await startGateway({
  logs_store: pgLoad
    ? { enabled: true, type: 'postgres', config: { host: pgLoad.pg.host, port: String(pgLoad.pg.port), user: pgLoad.pg.user, password: '', db_name: pgLoad.pg.database, ssl_mode: 'disable' } }
    : { enabled: true, type: 'sqlite', config: { path: file } },
});
const browser = await launchChromium();
try {
  const targets = [
    overview('24 hours', DAY, meta.end),
    overview('7 days', 7 * DAY, meta.end),
    overview('30 days', 30 * DAY, meta.end),
    overview('30 days', 30 * DAY, meta.end, 'virtual_key'),
    logsPage,
  ];
  // One visit first: the gateway's and the SQLite file's caches warm, as a dashboard in use has them.
  await timeOnce(browser, gw.url, logsPage);
  const results: { name: string; render: number[]; api: number[] }[] = [];
  for (const t of targets) {
    const r = { name: t.name, render: [] as number[], api: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      const x = await timeOnce(browser, gw.url, t);
      r.render.push(x.render);
      r.api.push(x.api);
    }
    results.push(r);
    process.stderr.write(`${t.name}: ${Math.round(median(r.render))} ms\n`);
  }
  const records = values.records ? await fromRecords(file, meta.end) : undefined;
  const fmt = (xs: number[]): string => `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`;
  console.log(`${meta.rows.toLocaleString('en')} records over 30 days, SQLite file ${Math.round(size / 1e6)} MB; seeded in ${meta.seed_seconds} s (${meta.records_per_second.toLocaleString('en')} records/s, cached: ${cached})`);
  if (migrateMs > 1000) console.log(`The cached file's pending migrations applied on open in ${(migrateMs / 1000).toFixed(1)} s`);
  if (pgLoad) console.log(`Store: PostgreSQL (${pgLoad.pg.url}), the records loaded through the store's insert in ${(pgLoad.ms / 1000).toFixed(0)} s`);
  else console.log('Store: SQLite');
  console.log(`Chromium ${browser.version()}, 1280×800, a fresh context per visit, medians of ${RUNS} (min–max) in ms\n`);
  console.log('| page | first meaningful render | its API call |');
  console.log('|---|---:|---:|');
  for (const r of results) console.log(`| ${r.name} | ${fmt(r.render)} | ${fmt(r.api)} |`);
  if (backfillMs !== undefined) console.log(`\nMigrations 13 and 14 (the usage roll-ups built from ${meta.rows.toLocaleString('en')} records): ${(backfillMs / 1000).toFixed(1)} s`);
  if (records !== undefined) console.log(`\n30-day breakdown by virtual key from the records (before the usage roll-up), once: ${Math.round(records)} ms`);
} finally {
  await browser.close();
  await gw.stop();
  await pgLoad?.pg.stop();
  rmSync(work, { recursive: true, force: true });
}
