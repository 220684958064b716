// The usage roll-up behind the overview's long-range breakdowns (breakdown.ts): one row per
// (period, provider, model, virtual key, team, error class) with requests, tokens, spend, cache hits
// and saved spend, and the latency bins percentiles are estimated from, at the hourly and 6-hourly
// levels (PERIODS). Kept like the older roll-ups (rollup.ts): PostgreSQL by statement triggers, SQLite
// by one grouped upsert per inserted batch and a row trigger on delete; top-level records only.
// Migration 13 creates and back-fills it.
import type { Dialect, Migration } from './driver.ts';
import type { LogFilters, Where } from './query.ts';
import { grouped, type Grouping } from './breakdown.ts';
import { BIN_COLS, changeStatements, latencySums, PERIODS, periodFor, pgRollupTriggers, rollupSql, topLevel, type Rollup } from './rollup.ts';
import type { BreakdownBy } from './record.ts';

export const usageTable = (period: number): string => `logs_usage_rollup${period === PERIODS[0] ? '' : `_${period / PERIODS[0]}h`}`;

/** The group column of each breakdown dimension ('' where a record has none, as the records' query gives). */
export const USAGE_GROUP: Record<BreakdownBy, string> = { provider: 'provider', model: 'model', virtual_key: 'virtual_key', team: 'team' };

/**
 * Whose error a record is, as the records' breakdown counts it (breakdownSql): a failed record
 * without an error class is the gateway's; '' for everything else.
 */
const errorClass = (s: string): string =>
  `(CASE WHEN ${s}.error_class IN ('client', 'upstream', 'gateway') THEN ${s}.error_class WHEN ${s}.error_class IS NULL AND ${s}.status = 'error' THEN 'gateway' ELSE '' END)`;

function usageRollups(): Rollup[] {
  return PERIODS.map((period) => ({
    table: usageTable(period),
    key: [
      ['period', (s) => `(${s}.timestamp / ${period}) * ${period}`],
      ['provider', (s) => `COALESCE(${s}.provider, '')`],
      ['model', (s) => `COALESCE(${s}.model, '')`],
      ['virtual_key', (s) => `COALESCE(${s}.virtual_key_id, '')`],
      ['team', (s) => `COALESCE(${s}.team_id, '')`],
      ['error_class', errorClass],
    ],
    sums: [
      ['n', () => '1', 'BIGINT'],
      ['total_tokens', (s) => `${s}.total_tokens`, 'BIGINT'],
      // Spend is what providers answered; a cache hit's price is spend it saved.
      ['cost', (s) => `(CASE WHEN ${s}.cache_hit = 1 THEN 0 ELSE COALESCE(${s}.cost, 0) END)`, 'double'],
      ['hits', (s) => `${s}.cache_hit`, 'BIGINT'],
      ['saved', (s) => `(CASE WHEN ${s}.cache_hit = 1 THEN COALESCE(${s}.cost, 0) ELSE 0 END)`, 'double'],
      ...latencySums,
      ...BIN_COLS.map((c, i): Rollup['sums'][number] => [c, (s) => `(CASE WHEN ${s}.bin = ${i} THEN 1 ELSE 0 END)`, 'BIGINT']),
    ],
  }));
}

/** Migration 13: the tables, back-filled from the records already stored, and what keeps them current. */
export const USAGE_ROLLUP_MIGRATION: Migration = {
  version: 13,
  description: 'usage roll-up by provider, model, virtual key, team and error class (hourly and 6-hourly) for long-range breakdowns',
  statements: (d) => {
    const out: string[] = [];
    const sqliteDelete: string[] = [];
    const pgInsert: string[] = [];
    const pgDelete: string[] = [];
    for (const r of usageRollups()) {
      const q = rollupSql(r, d, true);
      out.push(q.create, `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('logs')}`);
      const c = changeStatements(r, q, d);
      sqliteDelete.push(c.sqliteDelete);
      pgInsert.push(c.pgInsert);
      pgDelete.push(c.pgDelete);
    }
    if (d.name === 'sqlite') {
      // Inserts: usageBatchRollups after each batch (sql-store.ts).
      out.push(`CREATE TRIGGER logs_usage_rollup_delete AFTER DELETE ON logs WHEN ${topLevel('old')} BEGIN ${sqliteDelete.join('\n')} END`);
      return out;
    }
    out.push(...pgRollupTriggers('logs_usage_rollup', pgInsert, pgDelete));
    return out;
  },
};

/** SQLite: the usage roll-up's grouped upserts for one inserted batch, bound to its rowid range (after, upTo]. */
export function usageBatchRollups(d: Dialect): string[] {
  return usageRollups().map((r) => {
    const q = rollupSql(r, d, true);
    const add = q.sums.map((c) => `${c} = ${r.table}.${c} + excluded.${c}`).join(', ');
    return `INSERT INTO ${r.table} (${q.cols.join(', ')}) ${q.aggregate('(SELECT * FROM logs WHERE rowid > ? AND rowid <= ?)')} ON CONFLICT (${q.keys.join(', ')}) DO UPDATE SET ${add}`;
  });
}

/** Filters the usage roll-up answers exactly: its dimensions and time. Anything else reads the records. */
const USAGE_FILTERS = new Set<keyof LogFilters>(['providers', 'models', 'virtual_key_ids', 'start_time', 'end_time']);

/**
 * The roll-up level a breakdown over whole buckets of `bucketMs` can read, if any: the rule is
 * buckets of whole hours (windows over 60 hours: 7 days has 3-hour buckets, 30 days 6-hour ones)
 * and only filters on the roll-up's dimensions. Both paths bin latencies the same way, so the
 * answer is the records' own, percentiles included.
 */
export function usagePeriod(f: LogFilters, bucketMs: number): number | undefined {
  const covered = (Object.keys(f) as (keyof LogFilters)[]).every((k) => f[k] === undefined || USAGE_FILTERS.has(k));
  return covered ? periodFor(bucketMs) : undefined;
}

/**
 * The grouped SQL over the roll-up for periods in [from, to): every sum and the latency bins per
 * (bucket, group), per group or per bucket (`g`), for the groups `only` if given.
 */
export function usageRollupSql(by: BreakdownBy, f: LogFilters, period: number, bucketMs: number, from: number, to: number, g: Grouping = 'bucket-group', only?: readonly string[]): Where {
  const shape = grouped(g, `r.${USAGE_GROUP[by]}`, bucketMs);
  const parts = ['r.period >= CAST(? AS BIGINT)', 'r.period < CAST(? AS BIGINT)'];
  const params: unknown[] = [...shape.params, from, to];
  for (const [column, values] of [['provider', f.providers], ['model', f.models], ['virtual_key', f.virtual_key_ids], [USAGE_GROUP[by], only]] as const) {
    if (!values?.length) continue;
    parts.push(`r.${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  }
  const byClass = (c: string): string => `sum(CASE WHEN r.error_class = '${c}' THEN r.n ELSE 0 END)`;
  return {
    sql: `SELECT ${shape.select}, sum(r.n) AS n,
        ${byClass('client')} AS ce, ${byClass('upstream')} AS ue, ${byClass('gateway')} AS ge,
        sum(r.total_tokens) AS tt, sum(r.cost) AS cost, sum(r.hits) AS hits, sum(r.saved) AS saved,
        ${BIN_COLS.map((c) => `sum(r.${c}) AS ${c}`).join(', ')}
      FROM ${usageTable(period)} r WHERE ${parts.join(' AND ')} GROUP BY ${shape.groupBy} HAVING sum(r.n) > 0`,
    params,
  };
}

/** Retention: roll-up rows whose records are all gone (deletes subtract; emptied rows stay until here). */
export const usagePruneStatements = (): string[] => PERIODS.map((p) => `DELETE FROM ${usageTable(p)} WHERE period < CAST(? AS BIGINT) AND n <= 0`);
