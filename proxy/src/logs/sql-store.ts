// The log store's queries, written once over a SqlDriver (SQLite or PostgreSQL). Every value is a
// bound parameter; SQL text comes only from fixed fragments.
import type { Dialect, Row, SqlDriver } from './driver.ts';
import { MIGRATIONS } from './migrations.ts';
import { buildWhere, cursorCondition, encodeCursor, SORT_COLUMNS, type LogFilters, type Page, type Where } from './query.ts';
import { binExpr, binPercentile, binsOf, HOUR_MS, LATENCY_BINS, latencyRollupCovers, latencyTable, periodFor, PERIODS, ROLLUP_BIN_SUMS, rollupCovers, rollupTable, rollupWhere, splitHours, sqliteBatchRollups } from './rollup.ts';
import { bitsToEngines, enginesToBits, ROUTING_ENGINES, type BreakdownBy, type ErrorClass, type UsageBreakdown, type FilterData, type IdName, type LogEntry, type LogRecord, type LogStats, type LogStatus } from './record.ts';
import type { BucketRow, GroupBy, LatencyRow, ListSummary, LogStore, SearchResult } from './store.ts';
import type { HistogramWindow } from './window.ts';
import { ftsQuery, MIN_INDEXED_TERM } from './content-search.ts';
import { breakdownSql, foldBreakdown, foldRanked, mcpUsage, virtualKeyNames, type Grouping } from './breakdown.ts';
import { usageBatchRollups, usagePeriod, usagePruneStatements, usageRollupSql } from './usage-rollup.ts';
import { dimensionBatchRollups, dimensionCovers, dimensionPruneStatements, dimensionSql } from './usage-dimensions.ts';

/** SQLite: every roll-up's grouped upserts after an inserted batch, bound to its rowid range (after, upTo]. */
export const sqliteInsertRollups = (d: Dialect): string[] => [...sqliteBatchRollups(d), ...usageBatchRollups(d), ...dimensionBatchRollups(d)];

/** The logs table's columns in the order logRow gives their values. */
export const LOG_COLUMNS = [
  'id', 'parent_request_id', 'request_id', 'timestamp', 'created_at', 'object', 'provider', 'model', 'requested_model',
  'virtual_key_id', 'virtual_key_name', 'team_id', 'customer_id', 'selected_key_id', 'selected_key_name',
  'routing_rule_id', 'routing_rule_ids', 'routing_rule_name', 'routing_engines', 'routing_engine_logs',
  'number_of_retries', 'fallback_index', 'status', 'error_details', 'stream', 'prompt_tokens',
  'completion_tokens', 'cached_tokens', 'total_tokens', 'cost', 'latency', 'ttft', 'cache_debug', 'metadata',
  'input_content', 'output_content', 'status_code', 'error_class', 'cache_hit',
] as const;
export const RULE_COLUMNS = ['rule_id', 'log_id', 'timestamp'] as const;
const BIGINT_COLUMNS = new Set(['timestamp', 'created_at', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'total_tokens']);
const INTEGER_COLUMNS = new Set(['routing_engines', 'number_of_retries', 'fallback_index', 'stream', 'status_code', 'cache_hit']);
const DOUBLE_COLUMNS = new Set(['cost', 'latency', 'ttft']);
const typeOf = (c: string): string => (BIGINT_COLUMNS.has(c) ? 'bigint' : INTEGER_COLUMNS.has(c) ? 'integer' : DOUBLE_COLUMNS.has(c) ? 'double precision' : 'text');
export const LOG_TYPES = LOG_COLUMNS.map(typeOf);
export const RULE_TYPES = RULE_COLUMNS.map(typeOf);
/** A list page leaves the (possibly large) content out. */
const LIST_COLUMNS = LOG_COLUMNS.filter((c) => c !== 'input_content' && c !== 'output_content').map((c) => `l.${c}`).join(', ');
const ALL_COLUMNS = LOG_COLUMNS.map((c) => `l.${c}`).join(', ');

/** The index serving each sort order (migration 4 for the last three). */
const SORT_INDEX = { timestamp: 'logs_time', latency: 'logs_latency', tokens: 'logs_tokens', cost: 'logs_cost' } as const;
/** Filters with a (column, timestamp) index: with many matches the planner's own choice is right. */
const TIME_INDEXED = new Set<string>(['providers', 'models', 'status', 'objects', 'virtual_key_ids', 'selected_key_ids', 'start_time', 'end_time']);
const timeIndexed = (f: LogFilters): boolean => Object.keys(f).every((k) => TIME_INDEXED.has(k));
/** Up to this many matches a page is collected through the filter's index and sorted; beyond, the sort index is walked. */
export const COUNT_CAP = 10_000;
const RETENTION_BATCH = 5000;
const MAX_DELETE_IDS = 1000;
const FILTERDATA_LIMIT = 1000;

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const int = (v: number | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);
const num = (v: number | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: string | undefined): string | null => (typeof v === 'string' ? v : null);

/** A record as the logs table's row (LOG_COLUMNS' order): what every insert writes. */
export function logRow(r: LogRecord, now: number): unknown[] {
  const rules = r.routing_rule_ids ?? [];
  const prompt = int(r.prompt_tokens);
  const completion = int(r.completion_tokens);
  return [
    r.id, str(r.parent_request_id), str(r.request_id), Math.round(r.timestamp), now, r.object, str(r.provider), str(r.model), str(r.requested_model),
    str(r.virtual_key_id), str(r.virtual_key_name), str(r.team_id), str(r.customer_id), str(r.selected_key_id), str(r.selected_key_name),
    rules[0] ?? null, rules.length ? JSON.stringify(rules) : null, str(r.routing_rule_name), enginesToBits(r.routing_engines_used), json(r.routing_engine_logs),
    int(r.number_of_retries), int(r.fallback_index), r.status, json(r.error_details), r.stream ? 1 : 0, prompt,
    completion, int(r.cached_tokens), r.total_tokens === undefined ? prompt + completion : int(r.total_tokens), num(r.cost), num(r.latency), num(r.ttft), json(r.cache_debug), json(r.metadata),
    str(r.input_content), str(r.output_content), r.status_code === undefined ? null : int(r.status_code), str(r.error_class), r.cache_hit ? 1 : 0,
  ];
}

const parse = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : undefined);
const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

function bucketRow(r: Row): BucketRow {
  return {
    bucket: n(r.bucket),
    group: String(r.grp ?? ''),
    count: n(r.n),
    success: n(r.ok),
    error: n(r.err),
    prompt_tokens: n(r.pt),
    completion_tokens: n(r.ct),
    total_tokens: n(r.tt),
    cost: n(r.cost),
  };
}

function toEntry(row: Row): LogEntry {
  const e: LogEntry = {
    id: String(row.id),
    parent_request_id: opt(row.parent_request_id),
    request_id: opt(row.request_id),
    timestamp: new Date(n(row.timestamp)).toISOString(),
    created_at: new Date(n(row.created_at)).toISOString(),
    object: String(row.object),
    provider: opt(row.provider),
    model: opt(row.model),
    requested_model: opt(row.requested_model),
    status: String(row.status) as LogStatus,
    status_code: optNum(row.status_code),
    error_class: opt(row.error_class) as ErrorClass | undefined,
    cache_hit: n(row.cache_hit) === 1,
    number_of_retries: n(row.number_of_retries),
    fallback_index: n(row.fallback_index),
    latency: optNum(row.latency),
    ttft: optNum(row.ttft),
    cost: optNum(row.cost),
    selected_key_id: opt(row.selected_key_id),
    selected_key_name: opt(row.selected_key_name),
    virtual_key_id: opt(row.virtual_key_id),
    virtual_key_name: opt(row.virtual_key_name),
    team_id: opt(row.team_id),
    customer_id: opt(row.customer_id),
    routing_rule_id: opt(row.routing_rule_id),
    routing_rule_ids: (parse(row.routing_rule_ids) as string[] | undefined) ?? [],
    routing_rule_name: opt(row.routing_rule_name),
    routing_engines_used: bitsToEngines(n(row.routing_engines)),
    routing_engine_logs: parse(row.routing_engine_logs),
    stream: n(row.stream) === 1,
    token_usage: {
      prompt_tokens: n(row.prompt_tokens),
      completion_tokens: n(row.completion_tokens),
      total_tokens: n(row.total_tokens),
      ...(n(row.cached_tokens) > 0 ? { prompt_tokens_details: { cached_tokens: n(row.cached_tokens) } } : {}),
    },
    error_details: parse(row.error_details),
    cache_debug: parse(row.cache_debug),
    metadata: parse(row.metadata) as Record<string, string> | undefined,
    raw_request: opt(row.input_content),
    raw_response: opt(row.output_content),
  };
  for (const k of Object.keys(e) as (keyof LogEntry)[]) if (e[k] === undefined) delete e[k];
  return e;
}

/** A record as an item of a search page shows it (content left out), without reading it back from the store. */
export function listEntry(record: LogRecord, now = Date.now()): LogEntry {
  const values = logRow(record, now);
  const row: Row = {};
  LOG_COLUMNS.forEach((c, i) => {
    if (c !== 'input_content' && c !== 'output_content') row[c] = values[i];
  });
  return toEntry(row);
}

/**
 * The window's range applied on top of the client's filters, widened to whole buckets: a bucket
 * counts every record in it (the first and last too), so long windows read the roll-up alone.
 */
function windowed(f: LogFilters, w: HistogramWindow): LogFilters {
  const a = aligned(w);
  return { ...f, start_time: a.start, end_time: a.end };
}

function aligned(w: HistogramWindow): { start: number; end: number } {
  return { start: Math.floor(w.start / w.bucketMs) * w.bucketMs, end: Math.floor(w.end / w.bucketMs) * w.bucketMs + w.bucketMs - 1 };
}

const GROUP_EXPR: Record<GroupBy, string> = { none: "''", model: "COALESCE(l.model, '')", provider: "COALESCE(l.provider, '')" };
const ROLLUP_GROUP: Record<GroupBy, string> = { none: "''", model: 'r.model', provider: 'r.provider' };
const ROLLUP_BUCKET = '(r.period / CAST(? AS BIGINT)) * CAST(? AS BIGINT)';

/** How a time range is read: whole hours from the roll-up, the partial hours at either end from the records. */
interface Plan {
  /** Absent: everything from the records. */
  rollup?: Where;
  /** The roll-up level (ms) `rollup` applies to. */
  period: number;
  /** Partial periods read from the records and added. */
  edges: LogFilters[];
  /** Records inside the roll-up's last period but after the range: subtracted (totals only). */
  minus?: LogFilters;
}

/** Roll-up plan for `f` over [start, end] (undefined = open), or undefined when the records must be read. */
function rollupPlan(f: LogFilters, start: number | undefined, end: number | undefined, latencyOnly = false, period: number = HOUR_MS): Plan | undefined {
  if (!(latencyOnly ? latencyRollupCovers(f) : rollupCovers(f))) return undefined;
  // A range ending now or later has no records past its end (a record's time is when its request
  // arrived): its last, partial period is the roll-up's whole row, not a scan of the busiest hour.
  if (end !== undefined && end >= Date.now()) end = undefined;
  let h1 = Number.MIN_SAFE_INTEGER;
  let h2 = Number.MAX_SAFE_INTEGER;
  if (start !== undefined || end !== undefined) {
    const split = splitHours(start ?? Number.MIN_SAFE_INTEGER, end ?? Number.MAX_SAFE_INTEGER - period, period);
    if (!split) return undefined;
    if (start !== undefined) h1 = split.h1;
    if (end !== undefined) h2 = split.h2;
  }
  const edges: LogFilters[] = [];
  if (start !== undefined && start < h1) edges.push({ ...f, start_time: start, end_time: h1 - 1 });
  let minus: LogFilters | undefined;
  if (end !== undefined && h2 <= end) {
    // Late in its period (a range ending a moment ago, say): the whole period from the roll-up less
    // the few records after the end is cheaper than reading the period up to the end.
    if (!latencyOnly && end - h2 > period / 2) {
      minus = { ...f, start_time: end + 1, end_time: h2 + period - 1 };
      h2 += period;
    } else edges.push({ ...f, start_time: h2, end_time: end });
  }
  return { rollup: rollupWhere(f, h1, h2, latencyOnly), period, edges, ...(minus ? { minus } : {}) };
}

interface Totals {
  n: number;
  tokens: number;
  cost: number;
  latencySum: number;
  latencyN: number;
  ok: number;
  done: number;
}

/** Above this many latencies in a window, percentiles are estimated from bins instead of ranked exactly. */
const EXACT_LATENCY_MAX = 10_000;

const key = (bucket: number, group: string): string => `${bucket}\u0000${group}`;
const BUCKET_EXPR = '(l.timestamp / CAST(? AS BIGINT)) * CAST(? AS BIGINT)';

export class SqlLogStore implements LogStore {
  readonly kind: 'sqlite' | 'postgres';
  /** SQLite: the roll-up upserts run after each inserted batch. */
  readonly #batchRollups: readonly string[] | undefined;
  private readonly db: SqlDriver;

  private constructor(db: SqlDriver) {
    this.db = db;
    this.kind = db.dialect.name;
    this.#batchRollups = this.kind === 'sqlite' ? sqliteInsertRollups(db.dialect) : undefined;
  }

  /** The connection, for the other tables of this database (webhook deliveries, async jobs). */
  get driver(): SqlDriver {
    return this.db;
  }

  unavailable(): string | undefined {
    return this.db.unavailable?.();
  }

  /** Opens the store over a connected driver and brings its schema up to date. */
  static async open(db: SqlDriver): Promise<SqlLogStore> {
    await db.migrate(MIGRATIONS);
    return new SqlLogStore(db);
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const now = Date.now();
    const rules: unknown[][] = [];
    for (const r of records) for (const rule of new Set(r.routing_rule_ids ?? [])) rules.push([rule, r.id, Math.round(r.timestamp)]);
    await this.db.insert([
      { table: 'logs', columns: LOG_COLUMNS, types: LOG_TYPES, rows: records.map((r) => logRow(r, now)), ...(this.#batchRollups && { afterRange: this.#batchRollups }) },
      ...(rules.length ? [{ table: 'log_routing_rules', columns: RULE_COLUMNS, types: RULE_TYPES, rows: rules }] : []),
    ]);
  }

  private where(filters: LogFilters, fts = this.kind === 'sqlite'): Where {
    return buildWhere(filters, this.db.dialect.ilike, fts, this.kind === 'sqlite');
  }

  /** A page of records; `count: false` leaves total_count to the caller (the list answer takes it from stats). */
  async search(filters: LogFilters, page: Page, opts: { count?: boolean; matching?: number; many?: boolean } = {}): Promise<SearchResult> {
    const sortColumn = SORT_COLUMNS[page.sort_by];
    const column = `l.${sortColumn}`;
    const dir = page.order === 'asc' ? 'ASC' : 'DESC';
    // NULLs (no latency / unknown cost) sort last either way, on both engines; the (column, id)
    // indexes serve the default descending order (migration 4), an ascending one is sorted.
    const nullable = page.sort_by === 'latency' || page.sort_by === 'cost';
    const filtered = Object.keys(filters).length > 0;
    // Few matches: SQLite's planner (no range statistics) would still walk the whole time index for
    // them; the unary + hides that index from the ORDER BY so it reads the filter's index and sorts.
    const few = this.kind === 'sqlite' && opts.matching !== undefined && opts.matching <= COUNT_CAP && filtered;
    // Many matches of a filter without a fitting index (the count was capped): walking the sort
    // column's index finds a page after a few rows per match, where the planner might otherwise
    // collect every match (all trigram candidates of a common term, say) and sort them.
    const manyMatches = opts.many === true || (opts.matching !== undefined && opts.matching > COUNT_CAP && !timeIndexed(filters));
    const many = this.kind === 'sqlite' && manyMatches && filtered && !(nullable && dir === 'ASC');
    const rows = await this.pageRows(filters, page, few ? `+${column}` : column, many);
    const last = rows.at(-1);
    const next_cursor =
      last && rows.length === page.limit ? encodeCursor(page, last[sortColumn] === null || last[sortColumn] === undefined ? null : Number(last[sortColumn]), String(last.id)) : undefined;
    const total_count = opts.count === false ? -1 : await this.count(filters);
    return { logs: rows.map(toEntry), total_count, ...(next_cursor ? { next_cursor } : {}) };
  }

  /** One page of list rows: `order` is the ORDER BY term, `many` walks the sort column's index (SQLite). */
  private async pageRows(filters: LogFilters, page: Page, order = `l.${SORT_COLUMNS[page.sort_by]}`, many = false): Promise<Row[]> {
    const column = `l.${SORT_COLUMNS[page.sort_by]}`;
    const dir = page.order === 'asc' ? 'ASC' : 'DESC';
    const nulls = page.sort_by === 'latency' || page.sort_by === 'cost' ? ' NULLS LAST' : '';
    const indexedBy = many ? `INDEXED BY ${SORT_INDEX[page.sort_by]}` : '';
    const where = this.where(filters, this.kind === 'sqlite' && !many);
    const after = cursorCondition(page, column);
    const conds = [where.sql.replace(/^WHERE /, ''), after.sql].filter((c) => c !== '');
    return this.db.query(
      `SELECT ${LIST_COLUMNS} FROM logs l ${indexedBy} ${conds.length ? `WHERE ${conds.join(' AND ')}` : ''} ORDER BY ${order} ${dir}${nulls}, l.id ${dir} LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
      [...where.params, ...after.params, page.limit, page.cursor ? 0 : page.offset],
    );
  }

  async listSummary(filters: LogFilters): Promise<ListSummary> {
    if (rollupPlan(filters, filters.start_time, filters.end_time)) {
      const stats = await this.stats(filters);
      return { stats, matching: stats.total_requests };
    }
    return { stats: await this.stats(filters), matching: await this.fewMatches(filters) };
  }

  /**
   * The number of matches if at most COUNT_CAP (counted through the filter's index when it has one,
   * never more than COUNT_CAP + 1 records read), else undefined.
   */
  private async fewMatches(filters: LogFilters): Promise<number | undefined> {
    // Content search alone: more trigram candidates than the cap means many, without collecting them.
    const search = filters.content_search;
    if (this.kind === 'sqlite' && search && [...search].length >= MIN_INDEXED_TERM && Object.keys(filters).length === 1) {
      const [c] = await this.db.query(`SELECT count(*) AS n FROM (SELECT rowid FROM logs_fts WHERE logs_fts MATCH ? LIMIT ${COUNT_CAP + 1}) x`, [ftsQuery(search)]);
      if (n(c?.n) > COUNT_CAP) return undefined;
    }
    const where = this.where(filters);
    const [row] = await this.db.query(`SELECT count(*) AS total FROM (SELECT 1 AS one FROM logs l ${where.sql} LIMIT ${COUNT_CAP + 1}) x`, where.params);
    const total = n(row?.total);
    return total > COUNT_CAP ? undefined : total;
  }

  /** Records matching the filters: from the roll-up when it can answer, else counted. */
  async count(filters: LogFilters): Promise<number> {
    if (rollupPlan(filters, filters.start_time, filters.end_time)) return (await this.totals(filters)).n;
    const where = this.where(filters);
    return n((await this.db.query(`SELECT count(*) AS n FROM logs l ${where.sql}`, where.params))[0]?.n);
  }

  async get(id: string): Promise<LogEntry | undefined> {
    const rows = await this.db.query(`SELECT ${ALL_COLUMNS} FROM logs l WHERE l.id = ?`, [id]);
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  private async recordTotals(filters: LogFilters): Promise<Totals> {
    const where = this.where(filters);
    const [row] = await this.db.query(
      `SELECT count(*) AS total, COALESCE(sum(l.total_tokens), 0) AS tokens, COALESCE(sum(CASE WHEN l.cache_hit = 1 THEN 0 ELSE l.cost END), 0) AS cost,
        COALESCE(sum(l.latency), 0) AS lsum, count(l.latency) AS ln,
        COALESCE(sum(CASE WHEN l.status = 'success' THEN 1 ELSE 0 END), 0) AS ok,
        COALESCE(sum(CASE WHEN l.status IN ('success', 'error') THEN 1 ELSE 0 END), 0) AS done
       FROM logs l ${where.sql}`,
      where.params,
    );
    return { n: n(row?.total), tokens: n(row?.tokens), cost: n(row?.cost), latencySum: n(row?.lsum), latencyN: n(row?.ln), ok: n(row?.ok), done: n(row?.done) };
  }

  private async totals(filters: LogFilters): Promise<Totals> {
    // Without a time range the coarsest level has the fewest rows and no partial periods.
    const unbounded = filters.start_time === undefined && filters.end_time === undefined;
    const plan = rollupPlan(filters, filters.start_time, filters.end_time, false, unbounded ? PERIODS[PERIODS.length - 1] : HOUR_MS);
    if (!plan) return this.recordTotals(filters);
    const [rolled, less, ...edges] = await Promise.all([
      this.db.query(
        `SELECT COALESCE(sum(r.n), 0) AS total, COALESCE(sum(r.total_tokens), 0) AS tokens, COALESCE(sum(r.cost), 0) AS cost,
          COALESCE(sum(r.latency_sum), 0) AS lsum, COALESCE(sum(r.latency_n), 0) AS ln,
          COALESCE(sum(CASE WHEN r.status = 'success' THEN r.n ELSE 0 END), 0) AS ok,
          COALESCE(sum(CASE WHEN r.status IN ('success', 'error') THEN r.n ELSE 0 END), 0) AS done
         FROM ${rollupTable(plan.period)} r ${plan.rollup!.sql}`,
        plan.rollup!.params,
      ),
      plan.minus ? this.recordTotals(plan.minus) : undefined,
      ...plan.edges.map((e) => this.recordTotals(e)),
    ]);
    const row = rolled[0];
    const t: Totals = { n: n(row?.total), tokens: n(row?.tokens), cost: n(row?.cost), latencySum: n(row?.lsum), latencyN: n(row?.ln), ok: n(row?.ok), done: n(row?.done) };
    for (const e of edges) for (const k of Object.keys(t) as (keyof Totals)[]) t[k] += e![k];
    if (less) for (const k of Object.keys(t) as (keyof Totals)[]) t[k] -= less[k];
    return t;
  }

  async stats(filters: LogFilters): Promise<LogStats> {
    const t = await this.totals(filters);
    return {
      total_requests: t.n,
      total_tokens: t.tokens,
      total_cost: t.cost,
      average_latency: t.latencyN === 0 ? 0 : t.latencySum / t.latencyN,
      success_rate: t.done === 0 ? 0 : (t.ok / t.done) * 100,
    };
  }

  /** Whole-hour buckets can come from the roll-up; finer ones (windows under ~2.5 days) read the records. */
  private windowPlan(filters: LogFilters, w: HistogramWindow): Plan | undefined {
    const period = periodFor(w.bucketMs);
    const a = aligned(w);
    return period ? rollupPlan(filters, a.start, a.end, false, period) : undefined;
  }

  private async recordBuckets(filters: LogFilters, bucketMs: number, groupBy: GroupBy): Promise<BucketRow[]> {
    const where = this.where(filters);
    const rows = await this.db.query(
      `SELECT ${BUCKET_EXPR} AS bucket, ${GROUP_EXPR[groupBy]} AS grp, count(*) AS n,
        sum(CASE WHEN l.status = 'success' THEN 1 ELSE 0 END) AS ok, sum(CASE WHEN l.status = 'error' THEN 1 ELSE 0 END) AS err,
        sum(l.prompt_tokens) AS pt, sum(l.completion_tokens) AS ct, sum(l.total_tokens) AS tt, COALESCE(sum(CASE WHEN l.cache_hit = 1 THEN 0 ELSE l.cost END), 0) AS cost
       FROM logs l ${where.sql} GROUP BY 1, 2 ORDER BY 1, 2`,
      [bucketMs, bucketMs, ...where.params],
    );
    return rows.map(bucketRow);
  }

  async buckets(filters: LogFilters, w: HistogramWindow, groupBy: GroupBy): Promise<BucketRow[]> {
    const plan = this.windowPlan(filters, w);
    if (!plan) return this.recordBuckets(windowed(filters, w), w.bucketMs, groupBy);
    const [rolled, ...edges] = await Promise.all([
      this.db.query(
        `SELECT ${ROLLUP_BUCKET} AS bucket, ${ROLLUP_GROUP[groupBy]} AS grp, sum(r.n) AS n,
          sum(CASE WHEN r.status = 'success' THEN r.n ELSE 0 END) AS ok, sum(CASE WHEN r.status = 'error' THEN r.n ELSE 0 END) AS err,
          sum(r.prompt_tokens) AS pt, sum(r.completion_tokens) AS ct, sum(r.total_tokens) AS tt, sum(r.cost) AS cost
         FROM ${rollupTable(plan.period)} r ${plan.rollup!.sql} GROUP BY 1, 2 HAVING sum(r.n) > 0 ORDER BY 1, 2`,
        [w.bucketMs, w.bucketMs, ...plan.rollup!.params],
      ),
      ...plan.edges.map((e) => this.recordBuckets(e, w.bucketMs, groupBy)),
    ]);
    const merged = new Map<string, BucketRow>();
    for (const r of [...rolled.map(bucketRow), ...edges.flat()]) {
      const k = key(r.bucket, r.group);
      const m = merged.get(k);
      if (!m) merged.set(k, { ...r });
      else for (const f of ['count', 'success', 'error', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost'] as const) m[f] += r[f];
    }
    return [...merged.values()].sort((a, b) => a.bucket - b.bucket || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
  }

  async latency(filters: LogFilters, w: HistogramWindow, groupBy: GroupBy): Promise<LatencyRow[]> {
    const period = periodFor(w.bucketMs);
    const a = aligned(w);
    const plan = period ? rollupPlan(filters, a.start, a.end, true, period) : undefined;
    if (plan) return this.binnedLatency(plan, w, groupBy);
    // Short windows read the records: ranked exactly unless they hold many latencies.
    if (rollupCovers(filters) && (await this.totals(windowed(filters, w))).latencyN > EXACT_LATENCY_MAX) {
      return this.binnedLatency({ period: HOUR_MS, edges: [windowed(filters, w)] }, w, groupBy);
    }
    const where = this.where(windowed(filters, w));
    const cond = where.sql ? `${where.sql} AND l.latency IS NOT NULL` : 'WHERE l.latency IS NOT NULL';
    // Nearest-rank percentiles with window functions: the same numbers on both engines.
    const pct = (p: number): string => `min(CASE WHEN t.rn * 100 >= t.cnt * ${p} THEN t.latency END)`;
    const rows = await this.db.query(
      `SELECT t.bucket, t.grp, count(*) AS n, avg(t.latency) AS avg, ${pct(90)} AS p90, ${pct(95)} AS p95, ${pct(99)} AS p99
       FROM (
         SELECT x.bucket, x.grp, x.latency,
           row_number() OVER (PARTITION BY x.bucket, x.grp ORDER BY x.latency) AS rn,
           count(*) OVER (PARTITION BY x.bucket, x.grp) AS cnt
         FROM (SELECT ${BUCKET_EXPR} AS bucket, ${GROUP_EXPR[groupBy]} AS grp, l.latency FROM logs l ${cond}) x
       ) t GROUP BY t.bucket, t.grp ORDER BY t.bucket, t.grp`,
      [w.bucketMs, w.bucketMs, ...where.params],
    );
    return rows.map((r) => ({ bucket: n(r.bucket), group: String(r.grp ?? ''), count: n(r.n), avg: n(r.avg), p90: n(r.p90), p95: n(r.p95), p99: n(r.p99) }));
  }

  /** Long windows: percentiles estimated from the roll-up's latency bins (rollup.ts), the partial hours binned the same way. */
  private async binnedLatency(plan: Plan, w: HistogramWindow, groupBy: GroupBy): Promise<LatencyRow[]> {
    const acc = new Map<string, { bucket: number; group: string; n: number; sum: number; bins: number[] }>();
    const add = (bucket: number, group: string, count: number, sum: number, bins: (i: number) => number): void => {
      const k = key(bucket, group);
      let a = acc.get(k);
      if (!a) acc.set(k, (a = { bucket, group, n: 0, sum: 0, bins: new Array<number>(LATENCY_BINS).fill(0) }));
      a.n += count;
      a.sum += sum;
      for (let i = 0; i < LATENCY_BINS; i++) a.bins[i]! += bins(i);
    };
    const rollup = plan.rollup;
    const [rolled, ...edges] = await Promise.all([
      rollup
        ? this.db.query(
            `SELECT ${ROLLUP_BUCKET} AS bucket, ${ROLLUP_GROUP[groupBy]} AS grp, sum(r.latency_n) AS n, sum(r.latency_sum) AS lsum, ${ROLLUP_BIN_SUMS}
             FROM ${latencyTable(plan.period)} r ${rollup.sql} GROUP BY 1, 2 HAVING sum(r.latency_n) > 0`,
            [w.bucketMs, w.bucketMs, ...rollup.params],
          )
        : Promise.resolve([]),
      ...plan.edges.map((e) => {
        const where = this.where(e);
        const cond = where.sql ? `${where.sql} AND l.latency IS NOT NULL` : 'WHERE l.latency IS NOT NULL';
        return this.db.query(
          `SELECT ${BUCKET_EXPR} AS bucket, ${GROUP_EXPR[groupBy]} AS grp, ${binExpr('l.latency', this.db.dialect)} AS b, count(*) AS n, sum(l.latency) AS lsum
           FROM logs l ${cond} GROUP BY 1, 2, 3`,
          [w.bucketMs, w.bucketMs, ...where.params],
        );
      }),
    ]);
    for (const r of rolled) {
      const bins = binsOf(r);
      add(n(r.bucket), String(r.grp ?? ''), n(r.n), n(r.lsum), (i) => bins[i]!);
    }
    for (const r of edges.flat()) add(n(r.bucket), String(r.grp ?? ''), n(r.n), n(r.lsum), (i) => (i === n(r.b) ? n(r.n) : 0));
    return [...acc.values()]
      .sort((a, b) => a.bucket - b.bucket || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0))
      .map((a) => ({ bucket: a.bucket, group: a.group, count: a.n, avg: a.sum / a.n, p90: binPercentile(a.bins, 90), p95: binPercentile(a.bins, 95), p99: binPercentile(a.bins, 99) }));
  }

  async breakdown(filters: LogFilters, w: HistogramWindow, by: BreakdownBy, limit: number): Promise<UsageBreakdown> {
    const range = windowed(filters, w);
    // Buckets of whole hours read a usage roll-up: the one per dimension (usage-dimensions.ts) unless
    // another dimension is filtered on, then the finer one (usage-rollup.ts), the busiest groups
    // chosen first (foldRanked); finer buckets, or filters outside the roll-ups' dimensions, read
    // the records through the covering index.
    const period = usagePeriod(filters, w.bucketMs);
    const from = range.start_time!;
    const to = range.end_time! + 1;
    const mcp = mcpUsage(this.db, w, range.start_time!, range.end_time!);
    mcp.catch(() => undefined); // awaited below; not unhandled if a roll-up query fails first
    let answer: UsageBreakdown;
    if (period) {
      const sql = dimensionCovers(by, filters) ? dimensionSql : usageRollupSql;
      const run = (g: Grouping, only?: readonly string[]) => {
        const q = sql(by, filters, period, w.bucketMs, from, to, g, only);
        return this.db.query(q.sql, q.params);
      };
      const [groups, overall] = await Promise.all([run('group'), run('bucket')]);
      answer = await foldRanked(by, w, { groups, overall, series: (ids) => run('bucket-group', ids) }, limit, await mcp);
    } else {
      const q = breakdownSql(by, this.where(range), w, this.db.dialect);
      answer = foldBreakdown(by, w, await this.db.query(q.sql, q.params), limit, await mcp);
    }
    if (by === 'virtual_key') {
      const names = await virtualKeyNames(this.db, answer.groups.map((g) => g.id));
      for (const g of answer.groups) {
        const name = names.get(g.id);
        if (name !== undefined && name !== g.id) g.name = name;
      }
    }
    return answer;
  }

  /**
   * Pages through the matches by keyset (the list's cursor), `batch` records at a time: memory stays
   * one batch however many match, and each query is the list's own indexed page query.
   */
  async *scan(filters: LogFilters, order: Pick<Page, 'sort_by' | 'order'>, batch: number): AsyncIterable<LogEntry[]> {
    let cursor: Page['cursor'];
    for (;;) {
      const page: Page = { limit: batch, offset: 0, sort_by: order.sort_by, order: order.order, ...(cursor ? { cursor } : {}) };
      const rows = await this.pageRows(filters, page);
      if (rows.length) yield rows.map(toEntry);
      if (rows.length < batch) return;
      const last = rows.at(-1)!;
      const value = last[SORT_COLUMNS[order.sort_by]];
      cursor = { value: value === null || value === undefined ? null : Number(value), id: String(last.id) };
    }
  }

  async filterData(): Promise<FilterData> {
    // Loose index scans (each step jumps to the next distinct value through the column's index):
    // cost grows with the number of distinct values, not with the number of records.
    const distinctSql = (table: string, column: string): string =>
      `WITH RECURSIVE d(v) AS (SELECT min(${column}) FROM ${table} UNION ALL SELECT (SELECT min(${column}) FROM ${table} WHERE ${column} > d.v) FROM d WHERE d.v IS NOT NULL)
       SELECT v FROM d WHERE v IS NOT NULL LIMIT ${FILTERDATA_LIMIT}`;
    const distinct = async (column: string): Promise<string[]> => (await this.db.query(distinctSql('logs', column))).map((r) => String(r.v));
    // The name the most recent records gave (keys can be renamed); looking at 100 records per id at most.
    const named = async (idColumn: string, nameColumn: string): Promise<IdName[]> =>
      (
        await this.db.query(
          `SELECT k.v AS id,
             (SELECT y.n FROM (SELECT x.${nameColumn} AS n, x.timestamp AS t FROM logs x WHERE x.${idColumn} = k.v ORDER BY x.timestamp DESC LIMIT 100) y
              WHERE y.n IS NOT NULL ORDER BY y.t DESC LIMIT 1) AS name
           FROM (${distinctSql('logs', idColumn)}) k`,
        )
      ).map((r) => (r.name === null || r.name === undefined ? { id: String(r.id) } : { id: String(r.id), name: String(r.name) }));
    const [models, providers, objects, selected_keys, virtual_keys, rules, ruleNames] = await Promise.all([
      distinct('model'),
      distinct('provider'),
      distinct('object'),
      named('selected_key_id', 'selected_key_name'),
      named('virtual_key_id', 'virtual_key_name'),
      this.db.query(`SELECT v AS id FROM (${distinctSql('log_routing_rules', 'rule_id')}) r`),
      named('routing_rule_id', 'routing_rule_name'),
    ]);
    const names = new Map(ruleNames.map((r) => [r.id, r.name]));
    const routing_rules = rules.map((r) => {
      const id = String(r.id);
      const name = names.get(id);
      return name === undefined ? { id } : { id, name };
    });
    return { models, providers, objects, selected_keys, virtual_keys, routing_rules, routing_engines: [...ROUTING_ENGINES] };
  }

  async hasLogs(): Promise<boolean> {
    return (await this.db.query('SELECT 1 AS one FROM logs LIMIT 1')).length > 0;
  }

  async deleteIds(ids: readonly string[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < ids.length; i += MAX_DELETE_IDS) {
      const chunk = ids.slice(i, i + MAX_DELETE_IDS);
      const marks = chunk.map(() => '?').join(', ');
      await this.db.execute(`DELETE FROM log_routing_rules WHERE log_id IN (${marks})`, chunk);
      deleted += await this.db.execute(`DELETE FROM logs WHERE id IN (${marks})`, chunk);
    }
    return deleted;
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    // Roll-up rows earlier deletes emptied (their period is gone from the records). First, so the
    // sweep's last step stays the rule rows, as callers polling for the records' removal expect.
    for (const p of PERIODS) {
      await this.db.execute(`DELETE FROM ${rollupTable(p)} WHERE period < CAST(? AS BIGINT) AND n <= 0`, [cutoff]);
      await this.db.execute(`DELETE FROM ${latencyTable(p)} WHERE period < CAST(? AS BIGINT) AND latency_n <= 0`, [cutoff]);
    }
    // Bounded batches: a big first sweep never holds a long lock or one huge transaction.
    let total = 0;
    for (;;) {
      const n = await this.db.execute(
        `DELETE FROM logs WHERE id IN (SELECT id FROM logs WHERE timestamp < CAST(? AS BIGINT) LIMIT ${RETENTION_BATCH})`,
        [cutoff],
      );
      total += n;
      if (n < RETENTION_BATCH) break;
    }
    // The usage roll-up's rows this sweep emptied, at once: the overview's long windows scan them.
    for (const sql of [...usagePruneStatements(), ...dimensionPruneStatements()]) await this.db.execute(sql, [cutoff]);
    for (;;) {
      const n = await this.db.execute(
        `DELETE FROM log_routing_rules WHERE log_id IN (SELECT log_id FROM log_routing_rules WHERE timestamp < CAST(? AS BIGINT) LIMIT ${RETENTION_BATCH})`,
        [cutoff],
      );
      if (n < RETENTION_BATCH) break;
    }
    return total;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
