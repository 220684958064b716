// What the operator shares with the proxy, and the only proxy module it imports (the import rule in
// test/unit/imports.test.ts holds it to that): the config schemas its CRDs are generated from, the
// checks a rendered document must pass, the index document's shape and checksums, and the log. Anything exported here is a promise to the
// operator; the proxy's internals stay free to change behind it.
export { GatewayConfigSchema, ProviderConfigSchema } from './schema/gateway.ts';
export {
  BudgetSchema,
  CustomerSchema,
  RateLimitSchema,
  RoutingFallbackObjectSchema,
  RoutingRuleSchema,
  TeamSchema,
  VirtualKeySchema,
  type RoutingRule,
} from './schema/governance.ts';
export { RESERVED_WEBHOOK_HEADERS, HOP_BY_HOP_HEADERS, WebhookEndpointSchema } from './schema/webhooks.ts';
export { MCP_CONNECTION_REQUIREMENTS, McpClientConfigSchema } from './schema/mcp.ts';
export { SEMANTIC_CACHE_PLUGIN, SemanticCacheConfigSchema, SemanticCachePluginSchema } from './schema/cache.ts';
export { CheckMemo, checkConfig, ConfigError } from './config/check.ts';
export { resolvesEnvRef } from './schema/env-ref.ts';
export {
  CONFIG_LABEL_SELECTOR,
  INDEX_CONFIGMAP,
  INDEX_KEY,
  PART_KEY,
  SOURCES_PART_PREFIX,
  managedFromSources,
  parseIndex,
  readSources,
  SECRET_NAME,
  SECRET_SHARDS,
  SECRET_SHARD_NAMES,
  secretShardName,
  secretKeyName,
  secretChecksum,
  sha256Hex,
  ChecksumMemo,
  type ConfigIndex,
} from './schema/config-index.ts';
export { validator, type FieldError } from './schema/validate.ts';
export { validateRuleForWrite, WEIGHT_TOLERANCE } from './routing/rules.ts';
export { configureLog, log, type LogLevel, type LogStyle } from './log.ts';
export { EXHAUSTED_WINDOW_MS, SERVED_ANNOTATION, SERVED_REPORT_SELECTOR, parseServedReport, scrubError, type ServedReport, type ServedMcpClient, type ServedPool, type ServedWebhook } from './state/served-contract.ts';
