// One request log record: what the logging plugin hands the writer after the answer, and what the
// stores keep. Ids and names only: a provider key's value or a virtual key's secret never belongs here.

export const LOG_STATUSES = ['processing', 'success', 'error'] as const;
export type LogStatus = (typeof LOG_STATUSES)[number];

/** How the target was chosen; stored as a bit set so a filter on several engines stays one indexable test. */
export const ROUTING_ENGINES = ['routing-rule', 'governance', 'loadbalancing'] as const;
export type RoutingEngine = (typeof ROUTING_ENGINES)[number];

/** Default cap on each of input/output content when content logging is on (characters). */
export const DEFAULT_CONTENT_CAP = 64 * 1024;

export interface LogRecord {
  /** The record's id (unique). */
  id: string;
  /** The record of the request this one was made for (a sub-request of an agent loop): its `id`. */
  parent_request_id?: string;
  /** The client-facing request id (the `x-request-id` answered); an agent request's turns share it. */
  request_id?: string;
  /** When the request arrived (ms since the epoch). */
  timestamp: number;
  /** Request type, e.g. chat.completion, text.completion, embedding, responses, passthrough. */
  object: string;
  provider?: string;
  /** Model actually called. */
  model?: string;
  /** Model as the client asked for it (before routing rules and aliases). */
  requested_model?: string;
  virtual_key_id?: string;
  virtual_key_name?: string;
  team_id?: string;
  customer_id?: string;
  /** Id of the provider key used, never its value. */
  selected_key_id?: string;
  selected_key_name?: string;
  /** Routing rules that applied, in evaluation order. */
  routing_rule_ids?: string[];
  routing_rule_name?: string;
  routing_engines_used?: RoutingEngine[];
  /** The routing audit trail (rules evaluated, why a target was picked or skipped). */
  routing_engine_logs?: unknown;
  number_of_retries?: number;
  /** 0 for the primary target, n for the n-th fallback. */
  fallback_index?: number;
  status: LogStatus;
  /** The error object answered (status, message, type, code), when status is error. */
  error_details?: unknown;
  stream?: boolean;
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  /** Defaults to prompt + completion. */
  total_tokens?: number;
  /** USD; absent when the price is unknown (the missing-cost filter finds those). */
  cost?: number;
  /** Whole request, ms. */
  latency?: number;
  /** Time to first token (streams), ms. */
  ttft?: number;
  cache_debug?: unknown;
  /** Custom metadata from logging headers. */
  metadata?: Record<string, string>;
  /** Request content (capped), only when content logging is on. */
  input_content?: string;
  /** Answer content (capped), only when content logging is on. */
  output_content?: string;
}

/** A stored record as /api/logs answers it (reference LogEntry field names). */
export interface LogEntry {
  id: string;
  parent_request_id?: string;
  request_id?: string;
  timestamp: string;
  created_at: string;
  object: string;
  provider?: string;
  model?: string;
  requested_model?: string;
  status: LogStatus;
  number_of_retries: number;
  fallback_index: number;
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
  routing_rule_ids: string[];
  routing_rule_name?: string;
  routing_engines_used: RoutingEngine[];
  routing_engine_logs?: unknown;
  stream: boolean;
  token_usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  error_details?: unknown;
  cache_debug?: unknown;
  metadata?: Record<string, string>;
  raw_request?: string;
  raw_response?: string;
}

/** Cuts content to at most `cap` characters, saying so, so one huge prompt cannot bloat the store. */
export function capContent(text: string | undefined, cap = DEFAULT_CONTENT_CAP): string | undefined {
  if (text === undefined) return undefined;
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}…[truncated ${text.length - cap} characters]`;
}

export function enginesToBits(engines: readonly string[] | undefined): number {
  let bits = 0;
  for (const e of engines ?? []) {
    const i = (ROUTING_ENGINES as readonly string[]).indexOf(e);
    if (i >= 0) bits |= 1 << i;
  }
  return bits;
}

export function bitsToEngines(bits: number): RoutingEngine[] {
  return ROUTING_ENGINES.filter((_, i) => (bits & (1 << i)) !== 0);
}

// What /api/logs answers about the stored records (stats, filter choices): plain shapes, so the
// dashboard reads them through api/answers.ts without loading the store.
export interface LogStats {
  total_requests: number;
  total_tokens: number;
  total_cost: number;
  /** ms, over requests with a latency. */
  average_latency: number;
  /** Percent of finished requests (success or error) that succeeded. */
  success_rate: number;
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
