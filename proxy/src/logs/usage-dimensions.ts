// The usage roll-up per breakdown dimension: one row per (dimension, period, value) with requests,
// each error class's count, tokens, spend, cache hits, saved spend and the latency bins. The usage
// roll-up (usage-rollup.ts) keys each row by provider × model × key × team × error class, so 1,000,000
// records over 30 days made 642,460 hourly rows, about as many as records per combination; a 30-day
// overview by virtual key reads this table's ~200 keys × 120 six-hour periods instead. The counts and
// bins are the same sums, so the answers (percentiles included) are the records' own.
// Breakdowns filtered on another dimension (by key, with a provider filter, say) read the finer usage
// roll-up; other filters read the records (usage-rollup.ts usagePeriod).
// Kept like the other roll-ups (rollup.ts): PostgreSQL by statement triggers, SQLite by grouped
// upserts per inserted batch and a row trigger on delete; top-level records only. Migration 14.
import type { Dialect, Migration } from './driver.ts';
import type { LogFilters, Where } from './query.ts';
import { grouped, type Grouping } from './breakdown.ts';
import { BIN_COLS, changeStatements, PERIODS, pgRollupTriggers, rollupSql, topLevel, type Rollup } from './rollup.ts';
import { BREAKDOWN_DIMENSIONS, type BreakdownBy } from './record.ts';
import { usageTable } from './usage-rollup.ts';

export const dimensionTable = (period: number): string => `logs_usage_rollup_by${period === PERIODS[0] ? '' : `_${period / PERIODS[0]}h`}`;

/** Each dimension's column in the records, and the filter that selects its values. */
const DIMENSIONS: Record<BreakdownBy, { column: string; filter?: keyof LogFilters }> = {
  provider: { column: 'provider', filter: 'providers' },
  model: { column: 'model', filter: 'models' },
  virtual_key: { column: 'virtual_key_id', filter: 'virtual_key_ids' },
  team: { column: 'team_id' },
};

/** Whose error a record is, as the records' breakdown counts it (breakdown.ts breakdownSql). */
const CLASS_SUMS: Rollup['sums'] = [
  ['ce', (s) => `(CASE WHEN ${s}.error_class = 'client' THEN 1 ELSE 0 END)`, 'BIGINT'],
  ['ue', (s) => `(CASE WHEN ${s}.error_class = 'upstream' THEN 1 ELSE 0 END)`, 'BIGINT'],
  ['ge', (s) => `(CASE WHEN ${s}.error_class = 'gateway' OR (${s}.status = 'error' AND ${s}.error_class IS NULL) THEN 1 ELSE 0 END)`, 'BIGINT'],
];

/**
 * One Rollup per (period, dimension), all of a period's in one table: the dimension is a constant
 * key, so the shared machinery (rollupSql, changeStatements) writes each one's upserts and deletes.
 */
function dimensionRollups(period: number): Rollup[] {
  return BREAKDOWN_DIMENSIONS.map((by) => ({
    table: dimensionTable(period),
    key: [
      ['dim', () => `'${by}'`],
      ['period', (s) => `(${s}.timestamp / ${period}) * ${period}`],
      ['grp', (s) => `COALESCE(${s}.${DIMENSIONS[by].column}, '')`],
    ],
    sums: [
      ['n', () => '1', 'BIGINT'],
      ...CLASS_SUMS,
      ['total_tokens', (s) => `${s}.total_tokens`, 'BIGINT'],
      // As in the usage roll-up: spend is what providers answered; a cache hit's price is saved spend.
      ['cost', (s) => `(CASE WHEN ${s}.cache_hit = 1 THEN 0 ELSE COALESCE(${s}.cost, 0) END)`, 'double'],
      ['hits', (s) => `${s}.cache_hit`, 'BIGINT'],
      ['saved', (s) => `(CASE WHEN ${s}.cache_hit = 1 THEN COALESCE(${s}.cost, 0) ELSE 0 END)`, 'double'],
      ...BIN_COLS.map((c, i): Rollup['sums'][number] => [c, (s) => `(CASE WHEN ${s}.bin = ${i} THEN 1 ELSE 0 END)`, 'BIGINT']),
    ],
  }));
}

/**
 * The back-fill, from the usage roll-up of the same period rather than the records: its rows hold
 * the same sums (with the error class a key there), and there are fewer of them.
 */
function backfill(period: number, cols: readonly string[]): string[] {
  const byClass = (c: string): string => `sum(CASE WHEN u.error_class = '${c}' THEN u.n ELSE 0 END)`;
  return BREAKDOWN_DIMENSIONS.map(
    (by) => `INSERT INTO ${dimensionTable(period)} (${cols.join(', ')})
      SELECT '${by}', u.period, u.${by}, sum(u.n), ${byClass('client')}, ${byClass('upstream')}, ${byClass('gateway')},
        sum(u.total_tokens), sum(u.cost), sum(u.hits), sum(u.saved), ${BIN_COLS.map((c) => `sum(u.${c})`).join(', ')}
      FROM ${usageTable(period)} u GROUP BY u.period, u.${by} HAVING sum(u.n) > 0`,
  );
}

/** Migration 14: the tables, back-filled from the usage roll-up, and what keeps them current. */
export const USAGE_DIMENSIONS_MIGRATION: Migration = {
  version: 14,
  description: 'usage roll-up per breakdown dimension (provider, model, virtual key, team; hourly and 6-hourly): long-range breakdowns read a row per value',
  statements: (d) => {
    const out: string[] = [];
    const sqliteDelete: string[] = [];
    const pgInsert: string[] = [];
    const pgDelete: string[] = [];
    for (const period of PERIODS) {
      const rollups = dimensionRollups(period);
      const first = rollupSql(rollups[0]!, d, true);
      out.push(first.create, ...backfill(period, first.cols));
      for (const r of rollups) {
        const c = changeStatements(r, rollupSql(r, d, true), d);
        sqliteDelete.push(c.sqliteDelete);
        pgInsert.push(c.pgInsert);
        pgDelete.push(c.pgDelete);
      }
    }
    if (d.name === 'sqlite') {
      // Inserts: dimensionBatchRollups after each batch (sql-store.ts).
      out.push(`CREATE TRIGGER logs_usage_rollup_by_delete AFTER DELETE ON logs WHEN ${topLevel('old')} BEGIN ${sqliteDelete.join('\n')} END`);
      return out;
    }
    out.push(...pgRollupTriggers('logs_usage_rollup_by', pgInsert, pgDelete));
    return out;
  },
};

/** SQLite: the grouped upserts for one inserted batch (a statement per period and dimension), bound to its rowid range (after, upTo]. */
export function dimensionBatchRollups(d: Dialect): string[] {
  return PERIODS.flatMap((period) =>
    dimensionRollups(period).map((r) => {
      const q = rollupSql(r, d, true);
      const add = q.sums.map((c) => `${c} = ${r.table}.${c} + excluded.${c}`).join(', ');
      return `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('(SELECT * FROM logs WHERE rowid > ? AND rowid <= ?)')} ON CONFLICT (${q.keys.join(', ')}) DO UPDATE SET ${add}`;
    }),
  );
}

/**
 * Whether this table answers a breakdown by `by` under these filters: time, and at most a filter on
 * `by` itself (by key, for chosen keys). The caller has checked the usage roll-up answers at all.
 */
export function dimensionCovers(by: BreakdownBy, f: LogFilters): boolean {
  const own = DIMENSIONS[by].filter;
  return (Object.keys(f) as (keyof LogFilters)[]).every((k) => f[k] === undefined || k === 'start_time' || k === 'end_time' || k === own);
}

/**
 * The grouped SQL over periods in [from, to): every sum and the latency bins per (bucket, value),
 * per value or per bucket (`g`), for the values `only` if given.
 */
export function dimensionSql(by: BreakdownBy, f: LogFilters, period: number, bucketMs: number, from: number, to: number, g: Grouping = 'bucket-group', only?: readonly string[]): Where {
  const shape = grouped(g, 'r.grp', bucketMs);
  const parts = ['r.dim = ?', 'r.period >= CAST(? AS BIGINT)', 'r.period < CAST(? AS BIGINT)'];
  const params: unknown[] = [...shape.params, by, from, to];
  const own = DIMENSIONS[by].filter;
  for (const values of [own ? (f[own] as string[] | undefined) : undefined, only]) {
    if (!values?.length) continue;
    parts.push(`r.grp IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  }
  return {
    sql: `SELECT ${shape.select}, sum(r.n) AS n, sum(r.ce) AS ce, sum(r.ue) AS ue, sum(r.ge) AS ge,
        sum(r.total_tokens) AS tt, sum(r.cost) AS cost, sum(r.hits) AS hits, sum(r.saved) AS saved,
        ${BIN_COLS.map((c) => `sum(r.${c}) AS ${c}`).join(', ')}
      FROM ${dimensionTable(period)} r WHERE ${parts.join(' AND ')} GROUP BY ${shape.groupBy} HAVING sum(r.n) > 0`,
    params,
  };
}

/** Retention: rows whose records are all gone (deletes subtract; emptied rows stay until here). */
export const dimensionPruneStatements = (): string[] => PERIODS.map((p) => `DELETE FROM ${dimensionTable(p)} WHERE period < CAST(? AS BIGINT) AND n <= 0`);
