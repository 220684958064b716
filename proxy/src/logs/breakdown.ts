// Usage broken down by provider, model, virtual key or team over a time window, for the overview:
// one grouped query, over the usage roll-up for buckets of whole hours (usage-rollup.ts) or else over
// the covering index logs_usage_cover (migration 12) per (bucket, group, latency bin), folded here
// into totals and per-bucket series, the busiest groups kept and the rest summed as `other`; and the
// MCP tool calls of the same window from mcp_tool_logs. Percentiles come from the latency bins
// (rollup.ts), so a group's p99 over 30 days costs no sort.
import type { Dialect, Row, SqlDriver } from './driver.ts';
import type { Where } from './query.ts';
import { binExpr, binPercentile, binsOf, LATENCY_BINS } from './rollup.ts';
import type { BreakdownBy, McpToolUsage, UsageBreakdown, UsageGroup, UsageSeries, UsageTotals } from './record.ts';
import { bucketStarts, type HistogramWindow } from './window.ts';

const COLUMN: Record<BreakdownBy, string> = { provider: 'provider', model: 'model', virtual_key: 'virtual_key_id', team: 'team_id' };
export const DEFAULT_GROUPS = 8;
export const MAX_GROUPS = 50;
const MCP_TOOLS = 20;

const SUMS = ['requests', 'client_errors', 'upstream_errors', 'gateway_errors', 'total_tokens', 'cost', 'cache_hits', 'saved_cost'] as const satisfies readonly (keyof UsageTotals)[];

/** Sums of one (bucket, group) before percentiles: latency bins kept to merge groups and buckets. */
type Acc = Pick<UsageTotals, (typeof SUMS)[number]> & { bins: number[] };
const FIELDS: readonly (keyof UsageTotals)[] = [...SUMS, 'p50_latency', 'p95_latency', 'p99_latency'];

const empty = (): Acc => ({ requests: 0, client_errors: 0, upstream_errors: 0, gateway_errors: 0, total_tokens: 0, cost: 0, cache_hits: 0, saved_cost: 0, bins: new Array<number>(LATENCY_BINS).fill(0) });

function add(into: Acc, from: Acc): void {
  for (const k of SUMS) into[k] += from[k];
  for (let i = 0; i < LATENCY_BINS; i++) into.bins[i]! += from.bins[i]!;
}

function totalsOf(a: Acc): UsageTotals {
  const timed = a.bins.some((b) => b > 0);
  const pct = (p: number): number | null => (timed ? Math.round(binPercentile(a.bins, p) * 100) / 100 : null);
  const out = {} as UsageTotals;
  for (const k of SUMS) out[k] = a[k];
  out.p50_latency = pct(50);
  out.p95_latency = pct(95);
  out.p99_latency = pct(99);
  return out;
}

/** Per-bucket series of one group; an empty bucket is 0 for counts and null (no value) for latency. */
function seriesOf(buckets: readonly number[], accs: ReadonlyMap<number, Acc>): UsageSeries {
  const series = Object.fromEntries(FIELDS.map((f) => [f, [] as (number | null)[]])) as UsageSeries;
  for (const b of buckets) {
    const t = totalsOf(accs.get(b) ?? empty());
    for (const f of FIELDS) series[f].push(t[f]);
  }
  return series;
}

/** The grouped SQL: one row per (bucket, group, latency bin) with every sum. */
export function breakdownSql(by: BreakdownBy, where: Where, w: HistogramWindow, d: Dialect): { sql: string; params: unknown[] } {
  const cost = 'COALESCE(l.cost, 0)';
  return {
    sql: `SELECT (l.timestamp / CAST(? AS BIGINT)) * CAST(? AS BIGINT) AS bucket, COALESCE(l.${COLUMN[by]}, '') AS grp, ${binExpr('l.latency', d)} AS bin,
        count(*) AS n,
        sum(CASE WHEN l.error_class = 'client' THEN 1 ELSE 0 END) AS ce,
        sum(CASE WHEN l.error_class = 'upstream' THEN 1 ELSE 0 END) AS ue,
        sum(CASE WHEN l.error_class = 'gateway' OR (l.status = 'error' AND l.error_class IS NULL) THEN 1 ELSE 0 END) AS ge,
        sum(l.total_tokens) AS tt,
        sum(CASE WHEN l.cache_hit = 1 THEN 0 ELSE ${cost} END) AS cost,
        sum(l.cache_hit) AS hits,
        sum(CASE WHEN l.cache_hit = 1 THEN ${cost} ELSE 0 END) AS saved
      FROM logs l ${where.sql} GROUP BY 1, 2, 3`,
    params: [w.bucketMs, w.bucketMs, ...where.params],
  };
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** One grouped row's sums: a latency bin of the records (`bin`) or a roll-up row with every bin (`b0`…). */
function rowAcc(r: Row): Acc {
  const a = empty();
  a.requests = num(r.n);
  a.client_errors = num(r.ce);
  a.upstream_errors = num(r.ue);
  a.gateway_errors = num(r.ge);
  a.total_tokens = num(r.tt);
  a.cost = num(r.cost);
  a.cache_hits = num(r.hits);
  a.saved_cost = num(r.saved);
  if (r.b0 !== undefined) a.bins = binsOf(r);
  else {
    const bin = num(r.bin);
    if (bin >= 0) a.bins[bin] = a.requests;
  }
  return a;
}

function addAt<K>(map: Map<K, Acc>, k: K, a: Acc): void {
  let x = map.get(k);
  if (!x) map.set(k, (x = empty()));
  add(x, a);
}

/** Busiest first, ties by id: the groups shown and the rest. */
function rank(groupTotal: ReadonlyMap<string, Acc>, limit: number): { shown: [string, Acc][]; rest: [string, Acc][] } {
  const ranked = [...groupTotal.entries()].sort((a, b) => b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1));
  return { shown: ranked.slice(0, limit), rest: ranked.slice(limit) };
}

function answer(
  by: BreakdownBy,
  w: HistogramWindow,
  parts: { all: Acc; overall: ReadonlyMap<number, Acc>; shown: [string, Acc][]; perGroup: ReadonlyMap<string, ReadonlyMap<number, Acc>>; other?: { count: number; total: Acc; perBucket: ReadonlyMap<number, Acc> } },
  mcp: UsageBreakdown['mcp'],
): UsageBreakdown {
  const buckets = bucketStarts(w);
  const group = ([id, t]: [string, Acc]): UsageGroup => ({ id, totals: totalsOf(t), series: seriesOf(buckets, parts.perGroup.get(id) ?? new Map()) });
  const o = parts.other;
  return {
    by,
    start_time: new Date(w.start).toISOString(),
    end_time: new Date(w.end).toISOString(),
    bucket_size_seconds: w.bucketMs / 1000,
    times: buckets.map((b) => new Date(b).toISOString()),
    totals: totalsOf(parts.all),
    series: seriesOf(buckets, parts.overall),
    groups: parts.shown.map(group),
    ...(o ? { other: { id: `${o.count} more`, totals: totalsOf(o.total), series: seriesOf(buckets, o.perBucket) } } : {}),
    mcp,
  };
}

/**
 * Folds the grouped rows (one per bucket and group) into the answer: totals, series, the busiest
 * `limit` groups and the rest.
 */
export function foldBreakdown(by: BreakdownBy, w: HistogramWindow, rows: readonly Row[], limit: number, mcp: UsageBreakdown['mcp']): UsageBreakdown {
  const perGroup = new Map<string, Map<number, Acc>>();
  const groupTotal = new Map<string, Acc>();
  const overall = new Map<number, Acc>();
  const all = empty();
  for (const r of rows) {
    const bucket = num(r.bucket);
    const id = String(r.grp ?? '');
    const a = rowAcc(r);
    let g = perGroup.get(id);
    if (!g) perGroup.set(id, (g = new Map()));
    addAt(g, bucket, a);
    addAt(overall, bucket, a);
    addAt(groupTotal, id, a);
    add(all, a);
  }
  const { shown, rest } = rank(groupTotal, limit);
  let other: { count: number; total: Acc; perBucket: Map<number, Acc> } | undefined;
  if (rest.length) {
    other = { count: rest.length, total: empty(), perBucket: new Map() };
    for (const [id, t] of rest) {
      add(other.total, t);
      for (const [b, a] of perGroup.get(id)!) addAt(other.perBucket, b, a);
    }
  }
  return answer(by, w, { all, overall, shown, perGroup, ...(other ? { other } : {}) }, mcp);
}

/** How a roll-up's breakdown query groups: per (bucket, group), per group, or per bucket. */
export type Grouping = 'bucket-group' | 'group' | 'bucket';

/**
 * The SELECT list and GROUP BY of a roll-up query (alias r, group column `grp`): `bucket` and `grp`
 * columns in every shape (0 and '' where not grouped by), and the parameters the bucket takes.
 */
export function grouped(g: Grouping, grp: string, bucketMs: number): { select: string; groupBy: string; params: unknown[] } {
  const bucket = '(r.period / CAST(? AS BIGINT)) * CAST(? AS BIGINT)';
  if (g === 'group') return { select: `0 AS bucket, ${grp} AS grp`, groupBy: grp, params: [] };
  if (g === 'bucket') return { select: `${bucket} AS bucket, '' AS grp`, groupBy: '1', params: [bucketMs, bucketMs] };
  return { select: `${bucket} AS bucket, ${grp} AS grp`, groupBy: '1, 2', params: [bucketMs, bucketMs] };
}

/**
 * The rows a roll-up gives when the busiest groups are chosen first (many groups, such as 200 keys
 * over 120 buckets): each group's totals, each bucket's totals, and the series of the shown groups
 * only, instead of a row per (bucket, group).
 */
export interface RankedRows {
  groups: readonly Row[];
  overall: readonly Row[];
  series: (ids: readonly string[]) => Promise<readonly Row[]>;
}

/**
 * The same answer as foldBreakdown over every (bucket, group) row, from RankedRows: the rest's
 * series is each bucket's total less the shown groups' (counts and bins exactly; spend to the last
 * few bits of a float).
 */
export async function foldRanked(by: BreakdownBy, w: HistogramWindow, rows: RankedRows, limit: number, mcp: UsageBreakdown['mcp']): Promise<UsageBreakdown> {
  const groupTotal = new Map<string, Acc>();
  for (const r of rows.groups) addAt(groupTotal, String(r.grp ?? ''), rowAcc(r));
  const all = empty();
  for (const a of groupTotal.values()) add(all, a);
  const overall = new Map<number, Acc>();
  for (const r of rows.overall) addAt(overall, num(r.bucket), rowAcc(r));
  const { shown, rest } = rank(groupTotal, limit);
  const perGroup = new Map<string, Map<number, Acc>>();
  for (const r of shown.length ? await rows.series(shown.map(([id]) => id)) : []) {
    const id = String(r.grp ?? '');
    let g = perGroup.get(id);
    if (!g) perGroup.set(id, (g = new Map()));
    addAt(g, num(r.bucket), rowAcc(r));
  }
  let other: { count: number; total: Acc; perBucket: Map<number, Acc> } | undefined;
  if (rest.length) {
    other = { count: rest.length, total: empty(), perBucket: new Map() };
    for (const [, t] of rest) add(other.total, t);
    for (const [b, a] of overall) {
      const x = empty();
      add(x, a);
      for (const [id] of shown) {
        const s = perGroup.get(id)?.get(b);
        if (s) subtract(x, s);
      }
      if (x.requests > 0) other.perBucket.set(b, x);
    }
  }
  return answer(by, w, { all, overall, shown, perGroup, ...(other ? { other } : {}) }, mcp);
}

function subtract(from: Acc, a: Acc): void {
  for (const k of SUMS) from[k] -= a[k];
  for (let i = 0; i < LATENCY_BINS; i++) from.bins[i]! -= a.bins[i]!;
}

/** MCP tool calls in [start, end]: per bucket, and by tool. The table is in the same database. */
export async function mcpUsage(db: SqlDriver, w: HistogramWindow, start: number, end: number): Promise<UsageBreakdown['mcp']> {
  const rows = await db.query(
    `SELECT (timestamp / CAST(? AS BIGINT)) * CAST(? AS BIGINT) AS bucket, tool, count(*) AS n, sum(CASE WHEN status = 'success' THEN 0 ELSE 1 END) AS err
     FROM mcp_tool_logs WHERE timestamp >= CAST(? AS BIGINT) AND timestamp <= CAST(? AS BIGINT) GROUP BY 1, 2`,
    [w.bucketMs, w.bucketMs, start, end],
  );
  const buckets = bucketStarts(w);
  const index = new Map(buckets.map((b, i) => [b, i]));
  const calls = buckets.map(() => 0);
  const errors = buckets.map(() => 0);
  const tools = new Map<string, McpToolUsage>();
  for (const r of rows) {
    const i = index.get(num(r.bucket));
    if (i !== undefined) {
      calls[i]! += num(r.n);
      errors[i]! += num(r.err);
    }
    const name = String(r.tool);
    const t = tools.get(name) ?? { tool: name, calls: 0, errors: 0 };
    t.calls += num(r.n);
    t.errors += num(r.err);
    tools.set(name, t);
  }
  return { calls, errors, tools: [...tools.values()].sort((a, b) => b.calls - a.calls || (a.tool < b.tool ? -1 : 1)).slice(0, MCP_TOOLS) };
}

/** The latest name the records gave each virtual key id (through the (virtual_key_id, timestamp) index). */
export async function virtualKeyNames(db: SqlDriver, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    ids
      .filter((id) => id !== '')
      .map(async (id) => {
        const [row] = await db.query('SELECT virtual_key_name AS name FROM logs WHERE virtual_key_id = ? AND virtual_key_name IS NOT NULL ORDER BY timestamp DESC LIMIT 1', [id]);
        if (row?.name !== undefined && row.name !== null) out.set(id, String(row.name));
      }),
  );
  return out;
}
