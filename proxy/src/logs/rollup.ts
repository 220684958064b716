// Roll-ups of the request logs, so stats, totals and long-range histograms read a few thousand
// pre-aggregated rows instead of every record. logs_rollup: one row per (period, provider, model,
// object, status) with counts, token, cost and latency sums; logs_latency_rollup: one row per
// (period, provider, model) with a latency histogram in LATENCY_BINS log-spaced bins, from which
// percentiles over long windows are estimated. Each at two levels (PERIODS). Deletes are followed by
// triggers on both engines; inserts by a statement trigger on PostgreSQL (any replica feeds them) and,
// on SQLite, which has only row triggers, by one grouped upsert per inserted batch (migration 6).
// Only top-level records are rolled up (migration 7): a child record (parent_request_id set, an agent
// request's turn) is part of its parent's request, which alone counts.
import type { Dialect } from './driver.ts';
import type { LogFilters } from './query.ts';
import { enginesToBits } from './record.ts';

export const HOUR_MS = 3_600_000;
/**
 * Roll-up levels: hourly, and 6-hourly for the long windows (a 30-day chart has 6-hour buckets, so
 * it reads ~120 periods per group instead of ~720). Every nice bucket of an hour or more is a
 * multiple of one of them (window.ts).
 */
export const PERIODS = [HOUR_MS, 6 * HOUR_MS] as const;
const suffix = (period: number): string => (period === HOUR_MS ? '' : `_${period / HOUR_MS}h`);
export const rollupTable = (period: number): string => `logs_rollup${suffix(period)}`;
export const latencyTable = (period: number): string => `logs_latency_rollup${suffix(period)}`;
/** The coarsest level that divides `bucketMs`, if any. */
export function periodFor(bucketMs: number): number | undefined {
  return [...PERIODS].reverse().find((p) => bucketMs % p === 0);
}
export const LATENCY_BINS = 40;
/** Bin i holds latencies in [RATIO^i, RATIO^(i+1)) ms (bin 0 also everything below); the last bin is open-ended (~163 s and up). */
export const LATENCY_RATIO = 1.35;
const LN_RATIO = Math.log(LATENCY_RATIO);

export const BIN_COLS = Array.from({ length: LATENCY_BINS }, (_, i) => `b${i}`);

/** Filters the roll-up can answer: its dimensions and time. Anything else reads the records. */
const ROLLUP_FILTERS = new Set<keyof LogFilters>(['providers', 'models', 'status', 'objects', 'routing_engine_used', 'missing_cost_only', 'start_time', 'end_time']);
/** The latency roll-up has fewer dimensions (a narrower table keeps the bin sums fast). */
const LATENCY_FILTERS = new Set<keyof LogFilters>(['providers', 'models', 'start_time', 'end_time']);

const covered = (f: LogFilters, allowed: Set<keyof LogFilters>): boolean =>
  (Object.keys(f) as (keyof LogFilters)[]).every((k) => f[k] === undefined || allowed.has(k));
export const rollupCovers = (f: LogFilters): boolean => covered(f, ROLLUP_FILTERS);
export const latencyRollupCovers = (f: LogFilters): boolean => covered(f, LATENCY_FILTERS);

/** SQL for the latency bin of `x` (NULL → -1). */
export function binExpr(x: string, d: Dialect): string {
  const least = d.name === 'postgres' ? 'LEAST' : 'min';
  const floor = d.name === 'postgres' ? `floor(ln(${x}) / ${LN_RATIO})::integer` : `CAST(ln(${x}) / ${LN_RATIO} AS INTEGER)`;
  return `(CASE WHEN ${x} IS NULL THEN -1 WHEN ${x} < ${LATENCY_RATIO} THEN 0 ELSE ${least}(${LATENCY_BINS - 1}, ${floor}) END)`;
}

/** Nearest-rank percentile estimated from bin counts: geometric interpolation inside the bin. */
export function binPercentile(bins: readonly number[], p: number): number {
  const total = bins.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let before = 0;
  for (let i = 0; i < bins.length; i++) {
    const c = bins[i]!;
    if (c > 0 && before + c >= rank) {
      const frac = (rank - before) / c;
      return i === 0 ? LATENCY_RATIO * frac : Math.pow(LATENCY_RATIO, i + frac);
    }
    before += c;
  }
  return Math.pow(LATENCY_RATIO, bins.length);
}

const KEY_TYPES: Record<string, string> = { period: 'BIGINT', engines: 'INTEGER', priced: 'INTEGER' };

/** A roll-up table: key columns and summed columns, each an expression over a logs row `s`. */
export interface Rollup {
  table: string;
  key: [name: string, expr: (s: string) => string][];
  sums: [name: string, expr: (s: string) => string, type: 'BIGINT' | 'double'][];
}

const periodKey = (period: number): Rollup['key'] => [
  ['period', (s) => `(${s}.timestamp / ${period}) * ${period}`],
  ['provider', (s) => `COALESCE(${s}.provider, '')`],
  ['model', (s) => `COALESCE(${s}.model, '')`],
];
export const latencySums: Rollup['sums'] = [
  ['latency_n', (s) => `(CASE WHEN ${s}.latency IS NULL THEN 0 ELSE 1 END)`, 'BIGINT'],
  ['latency_sum', (s) => `COALESCE(${s}.latency, 0)`, 'double'],
];

/**
 * `hitsApart`: a cache hit's price (its record's cost) is left out of the cost sum, as spend saved
 * rather than spent (migration 15 on). Migrations before it ran before records had `cache_hit`.
 */
function rollups(hitsApart: boolean): Rollup[] {
  return PERIODS.flatMap((period): Rollup[] => [
    {
      table: rollupTable(period),
      key: [
        ...periodKey(period),
        ['object', (s) => `${s}.object`],
        ['status', (s) => `${s}.status`],
        // The routing-engine bit set and whether a price was known: few values each, and they make
        // the routing_engine_used and missing_cost_only filters answerable here too.
        ['engines', (s) => `${s}.routing_engines`],
        ['priced', (s) => `(CASE WHEN ${s}.cost IS NULL THEN 0 ELSE 1 END)`],
      ],
      sums: [
        ['n', () => '1', 'BIGINT'],
        ['prompt_tokens', (s) => `${s}.prompt_tokens`, 'BIGINT'],
        ['completion_tokens', (s) => `${s}.completion_tokens`, 'BIGINT'],
        ['total_tokens', (s) => `${s}.total_tokens`, 'BIGINT'],
        ['cost', (s) => (hitsApart ? `(CASE WHEN ${s}.cache_hit = 1 THEN 0 ELSE COALESCE(${s}.cost, 0) END)` : `COALESCE(${s}.cost, 0)`), 'double'],
        ...latencySums,
      ],
    },
    {
      table: latencyTable(period),
      key: periodKey(period),
      sums: [...latencySums, ...BIN_COLS.map((c, i): Rollup['sums'][number] => [c, (s) => `(CASE WHEN ${s}.bin = ${i} THEN 1 ELSE 0 END)`, 'BIGINT'])],
    },
  ]);
}

/** The condition a counted (top-level) record meets, over a logs row `s`. */
export const topLevel = (s: string): string => `${s}.parent_request_id IS NULL`;

export function rollupSql(r: Rollup, d: Dialect, topOnly = false): { create: string; aggregate: (source: string) => string; cols: string[]; keys: string[]; sums: string[] } {
  const keys = r.key.map(([k]) => k);
  const sums = r.sums.map(([c]) => c);
  const create = `CREATE TABLE ${r.table} (
      ${r.key.map(([k]) => `${k} ${KEY_TYPES[k] ?? 'TEXT'} NOT NULL`).join(', ')},
      ${r.sums.map(([c, , t]) => `${c} ${t === 'double' ? d.double : t} NOT NULL`).join(', ')},
      PRIMARY KEY (${keys.join(', ')})
    )${d.name === 'sqlite' ? ' WITHOUT ROWID' : ''}`;
  // Grouped in key order, so concurrent upserts (several replicas) lock the rows in the same order.
  const aggregate = (source: string): string =>
    `SELECT ${r.key.map(([, e]) => e('s')).join(', ')}, ${r.sums.map(([, e]) => `sum(${e('s')})`).join(', ')}
     FROM (SELECT t.*, ${binExpr('t.latency', d)} AS bin FROM ${source} t${topOnly ? ` WHERE ${topLevel('t')}` : ''}) s GROUP BY ${r.key.map((_, i) => i + 1).join(', ')} ORDER BY ${r.key.map((_, i) => i + 1).join(', ')}`;
  return { create, aggregate, cols: [...keys, ...sums], keys, sums };
}

/**
 * One roll-up's statements that follow a change of `logs`: the upsert's SET clause, SQLite's per-row
 * delete, and PostgreSQL's grouped insert and delete over transition tables. Shared by migration 6
 * and migration 7 (which passes a top-level-only `q`).
 */
export function changeStatements(r: Rollup, q: ReturnType<typeof rollupSql>, d: Dialect): { add: string; sqliteDelete: string; pgInsert: string; pgDelete: string } {
  const add = q.sums.map((c) => `${c} = ${r.table}.${c} + excluded.${c}`).join(', ');
  // Deletes (retention, by id) are rare next to inserts: the bin is recomputed per column here.
  const oldRow = (e: (s: string) => string): string => e('old').replaceAll('old.bin', binExpr('old.latency', d));
  return {
    add,
    sqliteDelete: `UPDATE ${r.table} SET ${r.sums.map(([c, e]) => `${c} = ${c} - ${oldRow(e)}`).join(', ')}
        WHERE ${r.key.map(([k, e]) => `${k} = ${oldRow(e)}`).join(' AND ')};`,
    pgInsert: `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('new_rows')} ON CONFLICT (${q.keys.join(', ')}) DO UPDATE SET ${add};`,
    pgDelete: `UPDATE ${r.table} r SET ${q.sums.map((c) => `${c} = r.${c} - d.${c}`).join(', ')}
        FROM (${q.aggregate('old_rows')}) AS d (${q.cols.join(', ')}) WHERE ${q.keys.map((k) => `r.${k} = d.${k}`).join(' AND ')};`,
  };
}

/** Migration statements: the roll-up tables, their backfill from existing records, the triggers. */
export function rollupStatements(d: Dialect): string[] {
  const out: string[] = [];
  const sqliteInsert: string[] = [];
  const sqliteDelete: string[] = [];
  const pgInsert: string[] = [];
  const pgDelete: string[] = [];
  for (const r of rollups(false)) {
    const q = rollupSql(r, d);
    out.push(q.create, `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('logs')}`);
    const c = changeStatements(r, q, d);
    // The row's values once, through a one-row subquery (`s`), so the latency bin is computed once
    // rather than once per bin column; WHERE true tells the upsert's ON CONFLICT from a join's ON.
    sqliteInsert.push(`INSERT INTO ${r.table} (${q.cols.join(', ')})
        SELECT ${[...r.key.map(([, e]) => e('s')), ...r.sums.map(([, e]) => e('s'))].join(', ')}
        FROM (SELECT new.timestamp AS timestamp, new.provider AS provider, new.model AS model, new.object AS object, new.status AS status,
          new.prompt_tokens AS prompt_tokens, new.completion_tokens AS completion_tokens, new.total_tokens AS total_tokens, new.cost AS cost,
          new.latency AS latency, new.routing_engines AS routing_engines, ${binExpr('new.latency', d)} AS bin) s WHERE true
        ON CONFLICT (${q.keys.join(', ')}) DO UPDATE SET ${c.add};`);
    sqliteDelete.push(c.sqliteDelete);
    pgInsert.push(c.pgInsert);
    pgDelete.push(c.pgDelete);
  }
  if (d.name === 'sqlite') {
    out.push(
      `CREATE TRIGGER logs_rollup_insert AFTER INSERT ON logs BEGIN ${sqliteInsert.join('\n')} END`,
      `CREATE TRIGGER logs_rollup_delete AFTER DELETE ON logs BEGIN ${sqliteDelete.join('\n')} END`,
    );
    return out;
  }
  out.push(...pgRollupTriggers('logs_rollup', pgInsert, pgDelete));
  return out;
}

/**
 * PostgreSQL: statement-level triggers over transition tables, one grouped upsert per batch:
 * `<name>_insert` and `<name>_delete`, each a function and the trigger that runs it.
 */
export function pgRollupTriggers(name: string, pgInsert: readonly string[], pgDelete: readonly string[]): string[] {
  return [
    `CREATE FUNCTION ${name}_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${pgInsert.join('\n')} RETURN NULL; END $fn$`,
    `CREATE FUNCTION ${name}_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${pgDelete.join('\n')} RETURN NULL; END $fn$`,
    `CREATE TRIGGER ${name}_insert AFTER INSERT ON logs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${name}_insert()`,
    `CREATE TRIGGER ${name}_delete AFTER DELETE ON logs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${name}_delete()`,
  ];
}

/**
 * Migration 7: the roll-ups count top-level records only. They are rebuilt from those (records
 * written before may include children counted on their own), and the triggers that follow inserts
 * (PostgreSQL) and deletes (both) skip children from now on. Migration 15 runs it again with
 * `hitsApart`, rebuilding them with a cache hit's price out of the cost sum.
 */
export function topLevelRollupStatements(d: Dialect, hitsApart = false): string[] {
  const out: string[] = [];
  const sqliteDelete: string[] = [];
  const pgInsert: string[] = [];
  const pgDelete: string[] = [];
  for (const r of rollups(hitsApart)) {
    const q = rollupSql(r, d, true);
    out.push(`DELETE FROM ${r.table}`, `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('logs')}`);
    const c = changeStatements(r, q, d);
    sqliteDelete.push(c.sqliteDelete);
    pgInsert.push(c.pgInsert);
    pgDelete.push(c.pgDelete);
  }
  if (d.name === 'sqlite') {
    // Inserts are rolled up per batch (sqliteBatchRollups), which skips children itself.
    out.push('DROP TRIGGER IF EXISTS logs_rollup_delete', `CREATE TRIGGER logs_rollup_delete AFTER DELETE ON logs WHEN ${topLevel('old')} BEGIN ${sqliteDelete.join('\n')} END`);
    return out;
  }
  // The triggers call the functions by name: replacing the functions is enough.
  out.push(
    `CREATE OR REPLACE FUNCTION logs_rollup_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${pgInsert.join('\n')} RETURN NULL; END $fn$`,
    `CREATE OR REPLACE FUNCTION logs_rollup_delete() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN ${pgDelete.join('\n')} RETURN NULL; END $fn$`,
  );
  return out;
}

/**
 * SQLite: the roll-up upserts for one inserted batch, grouped (a few rows per batch instead of four
 * upserts per record, which a row trigger did). Each takes the batch's rowid range: (after, upTo].
 */
export function sqliteBatchRollups(d: Dialect): string[] {
  return rollups(true).map((r) => {
    const q = rollupSql(r, d, true);
    const add = q.sums.map((c) => `${c} = ${r.table}.${c} + excluded.${c}`).join(', ');
    return `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('(SELECT * FROM logs WHERE rowid > ? AND rowid <= ?)')} ON CONFLICT (${q.keys.join(', ')}) DO UPDATE SET ${add}`;
  });
}

export interface Where {
  sql: string;
  params: unknown[];
}

/** WHERE over a roll-up table (alias r) for the dimension filters, whole periods in [fromHour, toHour). */
export function rollupWhere(f: LogFilters, fromHour: number, toHour: number, latencyOnly = false): Where {
  const parts = ['r.period >= CAST(? AS BIGINT)', 'r.period < CAST(? AS BIGINT)'];
  const params: unknown[] = [fromHour, toHour];
  const inList = (column: string, values: string[] | undefined): void => {
    if (!values?.length) return;
    parts.push(`r.${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  inList('provider', f.providers);
  inList('model', f.models);
  if (!latencyOnly) {
    inList('status', f.status);
    inList('object', f.objects);
    if (f.routing_engine_used?.length) {
      parts.push('(r.engines & CAST(? AS INTEGER)) <> 0');
      params.push(enginesToBits(f.routing_engine_used));
    }
    if (f.missing_cost_only) parts.push('r.priced = 0');
  }
  return { sql: `WHERE ${parts.join(' AND ')}`, params };
}

export const ROLLUP_BIN_SUMS = BIN_COLS.map((c) => `sum(r.${c}) AS ${c}`).join(', ');
export const binsOf = (row: Record<string, unknown>): number[] => BIN_COLS.map((c) => Number(row[c] ?? 0));

/**
 * The time range split for the roll-up: [start, h1) and [h2, end] from the records, the whole hours
 * [h1, h2) from the roll-up. Undefined when no whole hour fits (short ranges read the records).
 */
export function splitHours(start: number, end: number, period: number = HOUR_MS): { h1: number; h2: number } | undefined {
  const h1 = Math.ceil(start / period) * period;
  const h2 = Math.floor((end + 1) / period) * period;
  return h2 > h1 ? { h1, h2 } : undefined;
}
