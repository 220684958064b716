// What /api/logs answers (reference LogEntry field names; see proxy/src/logs/record.ts).
export interface LogEntry {
  id: string;
  parent_request_id?: string;
  timestamp: string;
  created_at?: string;
  object: string;
  provider?: string;
  model?: string;
  requested_model?: string;
  status: 'processing' | 'success' | 'error' | string;
  number_of_retries?: number;
  fallback_index?: number;
  latency?: number;
  ttft?: number;
  cost?: number;
  selected_key_id?: string;
  selected_key_name?: string;
  virtual_key_id?: string;
  virtual_key_name?: string;
  team_id?: string;
  customer_id?: string;
  routing_rule_id?: string;
  routing_rule_ids?: string[];
  routing_rule_name?: string;
  routing_engines_used?: string[];
  routing_engine_logs?: unknown;
  stream?: boolean;
  token_usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  error_details?: unknown;
  cache_debug?: unknown;
  metadata?: Record<string, string>;
  raw_request?: string;
  raw_response?: string;
}

export interface LogStats {
  total_requests: number;
  total_tokens: number;
  total_cost: number;
  average_latency: number;
  success_rate: number;
}

export interface LogSearch {
  logs: LogEntry[];
  pagination: { limit: number; offset: number; sort_by: string; order: string; total_count: number };
  stats: LogStats;
  has_logs: boolean;
}

export interface IdName {
  id: string;
  name?: string;
}

export interface FilterData {
  models: string[];
  providers: string[];
  objects: string[];
  selected_keys: IdName[];
  virtual_keys: IdName[];
  routing_rules: IdName[];
  routing_engines: string[];
}

/** Every filter GET /api/logs takes (proxy/src/logs/query.ts FILTER_PARAMS). */
export const FILTER_KEYS = [
  'content_search',
  'providers',
  'models',
  'status',
  'objects',
  'selected_key_ids',
  'virtual_key_ids',
  'routing_rule_ids',
  'routing_engine_used',
  'start_time',
  'end_time',
  'min_latency',
  'max_latency',
  'min_tokens',
  'max_tokens',
  'min_cost',
  'max_cost',
  'missing_cost_only',
] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];

export const PAGE_KEYS = ['limit', 'offset', 'sort_by', 'order'] as const;
export const STATUSES = ['success', 'error', 'processing'] as const;
export const DEFAULT_LIMIT = 50;
