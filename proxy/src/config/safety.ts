// Configuration rules that keep a document safe to run, beyond its shape: names that cannot reach
// the prototype chain, provider URLs that cannot reach cloud metadata services, management keys
// long enough once resolved, CORS origins that parse. Plus warnings for settings that are accepted
// but do nothing yet, each named, so no setting is silently ignored.
import type { GatewayConfig } from '../schema/gateway.ts';
import type { FieldError } from '../schema/validate.ts';
import { isReference } from '../schema/env-ref.ts';
import { blockedHost } from '../upstream/egress.ts';
import { BUILT_PLUGINS, pluginNotBuilt } from '../schema/plugins.ts';
import { HEADER_NAME, KEY_NAME, KEY_NAME_RULE, PROVIDER_NAME, PROVIDER_NAME_RULE, SAFE_ID, SAFE_ID_RULE, nameProblem } from '../schema/names.ts';

/** Management API keys shorter than this (once env.VAR is resolved) are refused. */
export const MIN_MANAGEMENT_KEY_LENGTH = 16;

const REGION = /^[a-z0-9-]{1,64}$/;

/** Every field of the governance section that holds a record id or a reference to one. */
const ID_FIELDS: Readonly<Record<string, readonly string[]>> = {
  budgets: ['id'],
  rate_limits: ['id'],
  customers: ['id', 'budget_id', 'rate_limit_id'],
  teams: ['id', 'customer_id', 'budget_id', 'rate_limit_id'],
  virtual_keys: ['id', 'team_id', 'customer_id', 'budget_id', 'rate_limit_id'],
  routing_rules: ['id', 'scope_id'],
  model_configs: ['id', 'budget_id', 'rate_limit_id'],
  pricing_overrides: ['id'],
  providers: ['budget_id', 'rate_limit_id'],
};

const asRecord = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** Why a provider URL may not be used, or undefined. */
export function urlProblem(value: string, allowLinkLocal: boolean, allowField: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // the URL check of load.ts names it
  }
  if (allowLinkLocal) return undefined;
  const blocked = blockedHost(url.hostname);
  return blocked ? `${blocked}; providers may not reach it unless ${allowField} is true` : undefined;
}

/** A CORS origin entry: `*`, or `scheme://host[:port]` (a trailing `/` is tolerated). */
export function originProblem(entry: string): string | undefined {
  if (entry === '*') return undefined;
  if (entry.includes('*')) return "wildcards other than a lone '*' are not supported: list each origin";
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return "must be '*' or an origin such as https://app.example.com";
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) origin';
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) return `must be an origin without path, query or credentials (${url.origin})`;
  return undefined;
}

/** Governance records looked at between two yields of safetyErrorSteps. */
const ITEMS_PER_STEP = 250;

export function safetyErrors(config: GatewayConfig, raw: GatewayConfig): FieldError[] {
  const steps = safetyErrorSteps(config, raw);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * safetyErrors as steps: it yields after each slice of a long governance list (10,000 virtual keys),
 * so a reload can leave the event loop free between them (config/steps.ts runInSteps); same errors, same order.
 */
export function* safetyErrorSteps(config: GatewayConfig, raw: GatewayConfig): Generator<void, FieldError[]> {
  const errors: FieldError[] = [];
  const check = (path: string, value: unknown, pattern: RegExp, rule: string) => {
    const problem = nameProblem(value, pattern, rule);
    if (problem) errors.push({ path, message: problem });
  };

  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const at = `providers.${name}`;
    check(at, name, PROVIDER_NAME, PROVIDER_NAME_RULE);
    const nc = p.network_config ?? {};
    const allowField = `${at}.network_config.allow_link_local`;
    const allow = nc.allow_link_local === true;
    if (nc.base_url) {
      const problem = urlProblem(nc.base_url, allow, allowField);
      if (problem) errors.push({ path: `${at}.network_config.base_url`, message: problem });
    }
    for (const header of Object.keys(nc.extra_headers ?? {})) {
      if (!HEADER_NAME.test(header)) errors.push({ path: `${at}.network_config.extra_headers.${header}`, message: 'is not a valid header name' });
    }
    (p.keys ?? []).forEach((k, i) => {
      const kat = `${at}.keys[${i}]`;
      check(`${kat}.name`, k.name, KEY_NAME, KEY_NAME_RULE);
      const endpoint = k.azure_key_config?.endpoint;
      if (endpoint) {
        const problem = urlProblem(endpoint, allow, allowField);
        if (problem) errors.push({ path: `${kat}.azure_key_config.endpoint`, message: problem });
      }
      // Regions become part of a host name (bedrock-runtime.<region>.amazonaws.com).
      for (const [cfg, region] of [['bedrock_key_config', k.bedrock_key_config?.region], ['vertex_key_config', k.vertex_key_config?.region]] as const) {
        if (region !== undefined && !REGION.test(region)) errors.push({ path: `${kat}.${cfg}.region`, message: 'must be a region name (lowercase letters, digits and -)' });
      }
    });
  }

  const g = asRecord(config.governance) ?? {};
  for (const [section, fields] of Object.entries(ID_FIELDS)) {
    const list = g[section];
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
      const r = asRecord(list[i]);
      if (!r) continue;
      // The path is spelled out only for a problem: thousands of objects pass on every reload.
      for (const f of fields) {
        const problem = typeof r[f] === 'string' ? nameProblem(r[f], SAFE_ID, SAFE_ID_RULE) : undefined;
        if (problem) errors.push({ path: `governance.${section}[${i}].${f}`, message: problem });
      }
      if (section === 'virtual_keys' && Array.isArray(r.provider_configs)) {
        r.provider_configs.forEach((pc: unknown, j: number) => {
          const c = asRecord(pc);
          for (const f of ['budget_id', 'rate_limit_id']) {
            const problem = c && typeof c[f] === 'string' ? nameProblem(c[f], SAFE_ID, SAFE_ID_RULE) : undefined;
            if (problem) errors.push({ path: `governance.virtual_keys[${i}].provider_configs[${j}].${f}`, message: problem });
          }
        });
      }
    }
  }

  // The minimum length applies to what callers will send, not to an env.VAR reference.
  for (const [at, auth, rawAuth] of [
    ['governance.auth_config', config.governance?.auth_config, raw.governance?.auth_config],
    ['auth_config', config.auth_config, raw.auth_config],
  ] as const) {
    (auth?.api_keys ?? []).forEach((key, i) => {
      if (key.length >= MIN_MANAGEMENT_KEY_LENGTH) return;
      const ref = rawAuth?.api_keys?.[i];
      const from = ref !== undefined && isReference(ref) ? ` (the value of ${ref} has ${key.length})` : '';
      errors.push({ path: `${at}.api_keys[${i}]`, message: `must be at least ${MIN_MANAGEMENT_KEY_LENGTH} characters${from}` });
    });
  }

  (config.client?.allowed_origins ?? []).forEach((o, i) => {
    const problem = originProblem(o);
    if (problem) errors.push({ path: `client.allowed_origins[${i}]`, message: problem });
  });

  const plugins = (config as Record<string, unknown>).plugins;
  if (Array.isArray(plugins)) {
    plugins.forEach((p: unknown, i) => {
      const name = asRecord(p)?.name;
      if (name !== undefined) check(`plugins[${i}].name`, name, SAFE_ID, SAFE_ID_RULE);
    });
  }
  return errors;
}

const hasCredentials = (value: string | undefined): boolean => {
  if (!value) return false;
  try {
    const u = new URL(value);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
};

export function safetyWarnings(config: GatewayConfig): string[] {
  const warnings: string[] = [];
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    const at = `providers.${name}`;
    const nc = p.network_config ?? {};
    if (nc.allow_link_local) warnings.push(`${at}.network_config.allow_link_local is true: this provider may reach link-local addresses and cloud metadata services`);
    if (hasCredentials(nc.base_url)) warnings.push(`config field '${at}.network_config.base_url' carries user:password@ credentials, which are not sent upstream: set an authorization header in network_config.extra_headers instead`);
    (p.keys ?? []).forEach((k, i) => {
      const kat = `${at}.keys[${i}]`;
      if (hasCredentials(k.azure_key_config?.endpoint)) warnings.push(`config field '${kat}.azure_key_config.endpoint' carries user:password@ credentials, which are not sent upstream`);
      if (k.use_for_batch_api !== undefined) warnings.push(`config field '${kat}.use_for_batch_api' is not supported yet and is ignored`);
      for (const f of ['role_arn', 'external_id', 'session_name', 'batch_s3_config'] as const) {
        if (k.bedrock_key_config?.[f] !== undefined) warnings.push(`config field '${kat}.bedrock_key_config.${f}' is not supported yet and is ignored`);
      }
    });
  }
  for (const [at, auth] of [['governance.auth_config', config.governance?.auth_config], ['auth_config', config.auth_config]] as const) {
    if (auth?.disable_auth_on_inference !== undefined) warnings.push(`config field '${at}.disable_auth_on_inference' is not supported yet and is ignored (inference auth follows client.enforce_auth_on_inference)`);
  }
  (config.governance?.providers ?? []).forEach((p, i) => {
    for (const f of ['send_back_raw_request', 'send_back_raw_response', 'store_raw_request_response'] as const) {
      if (p[f] !== undefined) warnings.push(`config field 'governance.providers[${i}].${f}' is not supported yet and is ignored (set it on providers.${p.name})`);
    }
  });
  const plugins = (config as Record<string, unknown>).plugins;
  if (Array.isArray(plugins)) {
    for (const p of plugins) {
      const name = asRecord(p)?.name;
      if (typeof name === 'string' && !BUILT_PLUGINS.has(name)) warnings.push(pluginNotBuilt(name));
    }
  } else if (plugins !== undefined) {
    warnings.push("config field 'plugins' is not supported yet and is ignored");
  }
  return warnings;
}
