// Per kind: the CEL rules the spec states (and that CEL can say), printer columns, bounds for the
// few fields longer than the default, and list semantics. Names, group and version come from the
// operator's own kind table, so the CRDs and the controller cannot disagree on them.
import { VirtualKeySchema, RoutingRuleSchema, TeamSchema, CustomerSchema, WEIGHT_TOLERANCE, RESERVED_WEBHOOK_HEADERS, HOP_BY_HOP_HEADERS, MCP_CONNECTION_REQUIREMENTS, McpClientConfigSchema } from '../../../proxy/src/contract.ts';
import { KINDS, type KindName } from '../resources/kinds.ts';
import { celString, type Bounds, type CelRule } from './structural.ts';
import { PROVIDER_NAME_PATTERN } from './specs.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 1: shown only with `kubectl get -o wide`. */
  priority?: number;
}

export interface KindDefinition {
  kind: KindName;
  plural: string;
  singular: string;
  shortNames: string[];
  /** Rules on the whole object (they can see metadata.name), beside the spec's own. */
  rootRules: CelRule[];
  /** Rules by spec path ('' = spec). */
  rules: Record<string, CelRule[]>;
  boundsAt: Record<string, Partial<Bounds>>;
  extensionsAt: Record<string, Record<`x-kubernetes-${string}`, unknown>>;
  /** Columns before Ready and Age. */
  columns: PrinterColumn[];
}

const SHORT_NAMES: Record<KindName, string[]> = {
  Provider: ['sbprovider'],
  VirtualKey: ['vk'],
  RoutingRule: ['rr'],
  Webhook: ['sbwebhook'],
  MCPClient: ['mcpc'],
  CachePolicy: ['sbcache'],
  Team: ['sbteam'],
  Customer: ['sbcustomer'],
};

const has = (field: string) => `has(self.${field})`;
const notBoth = (a: string, b: string, message: string): CelRule => ({ rule: `!(${has(a)} && ${has(b)})`, message, reason: 'FieldValueForbidden' });
/** `field` may be absent, else it must satisfy `cond`. */
const ifSet = (field: string, cond: string): string => `!${has(field)} || ${cond}`;
const maxLengthOf = (schema: { properties: Record<string, unknown> }, field: string): number =>
  (schema.properties[field] as { maxLength: number }).maxLength;

/** metadata.name stands for an id when the spec sets none: it must fit the id's length. */
const nameFits = (idField: string | undefined, max: number, what: string): CelRule => ({
  rule: `${idField ? `has(self.spec.${idField}) || ` : ''}size(self.metadata.name) <= ${max}`,
  message: `metadata.name is the ${what}${idField ? ` unless spec.${idField} is set` : ''}: at most ${max} characters`,
});

const sum = 'self.targets.map(t, t.weight).sum()';

/** An inline budget or rate limit is the resource's own: not beside a reference to another. */
const inlineLimitRules = (owner: string): CelRule[] => [
  notBoth('budget', 'budget_id', `set budget (${owner}'s own) or budget_id, not both`),
  notBoth('rateLimit', 'rate_limit_id', `set rateLimit (${owner}'s own) or rate_limit_id, not both`),
];

/** The proxy's rate-limit checks (config/governance-rules.ts) on an inline `rateLimit`. */
const RATE_LIMIT_RULES: CelRule[] = [
  { rule: `${has('token_max_limit')} || ${has('request_max_limit')}`, message: 'needs token_max_limit or request_max_limit', reason: 'FieldValueRequired' },
  { rule: ifSet('token_max_limit', has('token_reset_duration')), message: 'token_reset_duration is required with token_max_limit', fieldPath: '.token_reset_duration', reason: 'FieldValueRequired' },
  { rule: ifSet('request_max_limit', has('request_reset_duration')), message: 'request_reset_duration is required with request_max_limit', fieldPath: '.request_reset_duration', reason: 'FieldValueRequired' },
];

/**
 * On a header value: `env.<KEY>` would resolve against the rendered Secret, which holds every
 * resource's credentials, and send one to the header's receiver. The operator refuses it in any
 * field; here admission says so first for the headers, where it does harm.
 */
const noEnvReference = (fix: string): CelRule => ({
  rule: "!self.startsWith('env.')",
  message: `env. references are not allowed in custom resources (they would read other resources' Secret entries): ${fix}`,
  reason: 'FieldValueForbidden',
});

const DEFINITIONS: Record<KindName, Omit<KindDefinition, 'kind' | 'plural' | 'singular' | 'shortNames'>> = {
  Provider: {
    rootRules: [
      {
        rule: `has(self.spec.name) || self.metadata.name.matches(${celString(PROVIDER_NAME_PATTERN)})`,
        message: `metadata.name is the provider name unless spec.name is set: it must match ${PROVIDER_NAME_PATTERN}`,
      },
    ],
    rules: {
      '': [
        {
          rule: ifSet('custom_provider_config', `${has('network_config')} && (${has('network_config.base_url')} || ${has('network_config.inference_pool')})`),
          message: 'a custom provider (custom_provider_config) needs network_config.base_url (or network_config.inference_pool)',
          fieldPath: '.network_config',
          reason: 'FieldValueRequired',
        },
      ],
      'network_config.extra_headers.*': [noEnvReference('write the value itself')],
      network_config: [
        { rule: ifSet('base_url', "self.base_url.matches('^https?://')"), message: 'base_url must be an absolute http(s) URL', fieldPath: '.base_url' },
        {
          rule: `!${has('retry_backoff_initial_ms')} || !${has('retry_backoff_max_ms')} || self.retry_backoff_initial_ms <= self.retry_backoff_max_ms`,
          message: 'retry_backoff_max_ms must be >= retry_backoff_initial_ms',
          fieldPath: '.retry_backoff_max_ms',
        },
      ],
    },
    boundsAt: {
      'network_config.ca_cert_pem': { maxLength: 65536 },
      'network_config.extra_headers.*': { maxLength: 8192 },
    },
    // Key names are unique within a provider: a map-type list says so and merges keys by name.
    extensionsAt: { keys: { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] } },
    columns: [
      { name: 'Provider', type: 'string', jsonPath: '.spec.name', description: 'Provider name when it is not metadata.name.' },
      { name: 'Base', type: 'string', jsonPath: '.spec.custom_provider_config.base_provider_type', description: 'Wire format of a custom provider.' },
      { name: 'URL', type: 'string', jsonPath: '.spec.network_config.base_url', priority: 1 },
    ],
  },
  VirtualKey: {
    rootRules: [nameFits(undefined, maxLengthOf(VirtualKeySchema, 'id'), 'virtual key id')],
    rules: {
      '': [
        ...inlineLimitRules('this key'),
        notBoth('team_id', 'customer_id', 'a virtual key belongs to a team or a customer, not both (the team names its customer)'),
      ],
      rateLimit: RATE_LIMIT_RULES,
    },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Display Name', type: 'string', jsonPath: '.spec.name' },
      { name: 'Active', type: 'boolean', jsonPath: '.spec.is_active' },
      { name: 'Team', type: 'string', jsonPath: '.spec.team_id' },
      { name: 'Customer', type: 'string', jsonPath: '.spec.customer_id' },
      { name: 'Budget', type: 'number', jsonPath: '.spec.budget.max_limit', description: 'USD per window.' },
      { name: 'Window', type: 'string', jsonPath: '.spec.budget.reset_duration', priority: 1 },
    ],
  },
  RoutingRule: {
    rootRules: [nameFits('id', maxLengthOf(RoutingRuleSchema, 'id'), 'rule id')],
    rules: {
      '': [
        {
          rule: `${sum} >= ${1 - WEIGHT_TOLERANCE} && ${sum} <= ${1 + WEIGHT_TOLERANCE}`,
          message: `the weights of targets must sum to 1 (within ${WEIGHT_TOLERANCE})`,
          fieldPath: '.targets',
        },
        {
          rule: `${has('scope')} && self.scope != 'global' ? ${has('scope_id')} : !${has('scope_id')}`,
          message: 'scope_id is required unless scope is global, and must be omitted or null for global scope',
          fieldPath: '.scope_id',
        },
      ],
      'targets[]': [{ rule: ifSet('key_id', has('provider')), message: 'key_id requires provider', fieldPath: '.key_id', reason: 'FieldValueRequired' }],
    },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Scope', type: 'string', jsonPath: '.spec.scope' },
      { name: 'Scope ID', type: 'string', jsonPath: '.spec.scope_id' },
      { name: 'Priority', type: 'number', jsonPath: '.spec.priority' },
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      { name: 'Chain', type: 'boolean', jsonPath: '.spec.chain_rule', priority: 1 },
      { name: 'Expression', type: 'string', jsonPath: '.spec.cel_expression', priority: 1 },
    ],
  },
  Webhook: {
    rootRules: [],
    rules: {
      '': [
        {
          rule: "self.url.lowerAscii().startsWith('https://') || (has(self.allow_private_network) && self.allow_private_network && self.url.lowerAscii().startsWith('http://'))",
          message: 'url must be https (plain http only with allow_private_network: true)',
          fieldPath: '.url',
        },
        {
          rule: `!${has('retry_backoff_initial_seconds')} || !${has('retry_backoff_max_seconds')} || self.retry_backoff_initial_seconds <= self.retry_backoff_max_seconds`,
          message: 'retry_backoff_max_seconds must be >= retry_backoff_initial_seconds',
          fieldPath: '.retry_backoff_max_seconds',
        },
      ],
      'headers.*': [noEnvReference('write the value itself; the signing secret comes from secretFrom')],
      headers: [
        {
          rule: `!self.exists(k, k.lowerAscii() in [${RESERVED_WEBHOOK_HEADERS.map((h) => `'${h}'`).join(', ')}])`,
          message: `headers cannot override the reserved delivery headers (${RESERVED_WEBHOOK_HEADERS.join(', ')})`,
          reason: 'FieldValueForbidden',
        },
        {
          // Admission refuses what the gateway would refuse at load, so one Webhook cannot block the rendered document.
          rule: `!self.exists(k, k.lowerAscii() in [${HOP_BY_HOP_HEADERS.map((h) => `'${h}'`).join(', ')}] || k.lowerAscii().startsWith('proxy-'))`,
          message: `headers cannot set hop-by-hop headers (${HOP_BY_HOP_HEADERS.join(', ')}, proxy-*)`,
          reason: 'FieldValueForbidden',
        },
      ],
    },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'URL', type: 'string', jsonPath: '.spec.url' },
      { name: 'Disabled', type: 'boolean', jsonPath: '.spec.disabled' },
    ],
  },
  MCPClient: {
    rootRules: [nameFits('client_id', maxLengthOf(McpClientConfigSchema, 'client_id'), 'MCP client id')],
    rules: {
      '': [
        ...Object.entries(MCP_CONNECTION_REQUIREMENTS).map(([type, needs]): CelRule => ({
          rule: `self.connection_type != '${type}' || ${needs.map((alts) => `(${alts.map(has).join(' || ')})`).join(' && ')}`,
          message: `connection_type ${type} needs ${needs.map((alts) => alts.join(' or ')).join(' and ')}`,
          reason: 'FieldValueRequired',
        })),
        {
          rule: `!${has('headers')} || !${has('headersFrom')} || !self.headersFrom.exists(k, k in self.headers)`,
          message: 'a header is set in headers or in headersFrom, not both',
          fieldPath: '.headersFrom',
        },
      ],
      'headers.*': [noEnvReference('take a secret header from a Secret with headersFrom')],
    },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.connection_type' },
      { name: 'Code Mode', type: 'boolean', jsonPath: '.spec.is_code_mode_client' },
      { name: 'Endpoint', type: 'string', jsonPath: '.spec.connection_string', priority: 1 },
      { name: 'Command', type: 'string', jsonPath: '.spec.stdio_config.command', priority: 1 },
      { name: 'Connected', type: 'string', jsonPath: '.status.conditions[?(@.type=="Connected")].status', description: 'Connected on every live proxy replica.' },
      { name: 'Tools', type: 'integer', jsonPath: '.status.toolCount', description: 'Tools the server lists.' },
    ],
  },
  CachePolicy: {
    rootRules: [],
    rules: {
      '': [
        {
          rule: `${has('provider')} == ${has('embedding_model')}`,
          message: 'provider and embedding_model go together: both for semantic mode, neither for direct-only',
          fieldPath: '.embedding_model',
        },
        { rule: `${has('provider')} || self.dimension == 1`, message: 'direct-only mode (no provider) needs dimension 1', fieldPath: '.dimension' },
      ],
    },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      { name: 'Provider', type: 'string', jsonPath: '.spec.provider' },
      { name: 'Model', type: 'string', jsonPath: '.spec.embedding_model' },
      { name: 'Dimension', type: 'integer', jsonPath: '.spec.dimension' },
      { name: 'TTL', type: 'string', jsonPath: '.spec.ttl', priority: 1 },
    ],
  },
  Team: {
    rootRules: [nameFits(undefined, maxLengthOf(TeamSchema, 'id'), 'team id')],
    rules: { '': inlineLimitRules('this team'), rateLimit: RATE_LIMIT_RULES },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Display Name', type: 'string', jsonPath: '.spec.name' },
      { name: 'Customer', type: 'string', jsonPath: '.spec.customer_id', description: 'The Customer it belongs to.' },
      { name: 'Budget', type: 'number', jsonPath: '.spec.budget.max_limit', description: 'USD per window.' },
      { name: 'Window', type: 'string', jsonPath: '.spec.budget.reset_duration', priority: 1 },
    ],
  },
  Customer: {
    rootRules: [nameFits(undefined, maxLengthOf(CustomerSchema, 'id'), 'customer id')],
    rules: { '': inlineLimitRules('this customer'), rateLimit: RATE_LIMIT_RULES },
    boundsAt: {},
    extensionsAt: {},
    columns: [
      { name: 'Display Name', type: 'string', jsonPath: '.spec.name' },
      { name: 'Budget', type: 'number', jsonPath: '.spec.budget.max_limit', description: 'USD per window.' },
      { name: 'Window', type: 'string', jsonPath: '.spec.budget.reset_duration', priority: 1 },
    ],
  },
};

export function kindDefinitions(): KindDefinition[] {
  return KINDS.map((k) => ({
    kind: k.kind,
    plural: k.plural,
    singular: k.kind.toLowerCase(),
    shortNames: SHORT_NAMES[k.kind],
    ...DEFINITIONS[k.kind],
  }));
}
