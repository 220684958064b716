// The `.spec` of each custom resource, derived from the proxy's own config schemas with the changes
// of the operator <-> proxy contract (docs/kubernetes.md): secret material becomes a reference to a
// Secret key, ids default to metadata.name, inline budgets and rate limits on virtual keys. Plain
// JSON Schema, still valid for ajv; structural.ts turns it into the CRD's OpenAPI schema.
import { Type } from '@sinclair/typebox';
import { GatewayConfigSchema, ProviderConfigSchema, BudgetSchema, CustomerSchema, RateLimitSchema, RoutingFallbackObjectSchema, RoutingRuleSchema, TeamSchema, VirtualKeySchema, WebhookEndpointSchema, McpClientConfigSchema, SemanticCacheConfigSchema, SemanticCachePluginSchema } from '../../../proxy/src/contract.ts';
import { addProperties, clone, mapValues, nodeAt, omit, optional, replace, type JsonSchema } from './json-schema.ts';

/** A key of a Secret in the custom resource's own namespace (core/v1 SecretKeySelector without `optional`). */
export const SecretKeyRefSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$', description: 'Secret name, in the namespace of this resource.' }),
    key: Type.String({ minLength: 1, maxLength: 253, pattern: '^[-._a-zA-Z0-9]+$', description: 'Key within the Secret.' }),
  },
  { additionalProperties: false, description: 'A key of a Secret in the namespace of this resource.' },
);

/** `valueFrom: {secretKeyRef: {name, key}}`, the shape every secret takes in a custom resource. */
export const ValueFromSchema = Type.Object(
  { secretKeyRef: SecretKeyRefSchema },
  { additionalProperties: false, description: 'The secret value, read by the operator from a Secret in this namespace.' },
);

/** Where each kind's secrets are: the config field, and the spec field standing for it. */
export interface SecretField {
  /** Spec path of the reference (`keys[].valueFrom`, `headersFrom.*`). */
  spec: string;
  /** Config path of the value it stands for (`keys[].value`, `headers.*`). */
  config: string;
}

export const SECRET_FIELDS = {
  Provider: [{ spec: 'keys[].valueFrom', config: 'keys[].value' }],
  VirtualKey: [{ spec: 'valueFrom', config: 'value' }],
  RoutingRule: [],
  Webhook: [{ spec: 'secretFrom', config: 'secret' }],
  MCPClient: [{ spec: 'headersFrom.*', config: 'headers.*' }],
  CachePolicy: [],
  Team: [],
  Customer: [],
} as const satisfies Record<string, readonly SecretField[]>;

/** The pattern of provider names (the keys of config.json `providers`). */
export const PROVIDER_NAME_PATTERN = Object.keys(nodeAt(clone(GatewayConfigSchema), 'providers').patternProperties ?? {})[0];

const valueFrom = (): JsonSchema => clone(ValueFromSchema);

/** Credentials inside a provider key's cloud config: in a Provider resource each is `<field>From`, a secretKeyRef. */
export const KEY_CONFIG_CREDENTIALS: Readonly<Record<string, readonly string[]>> = {
  bedrock_key_config: ['access_key', 'secret_key', 'session_token'],
  vertex_key_config: ['auth_credentials'],
};

/** Fields reported by the reference gateway and ignored on input: no place in a desired state. */
const BUDGET_STATUS_FIELDS = ['id', 'current_usage', 'last_reset'];
const RATE_LIMIT_STATUS_FIELDS = ['id', 'token_current_usage', 'token_last_reset', 'request_current_usage', 'request_last_reset'];

export function providerSpec(): JsonSchema {
  const s = clone(ProviderConfigSchema);
  s.description = 'A provider of config.json `providers` (its name is metadata.name unless spec.name is set); key values come from Secrets.';
  const keyRequired = (nodeAt(s, 'keys[]').required ?? []).includes('value');
  omit(s, 'keys[]', ['value']);
  addProperties(s, 'keys[]', { valueFrom: { ...valueFrom(), description: 'The API key, from a Secret key.' } }, keyRequired ? ['valueFrom'] : []);
  for (const [config, fields] of Object.entries(KEY_CONFIG_CREDENTIALS)) {
    omit(s, `keys[].${config}`, [...fields]);
    addProperties(s, `keys[].${config}`, Object.fromEntries(fields.map((f) => [`${f}From`, { ...valueFrom(), description: `${f}, from a Secret key.` }])));
  }
  // The proxy's descriptions offer env.VAR; a custom resource cannot use it (translate.ts).
  nodeAt(s, 'keys[].azure_key_config.endpoint').description = 'https://<resource>.openai.azure.com.';
  addProperties(s, '', { name: { type: 'string', minLength: 1, pattern: PROVIDER_NAME_PATTERN, description: 'Provider name (openai, anthropic, a custom name); default metadata.name.' } });
  return s;
}

export function virtualKeySpec(): JsonSchema {
  const s = clone(VirtualKeySchema);
  s.description = 'A virtual key of config.json `governance.virtual_keys` (its id is metadata.name); the key value comes from a Secret.';
  omit(s, '', ['id', 'value']);
  optional(s, '', ['name']);
  nodeAt(s, 'name').description = 'Display name; default metadata.name.';
  nodeAt(s, 'team_id').description = "The Team this key belongs to (its metadata.name): the team's budget and rate limit, and its customer's, apply to the key too. A Team that is missing or refused keeps the key out of service.";
  nodeAt(s, 'customer_id').description = "The Customer this key belongs to directly (its metadata.name), for a key in no team. A Customer that is missing or refused keeps the key out of service.";
  addProperties(s, '', { valueFrom: { ...valueFrom(), description: 'The key callers send (x-bf-vk), from a Secret key.' }, ...inlineLimitSchemas('This key', 'vk') }, ['valueFrom']);
  return s;
}

/** `budget` and `rateLimit`: a resource's own limits, rendered as governance budget and rate limit `<prefix>-<name>`. */
function inlineLimitSchemas(owner: string, prefix: string): { budget: JsonSchema; rateLimit: JsonSchema } {
  const budget = clone(BudgetSchema);
  omit(budget, '', BUDGET_STATUS_FIELDS);
  budget.description = `${owner}'s own budget (rendered as governance.budgets id ${prefix}-<name>); instead of budget_id.`;
  const rateLimit = clone(RateLimitSchema);
  omit(rateLimit, '', RATE_LIMIT_STATUS_FIELDS);
  rateLimit.description = `${owner}'s own rate limit (rendered as governance.rate_limits id ${prefix}-<name>); instead of rate_limit_id.`;
  return { budget, rateLimit };
}

export function teamSpec(): JsonSchema {
  const s = clone(TeamSchema);
  s.description = 'A team of config.json `governance.teams` (its id is metadata.name): virtual keys join it with team_id, routing rules scope to it.';
  omit(s, '', ['id']);
  optional(s, '', ['name']);
  nodeAt(s, 'name').description = 'Display name, unique among teams; default metadata.name.';
  nodeAt(s, 'customer_id').description = 'The Customer this team belongs to (its metadata.name): its budget and rate limit apply to the team\'s keys too.';
  for (const f of ['profile', 'config', 'claims']) nodeAt(s, f).description = 'Free-form, kept as given (shown by /api/governance/teams); the gateway does not act on it.';
  addProperties(s, '', inlineLimitSchemas('This team', 'team'));
  describeSharedLimits(s);
  return s;
}

export function customerSpec(): JsonSchema {
  const s = clone(CustomerSchema);
  s.description = 'A customer of config.json `governance.customers` (its id is metadata.name): teams belong to it with customer_id, virtual keys directly with customer_id.';
  omit(s, '', ['id']);
  optional(s, '', ['name']);
  nodeAt(s, 'name').description = 'Display name, unique among customers; default metadata.name.';
  addProperties(s, '', inlineLimitSchemas('This customer', 'customer'));
  describeSharedLimits(s);
  return s;
}

/** budget_id / rate_limit_id of a team or customer: in Kubernetes, only resources' inline limits exist to name. */
function describeSharedLimits(s: JsonSchema): void {
  nodeAt(s, 'budget_id').description = 'A budget another resource renders (vk-, team- or customer-<name>), to share it; instead of budget.';
  nodeAt(s, 'rate_limit_id').description = 'A rate limit another resource renders (vk-, team- or customer-<name>), to share it; instead of rateLimit.';
}

export function routingRuleSpec(): JsonSchema {
  const s = clone(RoutingRuleSchema);
  s.description = 'A routing rule of config.json `governance.routing_rules` (id and name default to metadata.name).';
  omit(s, '', ['created_at', 'updated_at']);
  optional(s, '', ['name']);
  nodeAt(s, 'id').description = 'Rule id; default metadata.name.';
  nodeAt(s, 'name').description = 'Unique within the scope; default metadata.name.';
  nodeAt(s, 'scope_id').description = 'What the rule is scoped to: the metadata.name of the VirtualKey, Team or Customer; absent or null for global scope.';
  // A fallback is `provider/model` or an object; the object form says the same and can be typed.
  const fallback = clone(RoutingFallbackObjectSchema);
  fallback.description = "A fallback target; the config.json string form 'openai/gpt-4o' is {provider: openai, model: gpt-4o} ('openai/' keeps the model: {provider: openai}).";
  replace(s, 'fallbacks[]', fallback);
  return s;
}

export function webhookSpec(): JsonSchema {
  const s = clone(WebhookEndpointSchema);
  s.description = 'A webhook endpoint of config.json `webhooks` (its name defaults to metadata.name); the signing secret comes from a Secret.';
  optional(s, '', ['name']);
  nodeAt(s, 'name').description = 'Endpoint name, sent by clients in x-bf-async-webhook; default metadata.name.';
  omit(s, '', ['secret']);
  nodeAt(s, 'headers').description = 'Sent on every delivery (env. references are not allowed). Reserved delivery headers cannot be overridden.';
  addProperties(s, '', { secretFrom: { ...valueFrom(), description: 'Signing secret (whsec_<base64>) from a Secret key; generated by the gateway when omitted.' } });
  return s;
}

export function mcpClientSpec(): JsonSchema {
  const s = clone(McpClientConfigSchema);
  s.description = 'An MCP client of config.json `mcp.client_configs` (client_id and name default to metadata.name); auth header values may come from Secrets.';
  optional(s, '', ['name']);
  nodeAt(s, 'client_id').description = 'MCP client id; default metadata.name.';
  nodeAt(s, 'name').description = "The client's global object name in code mode; default metadata.name.";
  const headers = nodeAt(s, 'headers');
  addProperties(s, '', {
    headersFrom: {
      type: 'object',
      maxProperties: headers.maxProperties,
      patternProperties: { '^(.*)$': valueFrom() },
      description: 'Header values from Secret keys (Authorization and the like), merged into headers.',
    },
  });
  if (!mapValues(nodeAt(s, 'headersFrom'))) throw new Error('headersFrom: not a map');
  return s;
}

export function cachePolicySpec(): JsonSchema {
  // The plugin's config fields at the top of the spec, beside the plugin entry's own switches.
  const plugin = clone(SemanticCachePluginSchema);
  omit(plugin, '', ['name', 'config']);
  optional(plugin, '', ['enabled']);
  nodeAt(plugin, 'enabled').description = 'Default true.';
  const s = clone(SemanticCacheConfigSchema);
  s.description = 'The response cache: the semantic_cache plugin of config.json `plugins` (one per configuration).';
  addProperties(s, '', plugin.properties ?? {});
  return s;
}

/** Every kind's spec schema. */
export function crSpecs(): Record<keyof typeof SECRET_FIELDS, JsonSchema> {
  return {
    Provider: providerSpec(),
    VirtualKey: virtualKeySpec(),
    RoutingRule: routingRuleSpec(),
    Webhook: webhookSpec(),
    MCPClient: mcpClientSpec(),
    CachePolicy: cachePolicySpec(),
    Team: teamSpec(),
    Customer: customerSpec(),
  };
}
