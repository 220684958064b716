// Reading config.json: parse, validate against the schema, resolve env.VAR references, and list
// what the file asks for that is not built yet. Every problem is reported with its JSON path.
import { readFileSync } from 'node:fs';
import { mcpConfigErrors, vkMcpErrors } from '../schema/mcp.ts';
import { GatewayConfigSchema, UNBUILT_CLIENT_FIELDS, UNBUILT_SECTIONS, type GatewayConfig } from '../schema/gateway.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { PROVIDER_KINDS } from '../providers/catalog.ts';
import { governanceErrors } from '../governance/validate.ts';
import { azureConfigErrors } from '../providers/azure/key.ts';
import { vertexFromEnv, vertexKeyErrors } from '../providers/vertex/config.ts';
import { unsafeJson } from '../schema/names.ts';
import { safetyErrors, safetyWarnings } from './safety.ts';
import { webhookConfigErrors } from '../schema/webhooks.ts';
import { cacheConfigErrors, SemanticCacheConfigSchema } from '../schema/cache.ts';
import { readEnvRef } from '../schema/env-ref.ts';

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

export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '(file)', message: (err as Error).message }]);
  }
  return parseConfig(text, file, env);
}

export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(source, [{ path: '(root)', message: `not valid JSON: ${(err as Error).message}` }]);
  }
  return checkConfig(raw, source, env);
}

export function checkConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  // Before anything copies the document: a `__proto__` key would become a prototype on the first copy.
  const unsafe = unsafeJson(raw);
  if (unsafe) throw new ConfigError(source, [unsafe]);
  const result = validateConfig(raw);
  if (Array.isArray(result)) throw new ConfigError(source, result);
  const errors: FieldError[] = [];
  const config = resolveEnvRefs(result, '', env, errors) as GatewayConfig;
  errors.push(...semanticErrors(config), ...safetyErrors(config, result), ...governanceErrors(config), ...mcpConfigErrors(config.mcp), ...vkMcpErrors(config.governance?.virtual_keys), ...webhookConfigErrors(config.webhooks), ...cacheConfigErrors(config, cacheConfigProblems));
  if (errors.length) throw new ConfigError(source, errors);
  return { config, raw: result, warnings: [...unbuiltWarnings(config), ...safetyWarnings(config)] };
}

/** Where secret material lives: `env.VAR` there reads the environment. */
const ENV_REF_ROOTS = ['providers', 'governance.virtual_keys', 'governance.auth_config', 'auth_config', 'redis', 'logs_store.config', 'vector_store.config', 'mcp.client_configs', 'webhooks', 'encryption_key'];

/** Whether a string at this document path is read as an `env.VAR` reference. */
export const resolvesEnvRef = (path: string): boolean => ENV_REF_ROOTS.some((r) => path.startsWith(r));

/** `env.VAR` in a secret-bearing section reads the environment; a missing variable is an error. */
function resolveEnvRefs(value: unknown, path: string, env: NodeJS.ProcessEnv, errors: FieldError[]): unknown {
  if (typeof value === 'string') {
    if (!resolvesEnvRef(path)) return value;
    const ref = readEnvRef(value, env);
    if ('missing' in ref) errors.push({ path, message: `environment variable ${ref.missing} is not set` });
    return 'value' in ref ? ref.value : '';
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnvRefs(v, `${path}[${i}]`, env, errors));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, resolveEnvRefs(v, path ? `${path}.${k}` : k, env, errors)]),
    );
  }
  return value;
}

/** Rules a JSON Schema cannot say: key names unique, custom providers complete, URLs parse. */
function semanticErrors(config: GatewayConfig): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const at = `providers.${name}`;
    const builtIn = Object.hasOwn(PROVIDER_KINDS, name) ? PROVIDER_KINDS[name] : undefined;
    if (!builtIn && !p.custom_provider_config) {
      errors.push({ path: at, message: `unknown provider '${name}': built-in providers are ${Object.keys(PROVIDER_KINDS).join(', ')}; a custom provider needs custom_provider_config.base_provider_type` });
    }
    if (p.custom_provider_config && !p.network_config?.base_url) {
      errors.push({ path: `${at}.network_config.base_url`, message: 'is required for a custom provider' });
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

/** Providers from the usual environment variables, for running without a config.json. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const providers: NonNullable<GatewayConfig['providers']> = {};
  for (const [name, kind] of Object.entries(PROVIDER_KINDS)) {
    // A Vertex key is a project, a region and credentials, not one variable.
    if (name === 'vertex') {
      const vertex = vertexFromEnv(env);
      if (vertex) providers.vertex = vertex;
      continue;
    }
    const key = env[kind.envKey] ?? (name === 'gemini' ? env.GOOGLE_API_KEY : undefined);
    const baseUrl = env[`${name.toUpperCase()}_BASE_URL`] ?? (name === 'azure' ? env.AZURE_OPENAI_ENDPOINT : undefined);
    if (!key && !(kind.keyless && baseUrl)) continue;
    // Azure has no default endpoint: without the resource's, there is nothing to call.
    if (name === 'azure' && !baseUrl) continue;
    providers[name] = {
      keys: key ? [{ name: `${name}-env`, value: key, models: [], weight: 1 }] : [],
      ...(baseUrl ? { network_config: { base_url: baseUrl } } : {}),
    };
  }
  return { providers };
}
