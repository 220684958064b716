// /api/logs query parameters → validated filters → a SQL WHERE clause. Values only ever travel as
// bound parameters (`?`, renumbered for PostgreSQL by the driver); the SQL text is built from fixed
// fragments chosen by the parameter names, never from what the client sent.
import { GatewayError } from '../unified/errors.ts';
import { enginesToBits, LOG_STATUSES, ROUTING_ENGINES } from './record.ts';
import { ftsQuery, MIN_INDEXED_TERM } from './content-search.ts';
import { MAX_REQUEST_ID_LENGTH } from '../request-id.ts';

export interface LogFilters {
  providers?: string[];
  models?: string[];
  status?: string[];
  objects?: string[];
  selected_key_ids?: string[];
  virtual_key_ids?: string[];
  routing_rule_ids?: string[];
  routing_engine_used?: string[];
  /** ms since the epoch, inclusive. */
  start_time?: number;
  /** ms since the epoch, inclusive. */
  end_time?: number;
  min_latency?: number;
  max_latency?: number;
  min_tokens?: number;
  max_tokens?: number;
  min_cost?: number;
  max_cost?: number;
  missing_cost_only?: boolean;
  content_search?: string;
  /**
   * The children of this request (an agent request's turns). Without it only top-level records
   * match: a child is part of its parent's request, which alone is listed and counted.
   */
  parent_request_id?: string;
  /**
   * The client-facing request id (x-request-id): every record of that request, its agent turns
   * included (they share it), so the top-level-only rule does not apply.
   */
  request_id?: string;
}

export const SORT_COLUMNS = { timestamp: 'timestamp', latency: 'latency', tokens: 'total_tokens', cost: 'cost' } as const;
export type SortBy = keyof typeof SORT_COLUMNS;

export interface Page {
  limit: number;
  offset: number;
  sort_by: SortBy;
  order: 'asc' | 'desc';
  /** Keyset position: the page starts after this record (see encodeCursor); offset is then 0. */
  cursor?: Cursor;
}

/** The sort value and id of the last record of a page. */
export interface Cursor {
  value: number | null;
  id: string;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;
/** OFFSET scans what it skips; deeper pages should narrow the time range instead. */
export const MAX_OFFSET = 100_000;
const MAX_LIST_ITEMS = 100;
const MAX_ITEM_LENGTH = 256;
const MAX_SEARCH_LENGTH = 256;

const LIST_PARAMS = ['providers', 'models', 'status', 'objects', 'selected_key_ids', 'virtual_key_ids', 'routing_rule_ids', 'routing_engine_used'] as const;
const RANGE_PARAMS = [
  ['min_latency', 'max_latency', false],
  ['min_tokens', 'max_tokens', true],
  ['min_cost', 'max_cost', false],
] as const;
export const FILTER_PARAMS: readonly string[] = [
  ...LIST_PARAMS,
  'start_time',
  'end_time',
  ...RANGE_PARAMS.flatMap(([a, b]) => [a, b]),
  'missing_cost_only',
  'content_search',
  'parent_request_id',
  'request_id',
];
export const PAGE_PARAMS: readonly string[] = ['limit', 'offset', 'sort_by', 'order', 'cursor'];

type Query = Record<string, unknown>;

function bad(param: string, why: string): GatewayError {
  return new GatewayError(400, `invalid query parameter '${param}': ${why}`, { param, code: 'invalid_query_parameter' });
}

/** Refuses parameters the endpoint does not know, so a misspelt filter is not silently ignored. */
export function checkKnownParams(query: Query, allowed: readonly string[]): void {
  for (const k of Object.keys(query)) if (!allowed.includes(k)) throw bad(k, `unknown parameter; expected one of ${allowed.join(', ')}`);
}

/** One value: a repeated scalar parameter is ambiguous. */
function scalar(query: Query, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw bad(name, 'given more than once');
  return v;
}

function list(query: Query, name: string): string[] | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  const raw = typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
  const items = raw.flatMap((s) => String(s).split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) return undefined;
  if (items.length > MAX_LIST_ITEMS) throw bad(name, `at most ${MAX_LIST_ITEMS} values`);
  for (const s of items) if (s.length > MAX_ITEM_LENGTH) throw bad(name, `a value is longer than ${MAX_ITEM_LENGTH} characters`);
  return [...new Set(items)];
}

function number(query: Query, name: string, integer: boolean): number | undefined {
  const s = scalar(query, name);
  if (s === undefined || s.trim() === '') return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0) throw bad(name, `expected a non-negative number, got '${s.slice(0, 40)}'`);
  if (integer && !Number.isInteger(n)) throw bad(name, `expected an integer, got '${s.slice(0, 40)}'`);
  return n;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function time(query: Query, name: string): number | undefined {
  const s = scalar(query, name);
  if (s === undefined || s.trim() === '') return undefined;
  const ms = RFC3339.test(s) ? Date.parse(s.replace(' ', 'T')) : NaN;
  if (!Number.isFinite(ms)) throw bad(name, `expected an RFC 3339 date-time such as 2026-01-31T12:00:00Z, got '${s.slice(0, 40)}'`);
  return ms;
}

function bool(query: Query, name: string): boolean | undefined {
  const s = scalar(query, name);
  if (s === undefined || s === '') return undefined;
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  throw bad(name, `expected true or false, got '${s.slice(0, 40)}'`);
}

export function parseFilters(query: Query): LogFilters {
  const f: LogFilters = {};
  for (const name of LIST_PARAMS) {
    const v = list(query, name);
    if (v) f[name] = v;
  }
  for (const s of f.status ?? []) {
    if (!(LOG_STATUSES as readonly string[]).includes(s)) throw bad('status', `unknown status '${s}'; expected ${LOG_STATUSES.join(', ')}`);
  }
  for (const s of f.routing_engine_used ?? []) {
    if (!(ROUTING_ENGINES as readonly string[]).includes(s)) throw bad('routing_engine_used', `unknown routing engine '${s}'; expected ${ROUTING_ENGINES.join(', ')}`);
  }
  f.start_time = time(query, 'start_time');
  f.end_time = time(query, 'end_time');
  if (f.start_time !== undefined && f.end_time !== undefined && f.start_time > f.end_time) throw bad('start_time', 'is after end_time');
  for (const [lo, hi, integer] of RANGE_PARAMS) {
    f[lo] = number(query, lo, integer);
    f[hi] = number(query, hi, integer);
    if (f[lo] !== undefined && f[hi] !== undefined && f[lo] > f[hi]) throw bad(lo, `is greater than ${hi}`);
  }
  f.missing_cost_only = bool(query, 'missing_cost_only');
  const search = scalar(query, 'content_search')?.trim();
  if (search) {
    if (search.length > MAX_SEARCH_LENGTH) throw bad('content_search', `at most ${MAX_SEARCH_LENGTH} characters`);
    f.content_search = search;
  }
  const parent = scalar(query, 'parent_request_id')?.trim();
  if (parent) {
    if (parent.length > MAX_ITEM_LENGTH) throw bad('parent_request_id', `at most ${MAX_ITEM_LENGTH} characters`);
    f.parent_request_id = parent;
  }
  const requestId = scalar(query, 'request_id')?.trim();
  if (requestId) {
    if (requestId.length > MAX_REQUEST_ID_LENGTH) throw bad('request_id', `at most ${MAX_REQUEST_ID_LENGTH} characters (the longest request id the gateway keeps)`);
    f.request_id = requestId;
  }
  for (const k of Object.keys(f) as (keyof LogFilters)[]) if (f[k] === undefined) delete f[k];
  return f;
}

export function parsePage(query: Query): Page {
  const limit = number(query, 'limit', true) ?? DEFAULT_LIMIT;
  if (limit < 1) throw bad('limit', 'must be at least 1');
  const offset = number(query, 'offset', true) ?? 0;
  if (offset > MAX_OFFSET) throw bad('offset', `at most ${MAX_OFFSET}; narrow start_time/end_time to reach older logs`);
  const sortBy = scalar(query, 'sort_by') || 'timestamp';
  if (!(sortBy in SORT_COLUMNS)) throw bad('sort_by', `expected one of ${Object.keys(SORT_COLUMNS).join(', ')}`);
  const order = scalar(query, 'order') || 'desc';
  if (order !== 'asc' && order !== 'desc') throw bad('order', 'expected asc or desc');
  const page: Page = { limit: Math.min(limit, MAX_LIMIT), offset, sort_by: sortBy as SortBy, order };
  const cursor = scalar(query, 'cursor');
  if (cursor) {
    if (offset > 0) throw bad('cursor', 'cannot be combined with offset; the cursor already says where the page starts');
    page.cursor = decodeCursor(cursor, page);
  }
  // Larger pages are capped rather than refused: the answer's pagination.limit says what applied.
  return page;
}

/**
 * Opaque cursor for the page after `last` (base64url JSON): its sort column and order are part of
 * it, so a cursor is never applied to a different ordering.
 */
export function encodeCursor(page: Page, value: number | null, id: string): string {
  return Buffer.from(JSON.stringify([page.sort_by, page.order, value, id])).toString('base64url');
}

function decodeCursor(s: string, page: Page): Cursor {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    v = undefined;
  }
  if (!Array.isArray(v) || v.length !== 4 || (v[2] !== null && typeof v[2] !== 'number') || typeof v[3] !== 'string') {
    throw bad('cursor', 'not a cursor this API returned (pagination.next_cursor)');
  }
  if (v[0] !== page.sort_by || v[1] !== page.order) throw bad('cursor', `was made for sort_by=${String(v[0])}&order=${String(v[1])}; pass the same sort_by and order`);
  if (page.sort_by !== 'latency' && page.sort_by !== 'cost' && v[2] === null) throw bad('cursor', 'not a cursor this API returned (pagination.next_cursor)');
  return { value: v[2] as number | null, id: v[3] };
}

/**
 * Keyset condition: records strictly after the cursor in the page's order (NULL sort values last,
 * as search orders them). Row-value comparisons so the (column, id) order can be read from an index.
 */
export function cursorCondition(page: Page, column: string): Where {
  const c = page.cursor;
  if (!c) return { sql: '', params: [] };
  const op = page.order === 'asc' ? '>' : '<';
  if (c.value === null) return { sql: `(${column} IS NULL AND l.id ${op} ?)`, params: [c.id] };
  const after = `(${column}, l.id) ${op} (?, ?)`;
  const nullable = page.sort_by === 'latency' || page.sort_by === 'cost';
  return { sql: nullable ? `(${column} IS NULL OR ${after})` : after, params: [c.value, c.id] };
}

export interface Where {
  sql: string;
  params: unknown[];
}

/** LIKE pattern matching `text` literally anywhere (`\` escapes). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The WHERE clause (with the leading `WHERE`) over the `logs` table aliased `l`. `ilike` is the
 * dialect's case-insensitive LIKE; `fts` narrows content_search through SQLite's trigram index;
 * `sqlite` says the dialect (the top-level test is written for each planner).
 */
export function buildWhere(f: LogFilters, ilike: string, fts = false, sqlite = true): Where {
  const parts: string[] = [];
  const params: unknown[] = [];
  const inList = (column: string, values: string[] | undefined): void => {
    if (!values?.length) return;
    parts.push(`${column} IN (${values.map(() => '?').join(', ')})`);
    params.push(...values);
  };
  inList('l.provider', f.providers);
  inList('l.model', f.models);
  inList('l.status', f.status);
  inList('l.object', f.objects);
  inList('l.selected_key_id', f.selected_key_ids);
  inList('l.virtual_key_id', f.virtual_key_ids);
  if (f.routing_rule_ids?.length) {
    parts.push(`l.id IN (SELECT r.log_id FROM log_routing_rules r WHERE r.rule_id IN (${f.routing_rule_ids.map(() => '?').join(', ')}))`);
    params.push(...f.routing_rule_ids);
  }
  if (f.routing_engine_used?.length) {
    parts.push('(l.routing_engines & CAST(? AS INTEGER)) <> 0');
    params.push(enginesToBits(f.routing_engine_used));
  }
  const cmp = (column: string, op: string, value: number | undefined): void => {
    if (value === undefined) return;
    parts.push(`${column} ${op} ?`);
    params.push(value);
  };
  // Timestamps are integers; the cast keeps SQLite comparing integers to integers.
  if (f.start_time !== undefined) {
    parts.push('l.timestamp >= CAST(? AS BIGINT)');
    params.push(f.start_time);
  }
  if (f.end_time !== undefined) {
    parts.push('l.timestamp <= CAST(? AS BIGINT)');
    params.push(f.end_time);
  }
  cmp('l.latency', '>=', f.min_latency);
  cmp('l.latency', '<=', f.max_latency);
  cmp('l.total_tokens', '>=', f.min_tokens);
  cmp('l.total_tokens', '<=', f.max_tokens);
  cmp('l.cost', '>=', f.min_cost);
  cmp('l.cost', '<=', f.max_cost);
  if (f.missing_cost_only) parts.push('l.cost IS NULL');
  // Top-level records only unless a parent is asked for. Nearly every record is top-level: on SQLite
  // (no column statistics) the unary + keeps the planner off the parent index for that test, so the
  // filter's own index or the time index still leads; PostgreSQL knows the column's null fraction.
  if (f.request_id !== undefined) {
    parts.push('l.request_id = ?');
    params.push(f.request_id);
  }
  if (f.parent_request_id !== undefined) {
    parts.push('l.parent_request_id = ?');
    params.push(f.parent_request_id);
  } else if (f.request_id === undefined) parts.push(sqlite ? '+l.parent_request_id IS NULL' : 'l.parent_request_id IS NULL');
  if (f.content_search) {
    const p = containsPattern(f.content_search);
    // `fts` (SQLite): candidates from the trigram index (content-search.ts), confirmed by LIKE below.
    if (fts && [...f.content_search].length >= MIN_INDEXED_TERM) {
      parts.push('l.id IN (SELECT s.log_id FROM log_search s WHERE s.seq IN (SELECT rowid FROM logs_fts WHERE logs_fts MATCH ?))');
      params.push(ftsQuery(f.content_search));
    }
    parts.push(`(l.input_content ${ilike} ? ESCAPE '\\' OR l.output_content ${ilike} ? ESCAPE '\\')`);
    params.push(p, p);
  }
  return { sql: `WHERE ${parts.join(' AND ')}`, params };
}
