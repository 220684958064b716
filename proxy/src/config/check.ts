// The check every configuration document passes, wherever it comes from: config.json, the config
// store, a management API write, a Kubernetes rendering, and the operator (through contract.ts)
// before it renders one. Validate against the schema, resolve env.VAR and vault references, then the rules a
// schema cannot say. Built from the schema floor and each part's own checks, so it loads no stage.
// Every problem is reported with its JSON path.
import { mcpConfigErrors, vkMcpErrors } from '../schema/mcp.ts';
import { GatewayConfigSchema, UNBUILT_CLIENT_FIELDS, UNBUILT_SECTIONS, type GatewayConfig } from '../schema/gateway.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { governanceErrors } from './governance-rules.ts';
import { azureConfigErrors } from '../providers/azure/key.ts';
import { vertexKeyErrors } from '../providers/vertex/config.ts';
import { unsafeJson } from '../schema/names.ts';
import { safetyErrors, safetyWarnings } from './safety.ts';
import { webhookConfigErrors } from './webhook-rules.ts';
import { cacheConfigErrors, SemanticCacheConfigSchema } from '../schema/cache.ts';
import { OtelPluginConfigSchema, otelConfigErrors, otelWarnings } from '../schema/plugins.ts';
import { isReference, isVaultRef, parseVaultRef, readRef, resolvesEnvRef, type VaultLookup } from '../schema/env-ref.ts';

export class ConfigError extends Error {
  readonly errors: FieldError[];
  constructor(source: string, errors: FieldError[]) {
    super(`invalid configuration in ${source}:\n` + errors.map((e) => `  - ${e.path}: ${e.message}`).join('\n'));
    this.errors = errors;
  }
}

export interface LoadedConfig {
  /** env.VAR references resolved: what the snapshot compiles. */
  config: GatewayConfig;
  /** As written (references unresolved): what the config store keeps. */
  raw: GatewayConfig;
  warnings: string[];
}

const validateConfig = validator(GatewayConfigSchema);
const validateCacheConfig = validator(SemanticCacheConfigSchema);
const cacheConfigProblems = (v: unknown): FieldError[] | undefined => {
  const r = validateCacheConfig(v);
  return Array.isArray(r) ? r : undefined;
};
const validateOtelConfig = validator(OtelPluginConfigSchema);
const otelConfigProblems = (v: unknown): FieldError[] | undefined => {
  const r = validateOtelConfig(v);
  return Array.isArray(r) ? r : undefined;
};

/** The process's vault values (config/vault.ts sets it once a vault is configured), read by every check. */
let currentVault: VaultLookup | undefined;

export function setVaultLookup(lookup: VaultLookup | undefined): void {
  currentVault = lookup;
}

export function checkConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, vault: VaultLookup | undefined = currentVault): LoadedConfig {
  const steps = checkConfigSteps(raw, source, env, vault);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * checkConfig as steps: it yields between its passes over the document, so a reload of a large
 * configuration can leave the event loop free between them (config/steps.ts runInSteps); the result
 * is the same. (Run at once here, not through steps.ts: the operator loads this file and no more.)
 */
export function* checkConfigSteps(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, vault: VaultLookup | undefined = currentVault): Generator<void, LoadedConfig> {
  // Before anything copies the document: a `__proto__` key would become a prototype on the first copy.
  const unsafe = unsafeJson(raw);
  if (unsafe) throw new ConfigError(source, [unsafe]);
  yield;
  const result = validateConfig(raw);
  if (Array.isArray(result)) throw new ConfigError(source, result);
  yield;
  const errors: FieldError[] = [];
  const config = resolveRefs(result, undefined, { env, vault }, errors) as GatewayConfig;
  yield;
  errors.push(...semanticErrors(config), ...safetyErrors(config, result), ...governanceErrors(config));
  yield;
  errors.push(...mcpConfigErrors(config.mcp), ...vkMcpErrors(config.governance?.virtual_keys), ...webhookConfigErrors(config.webhooks), ...cacheConfigErrors(config, cacheConfigProblems), ...auditConfigErrors(config), ...otelConfigErrors(config, otelConfigProblems));
  if (errors.length) throw new ConfigError(source, errors);
  return { config, raw: result, warnings: [...unbuiltWarnings(config), ...safetyWarnings(config), ...otelWarnings(config)] };
}

/** Where resolveRefs is in the document: its JSON path is spelled out only for a reference (most strings are not). */
interface At {
  parent: At | undefined;
  key: string | number;
}

function pathOf(at: At | undefined): string {
  if (!at) return '';
  const up = pathOf(at.parent);
  return typeof at.key === 'number' ? `${up}[${at.key}]` : up ? `${up}.${at.key}` : at.key;
}

/**
 * `env.VAR` and `vault.<path>#<field>` in a secret-bearing section are read; one that cannot be is an
 * error naming the field and the variable or path (never a value). Elsewhere a well-formed vault
 * reference is refused rather than used as a literal: it would be sent or shown as written.
 */
function resolveRefs(value: unknown, at: At | undefined, refs: { env: NodeJS.ProcessEnv; vault: VaultLookup | undefined }, errors: FieldError[]): unknown {
  if (typeof value === 'string') {
    // Not a reference: read as written wherever it is (most strings; the path test is the cost).
    if (!isReference(value)) return value;
    const path = pathOf(at);
    if (!resolvesEnvRef(path)) {
      if (isVaultRef(value) && !('error' in parseVaultRef(value))) errors.push({ path, message: 'a vault reference is not read here: only provider keys and settings, virtual keys, auth settings, redis, store configs, MCP clients, webhooks and encryption_key take references' });
      return value;
    }
    const r = readRef(value, refs.env, refs.vault);
    if ('error' in r) errors.push({ path, message: r.error });
    return 'value' in r ? r.value : '';
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveRefs(v, { parent: at, key: i }, refs, errors));
  if (value && typeof value === 'object') {
    // A copy member by member (no `__proto__` key gets here: unsafeJson refused it first).
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = resolveRefs((value as Record<string, unknown>)[k], { parent: at, key: k }, refs, errors);
    return out;
  }
  return value;
}

/** Rules a JSON Schema cannot say: key names unique, custom providers complete, URLs parse. */
/** An HMAC key shorter than its hash gives the chain less strength than plain SHA-256 claims. */
function auditConfigErrors(config: GatewayConfig): FieldError[] {
  const key = config.audit_logs?.hmac_key;
  return key !== undefined && Buffer.byteLength(key) < 32 ? [{ path: 'audit_logs.hmac_key', message: 'must be at least 32 bytes (after its reference is read)' }] : [];
}

function semanticErrors(config: GatewayConfig): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const at = `providers.${name}`;
    const builtIn = Object.hasOwn(PROVIDER_KINDS, name) ? PROVIDER_KINDS[name] : undefined;
    if (!builtIn && !p.custom_provider_config) {
      errors.push({ path: at, message: `unknown provider '${name}': built-in providers are ${Object.keys(PROVIDER_KINDS).join(', ')}; a custom provider needs custom_provider_config.base_provider_type` });
    }
    const pool = p.network_config?.inference_pool;
    if (p.custom_provider_config && !p.network_config?.base_url && !pool) {
      errors.push({ path: `${at}.network_config.base_url`, message: 'is required for a custom provider (or network_config.inference_pool)' });
    }
    // A pool's servers are reached at their own addresses, so only a format with no per-key endpoint or signature fits.
    const format = builtIn?.format ?? p.custom_provider_config?.base_provider_type;
    if (pool && format !== 'openai') {
      errors.push({ path: `${at}.network_config.inference_pool`, message: `is for OpenAI-compatible model servers (vllm, or a custom provider with base_provider_type openai), not a provider of format '${format}'` });
    }
    if (builtIn?.format === 'azure') errors.push(...azureConfigErrors(at, p));
    const baseUrl = p.network_config?.base_url;
    if (baseUrl) {
      try {
        const u = new URL(baseUrl);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        errors.push({ path: `${at}.network_config.base_url`, message: 'must be an absolute http(s) URL' });
      }
    }
    const keyless = p.custom_provider_config?.is_key_less ?? builtIn?.keyless ?? false;
    const keys = p.keys ?? [];
    if (!keyless && keys.length === 0) errors.push({ path: `${at}.keys`, message: 'needs at least one key' });
    const names = new Set<string>();
    keys.forEach((k, i) => {
      if (names.has(k.name)) errors.push({ path: `${at}.keys[${i}].name`, message: `duplicate key name '${k.name}'` });
      names.add(k.name);
      if (builtIn?.format === 'vertex') errors.push(...vertexKeyErrors(k, `${at}.keys[${i}]`));
    });
    const nc = p.network_config;
    if (nc?.retry_backoff_initial_ms !== undefined && nc.retry_backoff_max_ms !== undefined && nc.retry_backoff_initial_ms > nc.retry_backoff_max_ms) {
      errors.push({ path: `${at}.network_config.retry_backoff_max_ms`, message: 'must be >= retry_backoff_initial_ms' });
    }
  }
  return errors;
}

function unbuiltWarnings(config: GatewayConfig): string[] {
  const warnings: string[] = [];
  const record = config as Record<string, unknown>;
  for (const section of UNBUILT_SECTIONS) {
    // Plugins are named one by one (safety.ts).
    if (section !== 'plugins' && record[section] !== undefined) warnings.push(`config field '${section}' is not supported yet and is ignored`);
  }
  for (const field of ['transcript_buffer_size', 'pool'] as const) {
    if (config.websocket?.[field] !== undefined) warnings.push(`config field 'websocket.${field}' is not supported yet and is ignored`);
  }
  const client = (config.client ?? {}) as Record<string, unknown>;
  for (const field of UNBUILT_CLIENT_FIELDS) {
    if (client[field] !== undefined) warnings.push(`config field 'client.${field}' is not supported yet and is ignored`);
  }
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    for (const field of ['concurrency_and_buffer_size', 'proxy_config', 'store_raw_request_response'] as const) {
      if (p[field] !== undefined) warnings.push(`config field 'providers.${name}.${field}' is not supported yet and is ignored`);
    }
    for (const field of ['insecure_skip_verify', 'ca_cert_pem', 'beta_header_overrides'] as const) {
      if (p.network_config?.[field] !== undefined) warnings.push(`config field 'providers.${name}.network_config.${field}' is not supported yet and is ignored`);
    }
  }
  return warnings;
}
