// MCP tool call records in the request-log store's database (table mcp_tool_logs, migration 5 in
// logs/mcp-migration.ts): every replica sharing the store writes there and /api/mcp-logs on any of
// them reads all calls. Records are queued and written in batches after the answer, off the tool
// call's path; when the queue is full (the database is slow or down) new ones are dropped and
// counted, never blocking a call. Records older than the log retention are deleted hourly.
import type { Row, SqlDriver } from '../logs/driver.ts';
import { containsPattern } from '../logs/query.ts';
import { log } from '../log.ts';
import { newRecord, type McpCallRecord, type McpCallStore, type McpFilterData, type McpLogFilter, type McpLogPage, type McpLogStats, type NewMcpCall } from './call-log.ts';

const COLUMNS = ['id', 'timestamp', 'client', 'tool', 'arguments', 'status', 'result', 'error', 'latency', 'cost', 'source', 'virtual_key_id', 'request_id'] as const;
const TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'double precision', 'double precision', 'text', 'text', 'text'];
const SORT: Record<McpLogPage['sortBy'], string> = { timestamp: 'timestamp', latency: 'latency', cost: 'cost' };
const MAX_QUEUE = 10_000;
const BATCH = 500;
const FLUSH_MS = 100;
const SWEEP_MS = 3_600_000;
const RETENTION_BATCH = 5_000;
const DISTINCT_LIMIT = 1_000;
const DAY_MS = 86_400_000;

function where(f: McpLogFilter, ilike: string): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const anyOf = (column: string, values: string[] | undefined) => {
    if (!values) return;
    if (values.length === 0) return void parts.push('1 = 0');
    parts.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  anyOf('tool', f.tool_names);
  anyOf('client', f.server_labels);
  anyOf('status', f.status);
  anyOf('virtual_key_id', f.virtual_key_ids);
  anyOf('request_id', f.llm_request_ids);
  const bound = (sql: string, v: number | undefined) => {
    if (v === undefined) return;
    parts.push(sql);
    params.push(v);
  };
  bound('timestamp >= CAST(? AS BIGINT)', f.start === undefined ? undefined : Math.floor(f.start));
  bound('timestamp <= CAST(? AS BIGINT)', f.end === undefined ? undefined : Math.floor(f.end));
  bound('latency >= ?', f.min_latency);
  bound('latency <= ?', f.max_latency);
  if (f.content_search) {
    const p = containsPattern(f.content_search);
    parts.push(`(arguments ${ilike} ? ESCAPE '\\' OR result ${ilike} ? ESCAPE '\\' OR error ${ilike} ? ESCAPE '\\')`);
    params.push(p, p, p);
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));

function toRecord(row: Row): McpCallRecord {
  const r: McpCallRecord = {
    id: String(row.id),
    timestamp: new Date(Number(row.timestamp)).toISOString(),
    client: String(row.client),
    tool: String(row.tool),
    arguments: typeof row.arguments === 'string' ? (JSON.parse(row.arguments) as Record<string, unknown>) : {},
    status: row.status === 'success' ? 'success' : 'error',
    latency_ms: Number(row.latency),
    cost: Number(row.cost ?? 0),
    source: String(row.source),
  };
  const result = opt(row.result);
  const error = opt(row.error);
  const vk = opt(row.virtual_key_id);
  const rid = opt(row.request_id);
  if (result !== undefined) r.result = result;
  if (error !== undefined) r.error = error;
  if (vk !== undefined) r.virtual_key_id = vk;
  if (rid !== undefined) r.request_id = rid;
  return r;
}

export class SqlMcpCallStore implements McpCallStore {
  readonly kind: 'sqlite' | 'postgres';
  readonly #db: SqlDriver;
  readonly #retentionMs: number;
  #queue: McpCallRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  readonly #sweep: NodeJS.Timeout;
  #dropped = 0;
  #lastWarn = 0;

  /** `db` is the request-log store's connection (its migrations made the table). */
  constructor(db: SqlDriver, retentionDays: number) {
    this.#db = db;
    this.kind = db.dialect.name;
    this.#retentionMs = retentionDays * DAY_MS;
    this.#sweep = setInterval(() => void this.deleteOlderThan(Date.now() - this.#retentionMs), SWEEP_MS);
    this.#sweep.unref();
  }

  /** Records lost (queue full or a failed write). */
  get dropped(): number {
    return this.#dropped;
  }

  add(r: NewMcpCall): void {
    if (this.#queue.length >= MAX_QUEUE) return this.#drop(1, 'queue full');
    this.#queue.push(newRecord(r));
    if (this.#queue.length >= BATCH) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.#timer.unref();
    }
  }

  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // One write at a time, in order; whatever arrives meanwhile goes in the next batch.
    while (this.#writing) await this.#writing;
    if (this.#queue.length === 0) return;
    const batch = this.#queue.splice(0, BATCH);
    this.#writing = this.#db
      .insert([
        {
          table: 'mcp_tool_logs',
          columns: COLUMNS,
          types: TYPES,
          rows: batch.map((r) => [
            r.id, Date.parse(r.timestamp), r.client, r.tool, JSON.stringify(r.arguments), r.status, r.result ?? null, r.error ?? null,
            r.latency_ms, r.cost, r.source, r.virtual_key_id ?? null, r.request_id ?? null,
          ]),
        },
      ])
      .catch((err: unknown) => this.#drop(batch.length, (err as Error)?.message ?? String(err)))
      .finally(() => (this.#writing = undefined));
    await this.#writing;
    if (this.#queue.length > 0) await this.flush();
  }

  #drop(n: number, why: string): void {
    this.#dropped += n;
    const now = Date.now();
    if (now - this.#lastWarn < 10_000) return;
    this.#lastWarn = now;
    log.warn('mcp tool call logs dropped', { dropped_total: this.#dropped, reason: why });
  }

  async search(f: McpLogFilter, page: McpLogPage): Promise<{ records: McpCallRecord[]; total: number }> {
    const w = where(f, this.#db.dialect.ilike);
    const dir = page.order === 'asc' ? 'ASC' : 'DESC';
    // The count comes with the page, in one statement: two reads let a batch land between them.
    const rows = await this.#db.query(
      `SELECT ${COLUMNS.join(', ')}, count(*) OVER () AS total_n FROM mcp_tool_logs ${w.sql} ORDER BY ${SORT[page.sortBy]} ${dir}, id ${dir} LIMIT ${Math.trunc(page.limit)} OFFSET ${Math.min(Math.trunc(page.offset), Number.MAX_SAFE_INTEGER)}`,
      w.params,
    );
    if (rows.length > 0) return { records: rows.map(toRecord), total: Number(rows[0]!.total_n) };
    // An empty page (past the end) carries no count: ask for it alone.
    const [count] = await this.#db.query(`SELECT count(*) AS n FROM mcp_tool_logs ${w.sql}`, w.params);
    return { records: [], total: Number(count?.n ?? 0) };
  }

  async stats(f: McpLogFilter): Promise<McpLogStats> {
    const w = where(f, this.#db.dialect.ilike);
    const [row] = await this.#db.query(
      `SELECT count(*) AS n, sum(CASE WHEN status = 'success' THEN 1 ELSE 0 END) AS ok, avg(latency) AS lat, sum(cost) AS cost FROM mcp_tool_logs ${w.sql}`,
      w.params,
    );
    const n = Number(row?.n ?? 0);
    return { total_executions: n, success_rate: n ? (Number(row?.ok ?? 0) / n) * 100 : 0, average_latency: n ? Number(row?.lat ?? 0) : 0, total_cost: Number(row?.cost ?? 0) };
  }

  async filterData(): Promise<McpFilterData> {
    const distinct = async (column: string): Promise<string[]> =>
      (await this.#db.query(`SELECT DISTINCT ${column} AS v FROM mcp_tool_logs WHERE ${column} IS NOT NULL ORDER BY v LIMIT ${DISTINCT_LIMIT}`)).map((r) => String(r.v));
    const [tool_names, server_labels, virtual_key_ids] = await Promise.all([distinct('tool'), distinct('client'), distinct('virtual_key_id')]);
    return { tool_names, server_labels, virtual_key_ids };
  }

  async hasLogs(): Promise<boolean> {
    return (await this.#db.query('SELECT 1 AS one FROM mcp_tool_logs LIMIT 1')).length > 0;
  }

  async deleteOlderThan(cutoff: number): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        const n = await this.#db.execute(
          `DELETE FROM mcp_tool_logs WHERE id IN (SELECT id FROM mcp_tool_logs WHERE timestamp < CAST(? AS BIGINT) LIMIT ${RETENTION_BATCH})`,
          [Math.floor(cutoff)],
        );
        total += n;
        if (n < RETENTION_BATCH) break;
      }
    } catch (err) {
      log.warn('mcp tool log retention sweep failed', { error: (err as Error)?.message ?? String(err) });
    }
    return total;
  }

  /** Writes what is queued; the connection belongs to the request-log store, which closes it. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await this.flush();
  }
}
