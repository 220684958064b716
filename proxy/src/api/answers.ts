// The answers of /api, declared once: the /api handlers send these shapes and the dashboard
// (dashboard/src) reads them, so a field changed here shows up on both sides at compile time.
// Types only, and type imports only from modules that load no server code (schemas, record
// shapes): the dashboard imports this file, and its bundle and typecheck must not reach further.
// test/unit/imports.test.ts checks both.
import type { Budget, Customer, ModelConfig, PricingOverride, PricingOverrideRecord, RateLimit, RoutingFallback, RoutingRule, RoutingScope, RoutingTarget, Team, VirtualKey, VirtualKeyProviderConfig } from '../schema/governance.ts';
import type { AuditRecord } from '../audit/record.ts';
import type { PriceInForce, PriceSource, PricesInForce } from '../governance/pricing/view.ts';
import type { BreakdownBy, FilterData, IdName, LogEntry, LogRecord, LogStats, McpToolUsage, UsageBreakdown, UsageGroup, UsageSeries, UsageTotals } from '../logs/record.ts';
import type { RealtimeSessionView } from '../realtime/registry.ts';

export type { PriceInForce, PriceSource, PricesInForce };
export type { Budget, BreakdownBy, Customer, FilterData, IdName, LogEntry, LogRecord, LogStats, McpToolUsage, PricingOverride, PricingOverrideRecord, RateLimit, RealtimeSessionView, UsageBreakdown, UsageGroup, UsageSeries, UsageTotals };

/** Who made or owns a configuration object, on every object /api lists (config/ownership.ts). */
export interface Owned {
  managed_by?: string;
  source?: string;
}

// ---- GET /api/realtime/sessions (api/realtime.ts) ----


export interface RealtimeSessionsAnswer {
  /** Open sessions on this replica, oldest first. */
  open: RealtimeSessionView[];
  /** The last sessions that ended on this replica, most recent first. */
  ended: RealtimeSessionView[];
}

// ---- GET /api/config/settings, PUT /api/config (api/config.ts, api/client-settings.ts) ----

/** One client setting the Settings page shows and PUT /api/config changes. */
export interface ClientSettingView {
  /** Dotted path below `client` (`async_job_config.max_attempts`). */
  name: string;
  group: string;
  type: 'boolean' | 'integer' | 'list' | 'choice';
  options?: string[];
  minimum?: number;
  maximum?: number;
  /** The schema's description. */
  description: string;
  /** What it opens or costs. */
  effect: string;
  default: unknown;
  /** As stored; absent: the default applies. */
  value?: unknown;
  /** Who set it: config.json (`file`, read-only here), the environment, /api (`store`), Kubernetes, or nobody (`default`). */
  owner: 'file' | 'environment' | 'store' | 'kubernetes' | 'default';
  source?: string;
  /** `now`: the next request reads it; `restart`: read when the gateway starts. */
  applies: 'now' | 'restart';
}

export interface ClientSettingsAnswer {
  settings: ClientSettingView[];
  /** True when writes answer 409 (Kubernetes owns the document). */
  read_only: boolean;
  read_only_reason?: string;
  /** Whether a change survives a restart (`--app-dir` or `redis` keeps the configuration store). */
  persistent: boolean;
  /** Where changes are kept: `memory`, `file` (the path) or `redis`. */
  store: { kind: string; location?: string };
}

// ---- GET /api/dashboard (api/dashboard-info.ts) ----

export interface DashboardFeatures {
  logs: boolean;
  cache: boolean;
  mcp: boolean;
  webhooks: boolean;
  async: boolean;
  /** The skills repository (/api/skills): it lives in the logs store. */
  skills: boolean;
  /** The audit log and issued management keys: they live in the logs store too. */
  audit: boolean;
}

export interface GatewayInfo {
  version: string;
  /** Configuration source: 'file' (config.json / embedded defaults, editable) or 'kubernetes'. */
  mode: 'file' | 'kubernetes';
  /** True when every configuration write answers 409 (Kubernetes mode). */
  read_only: boolean;
  /** Why, and what to edit instead, shown in the banner. */
  read_only_reason?: string;
  auth_enabled: boolean;
  features: DashboardFeatures;
  /** Things about the configuration an operator must not miss, shown as a banner on every page. */
  config_notices: string[];
}

// ---- /api/logs (api/logs.ts; the records in logs/record.ts) ----

export interface LogSearch {
  logs: LogEntry[];
  /** `cursor` / `next_cursor`: keyset paging, for a client that pages past the offset cap. */
  pagination: { limit: number; offset: number; sort_by: string; order: string; total_count: number; cursor?: unknown; next_cursor: string | null };
  stats: LogStats;
  has_logs: boolean;
}

// ---- /api/governance/* (the records are the governance schema's, with limits expanded inline) ----

/** Who uses a budget or rate limit (GET /api/governance/usage, api/usage.ts). */
export interface LimitUser {
  kind: 'virtual_key' | 'provider_config' | 'team' | 'customer' | 'model_config' | 'provider';
  /** The record's id (a provider config's virtual key id; a provider's name). */
  id: string;
  name: string;
}

export interface BudgetUsage extends Budget {
  current_usage: number;
  last_reset: string;
  resets_at: string;
  used_by: LimitUser[];
}

export interface RateLimitUsage extends RateLimit {
  token_current_usage?: number;
  token_resets_at?: string;
  request_current_usage?: number;
  request_resets_at?: string;
  used_by: LimitUser[];
}

export interface UsageAnswer {
  budgets: BudgetUsage[];
  rate_limits: RateLimitUsage[];
}

/** A record that can carry a budget and a rate limit: answers expand them inline. */
export interface Limited {
  budget_id?: string;
  rate_limit_id?: string;
  budget?: Budget;
  rate_limit?: RateLimit;
}

export type ProviderConfigView = VirtualKeyProviderConfig & Limited;
export type VirtualKeyView = Omit<VirtualKey, 'provider_configs'> & Limited & Owned & { provider_configs?: ProviderConfigView[] };
export type TeamView = Team & Limited & Owned;
export type CustomerView = Customer & Limited & Owned;
export type ModelConfigView = ModelConfig & Limited & Owned;

// ---- /api/routing/rules and its /validate and /test (api/routing-rules.ts, api/routing-test.ts) ----

export type { RoutingFallback, RoutingScope, RoutingTarget };

/** A stored rule as listed: always with its id and scope. */
export type RuleView = RoutingRule &
  Owned & {
    id: string;
    scope: RoutingScope;
    scope_id: string | null;
    /** Set when the served configuration skips the rule (it cannot compile): why. */
    error?: string;
  };

export interface CelValidation {
  valid: boolean;
  error?: { message: string; position?: { column: number; offset: number } };
}

/** One rule evaluation of the audit trail (routing/decide.ts RoutingStep, as the request log keeps it). */
export interface TrailStep {
  step: number;
  scope: RoutingScope;
  scopeId: string | null;
  ruleId?: string;
  ruleName: string;
  expression: string;
  matched: boolean;
  skipped?: string;
  target?: { provider: string; model: string; keyId?: string };
  chain?: boolean;
}

export interface TargetView {
  provider: string;
  model: string;
  key_id?: string;
}

export interface RoutingTestAnswer {
  decision: {
    matched: boolean;
    provider: string;
    model: string;
    key_id?: string;
    fallbacks: string[];
    rule_id?: string;
    rule_name?: string;
    scope?: RoutingScope;
    scope_id?: string | null;
    error?: string;
  };
  targets?: TargetView[];
  note?: string;
  virtual_key?: { id: string; name: string };
  routing_engines_used: string[];
  routing_rule_ids: string[];
  routing_rule_name?: string;
  routing_engine_logs: TrailStep[] | { trail: TrailStep[]; error: string };
  draft?: { id: string; name: string; enabled: boolean };
  warnings: string[];
}

// ---- /api/providers (key values and credentials masked, or the `env.VAR` they are read from) ----

export interface ProviderKeyView {
  id: string;
  name: string;
  value: string;
  models?: string[];
  weight?: number;
  enabled?: boolean;
  use_for_batch_api?: boolean;
  [other: string]: unknown;
}

export interface NetworkConfigView {
  base_url?: string;
  extra_headers?: Record<string, string>;
  default_request_timeout_in_seconds?: number;
  max_retries?: number;
  retry_backoff_initial_ms?: number;
  retry_backoff_max_ms?: number;
  stream_idle_timeout_in_seconds?: number;
  max_conns_per_host?: number;
  [other: string]: unknown;
}

export interface ProviderView extends Owned {
  name: string;
  keys: ProviderKeyView[];
  network_config?: NetworkConfigView;
  custom_provider_config?: { base_provider_type: string; is_key_less?: boolean };
  concurrency_and_buffer_size?: unknown;
  pricing_overrides?: PricingOverride[];
  [other: string]: unknown;
}

// ---- /api/plugins and /api/cache/stats (api/plugins.ts, api/cache.ts) ----

export interface PluginView extends Owned {
  name: string;
  enabled: boolean;
  config?: Record<string, unknown>;
  placement?: string;
  order?: number;
  path?: string;
  isCustom: boolean;
  /** `error` with the reason in `logs` when the plugin cannot run here (its configuration is kept). */
  status: { name: string; status: 'active' | 'disabled' | 'error'; logs: string[]; types: string[] };
}

export interface CacheStats {
  store: { type: string | null; enabled: boolean; open: boolean };
  problem?: string;
  namespaces: string[];
  hits: { direct: number; semantic: number; total: number };
  misses: { direct: number; semantic: number; total: number };
  hit_rate: number | null;
  bypassed: Record<string, number>;
  writes: number;
  /** Entries removed (evicted) or not written (skipped) to keep a virtual key within max_bytes_per_key. */
  key_budget: Record<string, number>;
  store_errors: Record<string, number>;
}

// ---- /api/webhooks (api/webhooks.ts) ----

export type DeliveryState = 'pending' | 'delivered' | 'exhausted' | 'discarded';

export interface WebhookView extends Owned {
  id: string;
  name: string;
  url: string;
  events: string[];
  headers: Record<string, string>;
  include_response: boolean;
  allow_private_network: boolean;
  disabled: boolean;
  max_retries: number;
  retry_backoff_initial_seconds: number;
  retry_backoff_max_seconds: number;
  attempt_timeout_seconds: number;
  max_response_payload_kbs: number;
  max_concurrent_deliveries: number;
  /** Where the signing secret comes from: generated (rotatable here), config.json, or an env variable. */
  secret_source: 'generated' | 'config' | 'env';
  status: 'active' | 'disabled';
}

export interface DeliveryAttempt {
  send: number;
  attempt: number;
  started_at?: string;
  duration_ms: number | null;
  status_code: number | null;
  outcome: 'success' | 'failure';
  error?: string;
  response_body?: string;
  node?: string;
}

export interface Delivery {
  id: string;
  webhook: string;
  event: string;
  request_id: string;
  state: DeliveryState;
  sends: number;
  attempt_count: number;
  next_attempt_at?: string;
  last_status_code: number | null;
  last_error: string | null;
  created_at?: string;
  updated_at?: string;
  attempts: DeliveryAttempt[];
}

export interface DeliveryPage {
  deliveries: Delivery[];
  total_count: number;
  limit: number;
  offset: number;
}

// ---- /api/mcp and /api/mcp-logs (api/mcp.ts) ----

export type McpConnectionType = 'http' | 'sse' | 'stdio' | 'websocket';

export interface McpClientConfigView {
  client_id: string;
  name: string;
  connection_type: McpConnectionType;
  connection_string?: string;
  auth_type?: 'none' | 'headers' | 'oauth';
  headers?: Record<string, string>;
  stdio_config?: { command: string; args?: string[]; envs?: string[] };
  websocket_config?: { url: string };
  http_config?: { url: string };
  tools_to_execute?: string[];
  tools_to_auto_execute?: string[];
  tool_sync_interval?: string;
  is_code_mode_client?: boolean;
  is_ping_available?: boolean;
  allow_on_all_virtual_keys?: boolean;
  allow_without_virtual_key?: boolean;
}

export interface McpToolView {
  name: string;
  description?: string;
  parameters?: unknown;
}

export interface McpClientView extends Owned {
  config: McpClientConfigView;
  tools: McpToolView[];
  /** connected, disconnected or error; `connecting` while the first attempt is under way. */
  state: string;
  connecting?: boolean;
  error?: string;
  vk_configs: { virtual_key_id: string; virtual_key_name: string; tools_to_execute: string[] }[];
}

export interface McpLog {
  id: string;
  llm_request_id?: string;
  timestamp: string;
  tool_name: string;
  server_label: string;
  virtual_key_id?: string;
  arguments: unknown;
  result?: { text: string };
  error_details?: { error: { message: string } };
  latency: number;
  cost: number;
  status: string;
  source?: string;
}

export interface McpLogSearch {
  logs: McpLog[];
  pagination: { limit: number; offset: number; sort_by: string; order: string; total_count: number };
  stats: { total_executions: number; success_rate: number; average_latency: number; total_cost: number };
  has_logs: boolean;
}

export interface McpFilterDataView {
  tool_names: string[];
  server_labels: string[];
  virtual_keys: { id: string }[];
}

// ---- /api/skills (api/skills.ts; the store in skills/store.ts) ----

/** A file of a skill: UTF-8 text as it is, anything else base64. */
export interface SkillFileView {
  path: string;
  size: number;
  encoding: 'utf8' | 'base64';
  content: string;
}

export interface SkillVersionView {
  version: string;
  description: string;
  size: number;
  file_count: number;
  /** sha256 over the version's paths and bytes. */
  digest: string;
  created_at: string;
}

export interface SkillSummary {
  name: string;
  description: string;
  /** The version served when a client names none: default_version when set, else the highest. */
  current_version: string | null;
  default_version: string | null;
  latest_version: string | null;
  versions: SkillVersionView[];
  draft_size: number;
  created_at: string;
  updated_at: string;
}

export interface SkillList {
  skills: SkillSummary[];
  count: number;
}

/** GET /api/skills/{name}: the summary with the draft's files. */
export interface SkillDetail extends SkillSummary {
  draft: SkillFileView[];
}

/** GET /api/skills/{name}/versions/{version}. */
export interface SkillVersionDetail extends SkillVersionView {
  skill: string;
  files: SkillFileView[];
}

// ---- /api/management-keys (api/management-keys.ts) ----

export interface ManagementKeyView {
  id: string;
  name: string;
  description: string | null;
  /** The value's first characters, to recognise it. */
  prefix: string;
  scopes: string[];
  status: 'active' | 'expired' | 'revoked';
  created_at: string;
  created_by: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  /** Written at most once a minute per key (the replica that served the key knows the latest). */
  last_used_at: string | null;
}

export interface ManagementKeyList {
  keys: ManagementKeyView[];
  count: number;
  /** Every scope a key may hold. */
  scopes: string[];
}

/** POST /api/management-keys: the value is in this answer only. */
export interface IssuedManagementKey extends ManagementKeyView {
  value: string;
}

// ---- /api/audit-logs (api/audit-logs.ts) ----

/** The record's actor fields, answered together as `actor` (their names there lose the `actor_` prefix). */
type ActorField = 'actor_type' | 'actor_id' | 'actor_name' | 'session_id' | 'remote_address' | 'user_agent';

/**
 * A stored record as /api answers it (api/audit-logs.ts recordView): the time in RFC 3339, the
 * actor's fields as one object, and the chain key's id left out. Derived from AuditRecord, so a
 * field added to the record reaches the answer's type.
 */
export interface AuditRecordView extends Omit<AuditRecord, ActorField | 'timestamp' | 'key_id'> {
  timestamp: string;
  actor: {
    type: AuditRecord['actor_type'];
    id: AuditRecord['actor_id'];
    name: AuditRecord['actor_name'];
    session_id: AuditRecord['session_id'];
    remote_address: AuditRecord['remote_address'];
    user_agent: AuditRecord['user_agent'];
  };
  /** The change: the request body with secrets masked, config hashes before and after, or the event's own fields. */
  details: unknown;
}

export interface AuditLogList {
  records: AuditRecordView[];
  total_count: number;
  next_cursor: string | null;
}

export interface AuditVerifyAnswer {
  valid: boolean;
  records_checked: number;
  unverifiable: number;
  head: { seq: number; hash: string } | null;
  checkpoint: { through_seq: number; hash: string } | null;
  first_broken: { seq: number; id: string; reason: string; message: string } | null;
  algorithm: 'sha256' | 'hmac-sha256';
}

// ---- /api/playground (api/playground.ts) ----

/** What the playground shows of one answer. */
export interface PlaygroundSummary {
  /** The request's log record as the logging stage builds it (no content): tokens, cost, latency, ttft, cache, routing. */
  record: LogRecord;
  /** Where the request could go, in order (`provider/model`): the primary target, then its fallbacks. */
  targets: string[];
  /** A logs store keeps the record: `#/logs/<record.id>` opens it. */
  logged: boolean;
}

/** POST /api/playground without `stream`: the /v1 answer and its summary. */
export interface PlaygroundAnswer {
  response: unknown;
  summary: PlaygroundSummary;
}

/** GET /api/playground/models?virtual_key_id=: what the key may call. */
export interface PlaygroundModels {
  /** `provider/model`, sorted. */
  models: string[];
  /** Some provider allows every model it lists (`allowed_models: ['*']`): others may be typed. */
  any: boolean;
}
