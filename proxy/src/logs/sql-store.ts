// The log store's queries, written once over a SqlDriver (SQLite or PostgreSQL). Every value is a
// bound parameter; SQL text comes only from fixed fragments.
import type { Row, SqlDriver } from './driver.ts';
import { MIGRATIONS } from './migrations.ts';
import { buildWhere, SORT_COLUMNS, type LogFilters, type Page } from './query.ts';
import { bitsToEngines, enginesToBits, ROUTING_ENGINES, type LogEntry, type LogRecord, type LogStatus } from './record.ts';
import type { BucketRow, FilterData, GroupBy, IdName, LatencyRow, LogStats, LogStore, SearchResult } from './store.ts';
import type { HistogramWindow } from './window.ts';

const LOG_COLUMNS = [
  'id', 'parent_request_id', 'timestamp', 'created_at', 'object', 'provider', 'model', 'requested_model',
  'virtual_key_id', 'virtual_key_name', 'team_id', 'customer_id', 'selected_key_id', 'selected_key_name',
  'routing_rule_id', 'routing_rule_ids', 'routing_rule_name', 'routing_engines', 'routing_engine_logs',
  'number_of_retries', 'fallback_index', 'status', 'error_details', 'stream', 'prompt_tokens',
  'completion_tokens', 'cached_tokens', 'total_tokens', 'cost', 'latency', 'ttft', 'cache_debug', 'metadata',
  'input_content', 'output_content',
] as const;
const RULE_COLUMNS = ['rule_id', 'log_id', 'timestamp'] as const;
const BIGINT_COLUMNS = new Set(['timestamp', 'created_at', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'total_tokens']);
const INTEGER_COLUMNS = new Set(['routing_engines', 'number_of_retries', 'fallback_index', 'stream']);
const DOUBLE_COLUMNS = new Set(['cost', 'latency', 'ttft']);
const typeOf = (c: string): string => (BIGINT_COLUMNS.has(c) ? 'bigint' : INTEGER_COLUMNS.has(c) ? 'integer' : DOUBLE_COLUMNS.has(c) ? 'double precision' : 'text');
const LOG_TYPES = LOG_COLUMNS.map(typeOf);
const RULE_TYPES = RULE_COLUMNS.map(typeOf);
/** A list page leaves the (possibly large) content out. */
const LIST_COLUMNS = LOG_COLUMNS.filter((c) => c !== 'input_content' && c !== 'output_content').map((c) => `l.${c}`).join(', ');
const ALL_COLUMNS = LOG_COLUMNS.map((c) => `l.${c}`).join(', ');

const RETENTION_BATCH = 5000;
const MAX_DELETE_IDS = 1000;
const FILTERDATA_LIMIT = 1000;

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const int = (v: number | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.round(v)) : 0);
const num = (v: number | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: string | undefined): string | null => (typeof v === 'string' ? v : null);

function logRow(r: LogRecord, now: number): unknown[] {
  const rules = r.routing_rule_ids ?? [];
  const prompt = int(r.prompt_tokens);
  const completion = int(r.completion_tokens);
  return [
    r.id, str(r.parent_request_id), Math.round(r.timestamp), now, r.object, str(r.provider), str(r.model), str(r.requested_model),
    str(r.virtual_key_id), str(r.virtual_key_name), str(r.team_id), str(r.customer_id), str(r.selected_key_id), str(r.selected_key_name),
    rules[0] ?? null, rules.length ? JSON.stringify(rules) : null, str(r.routing_rule_name), enginesToBits(r.routing_engines_used), json(r.routing_engine_logs),
    int(r.number_of_retries), int(r.fallback_index), r.status, json(r.error_details), r.stream ? 1 : 0, prompt,
    completion, int(r.cached_tokens), r.total_tokens === undefined ? prompt + completion : int(r.total_tokens), num(r.cost), num(r.latency), num(r.ttft), json(r.cache_debug), json(r.metadata),
    str(r.input_content), str(r.output_content),
  ];
}

const parse = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : undefined);
const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

function toEntry(row: Row): LogEntry {
  const e: LogEntry = {
    id: String(row.id),
    parent_request_id: opt(row.parent_request_id),
    timestamp: new Date(n(row.timestamp)).toISOString(),
    created_at: new Date(n(row.created_at)).toISOString(),
    object: String(row.object),
    provider: opt(row.provider),
    model: opt(row.model),
    requested_model: opt(row.requested_model),
    status: String(row.status) as LogStatus,
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

/** The window's range applied on top of the client's filters. */
function windowed(f: LogFilters, w: HistogramWindow): LogFilters {
  return { ...f, start_time: w.start, end_time: w.end };
}

const GROUP_EXPR: Record<GroupBy, string> = { none: "''", model: "COALESCE(l.model, '')", provider: "COALESCE(l.provider, '')" };
const BUCKET_EXPR = '(l.timestamp / CAST(? AS BIGINT)) * CAST(? AS BIGINT)';

export class SqlLogStore implements LogStore {
  readonly kind: 'sqlite' | 'postgres';
  private readonly db: SqlDriver;

  private constructor(db: SqlDriver) {
    this.db = db;
    this.kind = db.dialect.name;
  }

  /** The connection, for the other tables of this database (webhook deliveries, async jobs). */
  get driver(): SqlDriver {
    return this.db;
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
      { table: 'logs', columns: LOG_COLUMNS, types: LOG_TYPES, rows: records.map((r) => logRow(r, now)) },
      ...(rules.length ? [{ table: 'log_routing_rules', columns: RULE_COLUMNS, types: RULE_TYPES, rows: rules }] : []),
    ]);
  }

  async search(filters: LogFilters, page: Page): Promise<SearchResult> {
    const where = buildWhere(filters, this.db.dialect.ilike);
    const column = `l.${SORT_COLUMNS[page.sort_by]}`;
    const dir = page.order === 'asc' ? 'ASC' : 'DESC';
    // NULLs (no latency / unknown cost) sort last either way, on both engines.
    const nulls = page.sort_by === 'latency' || page.sort_by === 'cost' ? `(${column} IS NULL), ` : '';
    const rows = await this.db.query(
      `SELECT ${LIST_COLUMNS} FROM logs l ${where.sql} ORDER BY ${nulls}${column} ${dir}, l.id ${dir} LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`,
      [...where.params, page.limit, page.offset],
    );
    const total = await this.db.query(`SELECT count(*) AS n FROM logs l ${where.sql}`, where.params);
    return { logs: rows.map(toEntry), total_count: n(total[0]?.n) };
  }

  async get(id: string): Promise<LogEntry | undefined> {
    const rows = await this.db.query(`SELECT ${ALL_COLUMNS} FROM logs l WHERE l.id = ?`, [id]);
    return rows[0] ? toEntry(rows[0]) : undefined;
  }

  async stats(filters: LogFilters): Promise<LogStats> {
    const where = buildWhere(filters, this.db.dialect.ilike);
    const [row] = await this.db.query(
      `SELECT count(*) AS total, COALESCE(sum(l.total_tokens), 0) AS tokens, COALESCE(sum(l.cost), 0) AS cost, avg(l.latency) AS latency,
        COALESCE(sum(CASE WHEN l.status = 'success' THEN 1 ELSE 0 END), 0) AS ok,
        COALESCE(sum(CASE WHEN l.status IN ('success', 'error') THEN 1 ELSE 0 END), 0) AS done
       FROM logs l ${where.sql}`,
      where.params,
    );
    const done = n(row?.done);
    return {
      total_requests: n(row?.total),
      total_tokens: n(row?.tokens),
      total_cost: n(row?.cost),
      average_latency: n(row?.latency),
      success_rate: done === 0 ? 0 : (n(row?.ok) / done) * 100,
    };
  }

  async buckets(filters: LogFilters, w: HistogramWindow, groupBy: GroupBy): Promise<BucketRow[]> {
    const where = buildWhere(windowed(filters, w), this.db.dialect.ilike);
    const rows = await this.db.query(
      `SELECT ${BUCKET_EXPR} AS bucket, ${GROUP_EXPR[groupBy]} AS grp, count(*) AS n,
        sum(CASE WHEN l.status = 'success' THEN 1 ELSE 0 END) AS ok, sum(CASE WHEN l.status = 'error' THEN 1 ELSE 0 END) AS err,
        sum(l.prompt_tokens) AS pt, sum(l.completion_tokens) AS ct, sum(l.total_tokens) AS tt, COALESCE(sum(l.cost), 0) AS cost
       FROM logs l ${where.sql} GROUP BY 1, 2 ORDER BY 1, 2`,
      [w.bucketMs, w.bucketMs, ...where.params],
    );
    return rows.map((r) => ({
      bucket: n(r.bucket),
      group: String(r.grp ?? ''),
      count: n(r.n),
      success: n(r.ok),
      error: n(r.err),
      prompt_tokens: n(r.pt),
      completion_tokens: n(r.ct),
      total_tokens: n(r.tt),
      cost: n(r.cost),
    }));
  }

  async latency(filters: LogFilters, w: HistogramWindow, groupBy: GroupBy): Promise<LatencyRow[]> {
    const where = buildWhere(windowed(filters, w), this.db.dialect.ilike);
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
