// The filters and paging GET /api/logs takes, as the logs page offers them (answer shapes:
// proxy/src/api/answers.ts).

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
