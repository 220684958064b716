// The `governance` section of config.json (virtual keys, teams, customers, budgets, rate limits,
// routing rules) and the management-auth settings, in the reference gateway's shapes. The same
// schemas validate /api bodies and generate the CRDs.
import { Type, type Static } from '@sinclair/typebox';
import { ComplexityClassifierSchema } from './complexity.ts';

/** `30s`, `5m`, `1h`, `1d`, `1w`, `1M` (month), `1Y`. */
export const DURATION_PATTERN = '^[1-9][0-9]*(s|m|h|d|w|M|Y)$';
const Duration = Type.String({ pattern: DURATION_PATTERN, description: "Window length: '30s', '5m', '1h', '1d', '1w', '1M', '1Y'." });
const Id = Type.String({ minLength: 1, maxLength: 128 });
const Name = Type.String({ minLength: 1, maxLength: 256 });
/** An id of another resource, saying which (descriptions are what `kubectl explain` shows). */
const IdOf = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });

export const BudgetSchema = Type.Object(
  {
    id: Id,
    max_limit: Type.Number({ minimum: 0, description: 'Spend cap in USD per window.' }),
    reset_duration: Duration,
    calendar_aligned: Type.Optional(Type.Boolean({ description: 'Windows start at day/week/month/year boundaries (UTC).' })),
    // Reported by the reference gateway; accepted on input and ignored (usage lives in the counter store).
    current_usage: Type.Optional(Type.Number()),
    last_reset: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const RateLimitSchema = Type.Object(
  {
    id: Id,
    token_max_limit: Type.Optional(Type.Integer({ minimum: 0, description: 'Tokens (input and output) allowed per token_reset_duration window.' })),
    token_reset_duration: Type.Optional(Duration),
    request_max_limit: Type.Optional(Type.Integer({ minimum: 0, description: 'Requests allowed per request_reset_duration window.' })),
    request_reset_duration: Type.Optional(Duration),
    token_current_usage: Type.Optional(Type.Integer()),
    token_last_reset: Type.Optional(Type.String()),
    request_current_usage: Type.Optional(Type.Integer()),
    request_last_reset: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const CustomerSchema = Type.Object(
  {
    id: Id,
    name: Name,
    budget_id: Type.Optional(Id),
    rate_limit_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);

export const TeamSchema = Type.Object(
  {
    id: Id,
    name: Name,
    customer_id: Type.Optional(Id),
    budget_id: Type.Optional(Id),
    rate_limit_id: Type.Optional(Id),
    profile: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    claims: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const VirtualKeyProviderConfigSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: 'A provider name (openai, anthropic, a custom one).' }),
    allowed_models: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000, description: "['*']: every model the provider's catalog has; empty: none." })),
    key_ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000, description: "['*']: any key of the provider; empty or omitted: none." })),
    weight: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: 'null: not in weighted selection, still usable as provider/model and fallback.' })),
    budget_id: Type.Optional(IdOf("A budget (governance.budgets) for this key's use of this provider.")),
    rate_limit_id: Type.Optional(IdOf("A rate limit (governance.rate_limits) for this key's use of this provider.")),
  },
  { additionalProperties: false },
);

export const VirtualKeySchema = Type.Object(
  {
    id: Id,
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 2048, description: 'Free text for people.' })),
    value: Type.String({ minLength: 8, maxLength: 512, description: 'The key callers send (env.VAR allowed).' }),
    is_active: Type.Optional(Type.Boolean({ description: 'false: requests with this key are refused (default true).' })),
    team_id: Type.Optional(IdOf('The team this key belongs to: its budget, rate limit and routing rules apply too.')),
    customer_id: Type.Optional(IdOf("The customer this key belongs to directly (a team's key gets its customer from the team).")),
    budget_id: Type.Optional(IdOf('A budget (governance.budgets) this key spends from.')),
    rate_limit_id: Type.Optional(IdOf('A rate limit (governance.rate_limits) this key counts against.')),
    provider_configs: Type.Optional(Type.Array(VirtualKeyProviderConfigSchema, { maxItems: 100, description: 'The providers this key may use, with their models and keys; none: every provider.' })),
    mcp_configs: Type.Optional(Type.Array(Type.Unknown(), { description: 'Per MCP client, the tools this key may use ({mcp_client_name or mcp_client_id, tools_to_execute}); a client without an entry only with its allow_on_all_virtual_keys.' })),
  },
  { additionalProperties: false },
);

export const RoutingTargetSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1, description: "Provider to send to; omitted: the request's own." })),
    model: Type.Optional(Type.String({ minLength: 1, description: "Model to send to; omitted: the request's own." })),
    key_id: Type.Optional(Type.String({ minLength: 1, description: 'Pin one key of the provider (needs provider).' })),
    weight: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: "This target's share; the weights of a rule's targets sum to 1." }),
  },
  { additionalProperties: false },
);

export const RoutingFallbackObjectSchema = Type.Object(
  {
    provider: Type.String({ minLength: 1, description: 'Provider to fall back to.' }),
    model: Type.Optional(Type.String({ minLength: 1, description: 'Model to fall back to; omitted: the model of the step that matched.' })),
    key_id: Type.Optional(Type.String({ minLength: 1, description: 'Pin one key of the provider.' })),
    /** config.json only: resolved to `key_id` at load. */
    provider_key_name: Type.Optional(Type.String({ minLength: 1, description: "Pin a key by its name instead of key_id (resolved at load; dropped with a warning when no key has it)." })),
  },
  { additionalProperties: false },
);

export const RoutingFallbackSchema = Type.Union([Type.String({ pattern: '^[^/]+/.*$' }), RoutingFallbackObjectSchema]);

export const RoutingScopeSchema = Type.Union([
  Type.Literal('global'),
  Type.Literal('customer'),
  Type.Literal('team'),
  Type.Literal('virtual_key'),
], { description: 'Whose requests the rule sees: global (default), customer, team or virtual_key (with scope_id).' });

export const RoutingRuleSchema = Type.Object(
  {
    id: Type.Optional(Id),
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 2048, description: 'Free text for people.' })),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the rule is skipped (default true).' })),
    chain_rule: Type.Optional(Type.Boolean({ description: 'When it matches, evaluate the scope chain again with the chosen provider and model (default false: the rule ends routing).' })),
    cel_expression: Type.Optional(Type.String({ maxLength: 4096, description: 'CEL condition over the request (model, provider, headers, params, budget_used, ...); empty: always matches.' })),
    targets: Type.Array(RoutingTargetSchema, { minItems: 1, maxItems: 100, description: 'Where a matching request goes: one target drawn by weight.' }),
    fallbacks: Type.Optional(Type.Array(RoutingFallbackSchema, { maxItems: 20, description: 'Tried in order when the chosen target fails.' })),
    scope: Type.Optional(RoutingScopeSchema),
    scope_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'The customer, team or virtual key id of the scope; omitted or null for global.' })),
    priority: Type.Optional(Type.Number({ description: 'Order within the scope, ascending (default 0); ties by name.' })),
    query: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The reference gateway's rule-builder query, kept as written (not evaluated)." })),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const ModelConfigSchema = Type.Object(
  {
    id: Id,
    model_name: Type.String({ minLength: 1 }),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    budget_id: Type.Optional(Id),
    rate_limit_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);

export const ProviderGovernanceSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    budget_id: Type.Optional(Id),
    rate_limit_id: Type.Optional(Id),
    send_back_raw_request: Type.Optional(Type.Boolean()),
    send_back_raw_response: Type.Optional(Type.Boolean()),
    store_raw_request_response: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Management API auth. Basic auth uses the admin credentials; bearer and x-api-key take a management key. */
export const AuthConfigSchema = Type.Object(
  {
    admin_username: Type.Optional(Type.String({ minLength: 1 })),
    admin_password: Type.Optional(Type.String({ minLength: 1 })),
    is_enabled: Type.Optional(Type.Boolean()),
    disable_auth_on_inference: Type.Optional(Type.Boolean()),
    // The 16-character minimum applies to the resolved value (config/check.ts), not to an env.VAR reference.
    api_keys: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Management API keys of at least 16 characters (env.VAR allowed), sent as Bearer or x-api-key.' })),
  },
  { additionalProperties: false },
);

/** Per-model price overrides on a provider (`providers.<name>.pricing_overrides[]`), USD. */
export const PricingOverrideSchema = Type.Object(
  {
    model_pattern: Type.String({ minLength: 1, description: 'The models it prices, matched by match_type.' }),
    match_type: Type.Union([Type.Literal('exact'), Type.Literal('wildcard'), Type.Literal('regex')], { description: 'How model_pattern matches: exact, wildcard (*), or regex.' }),
    request_types: Type.Optional(Type.Array(Type.String(), { description: 'Only these request types (chat_completion, embedding, ...); omitted: all.' })),
    input_cost_per_token: Type.Optional(Type.Number({ minimum: 0, description: 'USD per input token.' })),
    output_cost_per_token: Type.Optional(Type.Number({ minimum: 0, description: 'USD per output token.' })),
    cache_read_input_token_cost: Type.Optional(Type.Number({ minimum: 0, description: 'USD per input token read from the prompt cache.' })),
    cache_creation_input_token_cost: Type.Optional(Type.Number({ minimum: 0, description: 'USD per input token written to the prompt cache.' })),
    /** Document OCR, USD per page processed (LiteLLM's name for it). */
    ocr_cost_per_page: Type.Optional(Type.Number({ minimum: 0, description: 'USD per page of document OCR.' })),
  },
  // The reference lists many more price dimensions (images, audio, tiers): accepted, not applied.
  { additionalProperties: true },
);

/**
 * A pricing override kept as an object of its own (`governance.pricing_overrides[]`), for one
 * provider or, without `provider`, every provider: what /api and the dashboard write, since a
 * provider of config.json (or of the environment) is read-only there. These come before the
 * provider's own `pricing_overrides` (the first match wins). Only the price fields the gateway
 * applies are accepted, so a misspelt one is refused instead of ignored.
 */
export const PricingOverrideRecordSchema = Type.Object(
  {
    id: Id,
    provider: Type.Optional(Type.String({ minLength: 1, description: 'The provider it prices; absent: every provider.' })),
    ...PricingOverrideSchema.properties,
  },
  { additionalProperties: false },
);

export const GovernanceSchema = Type.Object(
  {
    budgets: Type.Optional(Type.Array(BudgetSchema)),
    rate_limits: Type.Optional(Type.Array(RateLimitSchema)),
    customers: Type.Optional(Type.Array(CustomerSchema)),
    teams: Type.Optional(Type.Array(TeamSchema)),
    virtual_keys: Type.Optional(Type.Array(VirtualKeySchema)),
    routing_rules: Type.Optional(Type.Array(RoutingRuleSchema)),
    model_configs: Type.Optional(Type.Array(ModelConfigSchema)),
    /** Pricing overrides written through /api (a Skybridge extension; see PricingOverrideRecordSchema). */
    pricing_overrides: Type.Optional(Type.Array(PricingOverrideRecordSchema)),
    providers: Type.Optional(Type.Array(ProviderGovernanceSchema)),
    auth_config: Type.Optional(AuthConfigSchema),
    /** Embedding-based `complexity_tier` for routing rules (a Skybridge extension). */
    complexity_classifier: Type.Optional(ComplexityClassifierSchema),
  },
  { additionalProperties: false },
);

/** Where counters and the config store live when several replicas share state. */
export const RedisConfigSchema = Type.Object(
  {
    addr: Type.String({ minLength: 1, description: 'host:port (env.VAR allowed).' }),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    db: Type.Optional(Type.Integer({ minimum: 0 })),
    key_prefix: Type.Optional(Type.String({ description: "Prefix of every key (default 'skybridge:')." })),
    tls: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type Budget = Static<typeof BudgetSchema>;
export type RateLimit = Static<typeof RateLimitSchema>;
export type Customer = Static<typeof CustomerSchema>;
export type Team = Static<typeof TeamSchema>;
export type VirtualKeyProviderConfig = Static<typeof VirtualKeyProviderConfigSchema>;
export type VirtualKey = Static<typeof VirtualKeySchema>;
export type RoutingTarget = Static<typeof RoutingTargetSchema>;
export type RoutingFallback = Static<typeof RoutingFallbackSchema>;
export type RoutingFallbackObject = Static<typeof RoutingFallbackObjectSchema>;
export type RoutingScope = Static<typeof RoutingScopeSchema>;
export type RoutingRule = Static<typeof RoutingRuleSchema>;
export type ModelConfig = Static<typeof ModelConfigSchema>;
export type ProviderGovernance = Static<typeof ProviderGovernanceSchema>;
export type AuthConfig = Static<typeof AuthConfigSchema>;
export type Governance = Static<typeof GovernanceSchema>;
export type PricingOverride = Static<typeof PricingOverrideSchema>;
export type PricingOverrideRecord = Static<typeof PricingOverrideRecordSchema>;
export type RedisConfig = Static<typeof RedisConfigSchema>;
