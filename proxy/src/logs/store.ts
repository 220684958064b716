// The request-log store as the writer, the retention sweeper and /api/logs use it.
import type { BreakdownBy, FilterData, LogEntry, LogRecord, LogStats, UsageBreakdown } from './record.ts';
import type { LogFilters, Page } from './query.ts';
import type { HistogramWindow } from './window.ts';

export interface SearchResult {
  /** Without input/output content (GET /api/logs/{id} has it), so a page stays small. */
  logs: LogEntry[];
  /** -1 when the search was asked not to count (the caller has the count from stats). */
  total_count: number;
  /** Keyset cursor for the next page, when this page was full. */
  next_cursor?: string;
}

/** What a list answer says about all the records matching its filters. */
export interface ListSummary {
  stats: LogStats;
  /**
   * How many records match, when that is cheap to know exactly (the roll-up, or at most COUNT_CAP
   * found through an index); absent means "many", which steers the page query (sql-store.ts).
   */
  matching?: number;
}

/** One histogram row before it is shaped for the answer: a bucket, an optional group, aggregates. */
export interface BucketRow {
  bucket: number;
  group: string;
  count: number;
  success: number;
  error: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
}

export interface LatencyRow {
  bucket: number;
  group: string;
  count: number;
  avg: number;
  p90: number;
  p95: number;
  p99: number;
}

export type GroupBy = 'none' | 'model' | 'provider';

export interface LogStore {
  readonly kind: 'sqlite' | 'postgres';
  insert(records: readonly LogRecord[]): Promise<void>;
  /**
   * `count: false`: total_count is -1 (the caller has it). Planning hints from listSummary:
   * `matching` how many records match, `many` more than a few (see ListSummary.matching).
   */
  search(filters: LogFilters, page: Page, opts?: { count?: boolean; matching?: number; many?: boolean }): Promise<SearchResult>;
  get(id: string): Promise<LogEntry | undefined>;
  /** Stats for a list answer (total_count is their total_requests) and a planning hint for its page. */
  listSummary(filters: LogFilters): Promise<ListSummary>;
  stats(filters: LogFilters): Promise<LogStats>;
  /** Counts, tokens and cost per time bucket (and group) within the window. */
  buckets(filters: LogFilters, window: HistogramWindow, groupBy: GroupBy): Promise<BucketRow[]>;
  /** Latency average and nearest-rank percentiles per time bucket (and group). */
  latency(filters: LogFilters, window: HistogramWindow, groupBy: GroupBy): Promise<LatencyRow[]>;
  /** Requests, errors by class, tokens, spend, cache and latency percentiles per group of `by` and bucket, the busiest `limit` groups; MCP tool calls. */
  breakdown(filters: LogFilters, window: HistogramWindow, by: BreakdownBy, limit: number): Promise<UsageBreakdown>;
  /** Records matching the filters in the page's order, `batch` at a time (an export), without content. */
  scan(filters: LogFilters, page: Pick<Page, 'sort_by' | 'order'>, batch: number): AsyncIterable<LogEntry[]>;
  filterData(): Promise<FilterData>;
  hasLogs(): Promise<boolean>;
  deleteIds(ids: readonly string[]): Promise<number>;
  /** Deletes records older than `cutoff` (ms) in bounded batches; resolves with how many. */
  deleteOlderThan(cutoff: number): Promise<number>;
  close(): Promise<void>;
  /** Why the store does not answer right now (a server that missed its deadline), if it does not. */
  unavailable?(): string | undefined;
}
