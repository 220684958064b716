// Gateway-wide settings from the environment, for Kubernetes mode: the operator renders only what
// custom resources describe (providers, keys, rules...), while settings of the deployment itself —
// requiring virtual keys, protecting /api, the MCP tool manager — come from the Helm chart as
// environment variables (credentials by secretKeyRef, never in a ConfigMap) and are merged into
// every rendered document before it is validated, so they hold for each snapshot served.
//
//   SKYBRIDGE_CLIENT          JSON object merged over the document's `client` section
//                             (enforce_auth_on_inference, allowed_origins, webhook_config, ...)
//   SKYBRIDGE_ADMIN_USERNAME  governance.auth_config.admin_username  } set together; any of the three
//   SKYBRIDGE_ADMIN_PASSWORD  governance.auth_config.admin_password  } turns management auth on
//   SKYBRIDGE_ADMIN_API_KEYS  governance.auth_config.api_keys, comma- or newline-separated
//   SKYBRIDGE_MCP             JSON object: mcp.tool_manager_config and mcp.tool_sync_interval
//   SKYBRIDGE_SKILLS          JSON object: the `skills` section (who may read /skills/*, limits)
//   SKYBRIDGE_AUDIT_LOGS      JSON object: audit_logs.disabled and audit_logs.retention_days
//   SKYBRIDGE_AUDIT_HMAC_KEY  audit_logs.hmac_key (from a Secret: never in the JSON above)
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { AuditLogsConfigSchema, ClientConfigSchema, SkillsConfigSchema, type AuditLogsConfig, type ClientConfig, type SkillsConfig } from '../schema/gateway.ts';
import { GO_DURATION_PATTERN, McpToolManagerConfigSchema } from '../schema/mcp.ts';
import type { AuthConfig } from '../schema/governance.ts';
import { validator } from '../schema/validate.ts';
import { checkConfig, ConfigError } from './check.ts';

/** The `mcp` settings a deployment owns (clients are MCPClient resources). */
export const McpSettingsSchema = Type.Object(
  {
    tool_manager_config: Type.Optional(McpToolManagerConfigSchema),
    tool_sync_interval: Type.Optional(Type.String({ pattern: GO_DURATION_PATTERN })),
  },
  { additionalProperties: false },
);

/** The `audit_logs` settings a deployment sets as JSON: all but the key, which comes from a Secret alone. */
export const AuditSettingsSchema = Type.Object(
  { disabled: AuditLogsConfigSchema.properties.disabled, retention_days: AuditLogsConfigSchema.properties.retention_days },
  { additionalProperties: false },
);

export interface GatewaySettings {
  client?: ClientConfig;
  /**
   * With `env.VAR` references: the credentials resolve against `env`, so the document (and /api/config)
   * holds none. The names carry a random suffix: a rendered document's own `env.VAR` references (from
   * custom resources) resolve against the same map and must not be able to name the admin password.
   */
  auth?: AuthConfig;
  mcp?: { tool_manager_config?: Record<string, unknown>; tool_sync_interval?: string };
  skills?: SkillsConfig;
  /** `hmac_key` as an env reference (resolved against `env`, as the admin credentials are). */
  audit?: AuditLogsConfig;
  /** What the references in `auth` and `audit` resolve against. */
  env: Record<string, string>;
}

/** Which variable a path of the merged document came from, for error messages. */
function variableOf(path: string): string {
  if (path.startsWith('client')) return 'SKYBRIDGE_CLIENT';
  if (path.startsWith('mcp')) return 'SKYBRIDGE_MCP';
  if (path.startsWith('skills')) return 'SKYBRIDGE_SKILLS';
  if (path.startsWith('audit_logs.hmac_key')) return 'SKYBRIDGE_AUDIT_HMAC_KEY';
  if (path.startsWith('audit_logs')) return 'SKYBRIDGE_AUDIT_LOGS';
  if (path.includes('admin_username')) return 'SKYBRIDGE_ADMIN_USERNAME';
  if (path.includes('admin_password')) return 'SKYBRIDGE_ADMIN_PASSWORD';
  if (path.includes('api_keys')) return 'SKYBRIDGE_ADMIN_API_KEYS';
  return 'the SKYBRIDGE_* settings';
}

function json<T>(name: string, text: string, check: (v: unknown) => ReturnType<ReturnType<typeof validator>>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${name} must be a JSON object, got text that does not parse`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${name} must be a JSON object`);
  const checked = check(value);
  if (Array.isArray(checked)) throw new Error(`${name}: ${checked.map((e) => `${e.path || '(root)'}: ${e.message}`).join('; ')}`);
  return checked as T;
}

const checkClient = validator(ClientConfigSchema);
const checkMcp = validator(McpSettingsSchema);
const checkSkills = validator(SkillsConfigSchema);
const checkAudit = validator(AuditSettingsSchema);

/**
 * Reads and validates the settings (a bad value throws, naming the variable and the field: start-up
 * fails rather than serving without the protection it was told to apply). Undefined when none is set.
 */
export function gatewaySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewaySettings | undefined {
  const settings: GatewaySettings = { env: {} };
  if (env.SKYBRIDGE_CLIENT) settings.client = json<ClientConfig>('SKYBRIDGE_CLIENT', env.SKYBRIDGE_CLIENT, checkClient);
  if (env.SKYBRIDGE_MCP) settings.mcp = json<GatewaySettings['mcp']>('SKYBRIDGE_MCP', env.SKYBRIDGE_MCP, checkMcp);
  if (env.SKYBRIDGE_SKILLS) settings.skills = json<SkillsConfig>('SKYBRIDGE_SKILLS', env.SKYBRIDGE_SKILLS, checkSkills);
  if (env.SKYBRIDGE_AUDIT_LOGS) {
    if (/"hmac_key"/.test(env.SKYBRIDGE_AUDIT_LOGS)) throw new Error('SKYBRIDGE_AUDIT_LOGS: hmac_key is a secret: set it with SKYBRIDGE_AUDIT_HMAC_KEY from a Secret (the chart value gateway.auditLogs.hmacKeySecret), never in this JSON');
    settings.audit = json<AuditLogsConfig>('SKYBRIDGE_AUDIT_LOGS', env.SKYBRIDGE_AUDIT_LOGS, checkAudit);
  }
  const hmacKey = env.SKYBRIDGE_AUDIT_HMAC_KEY || undefined;
  const user = env.SKYBRIDGE_ADMIN_USERNAME || undefined;
  const pass = env.SKYBRIDGE_ADMIN_PASSWORD || undefined;
  if ((user === undefined) !== (pass === undefined)) throw new Error('SKYBRIDGE_ADMIN_USERNAME and SKYBRIDGE_ADMIN_PASSWORD must be set together (Basic auth needs both)');
  const keys = (env.SKYBRIDGE_ADMIN_API_KEYS ?? '').split(/[,\n]/).map((k) => k.trim()).filter(Boolean);
  const suffix = randomBytes(12).toString('hex');
  const ref = (name: string, value: string): string => {
    settings.env[`${name}_${suffix}`] = value;
    return `env.${name}_${suffix}`;
  };
  if (hmacKey !== undefined) settings.audit = { ...settings.audit, hmac_key: ref('SKYBRIDGE_AUDIT_HMAC_KEY', hmacKey) };
  if (user !== undefined || keys.length > 0) {
    const auth: AuthConfig = { is_enabled: true };
    if (user !== undefined && pass !== undefined) {
      auth.admin_username = ref('SKYBRIDGE_ADMIN_USERNAME', user);
      auth.admin_password = ref('SKYBRIDGE_ADMIN_PASSWORD', pass);
    }
    if (keys.length > 0) auth.api_keys = keys.map((k, i) => ref(`SKYBRIDGE_ADMIN_API_KEYS_${i}`, k));
    settings.auth = auth;
  }
  if (!settings.client && !settings.mcp && !settings.skills && !settings.auth && !settings.audit) return undefined;
  // The semantic rules too (an API key shorter than 16 characters...), once, against an empty document.
  const probe = withGatewaySettings({ document: {}, env: {} }, settings);
  try {
    checkConfig(probe.document, 'the SKYBRIDGE_* settings', probe.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new Error(`invalid gateway settings in the environment:\n${err.errors.map((e) => `  - ${variableOf(e.path)}: ${e.path}: ${e.message}`).join('\n')}`);
  }
  return settings;
}

/** The deployment settings variables: read with --kube-namespace only. */
const SETTINGS_VARIABLES = ['SKYBRIDGE_CLIENT', 'SKYBRIDGE_ADMIN_USERNAME', 'SKYBRIDGE_ADMIN_PASSWORD', 'SKYBRIDGE_ADMIN_API_KEYS', 'SKYBRIDGE_MCP', 'SKYBRIDGE_SKILLS', 'SKYBRIDGE_AUDIT_LOGS', 'SKYBRIDGE_AUDIT_HMAC_KEY'];

/**
 * Outside Kubernetes, config.json holds these sections and the variables are not read; a deployment
 * that sets them (a Helm-style env file reused for `docker run`) would otherwise believe /api is
 * protected when it is not. The warning for the start-up log, or undefined when none is set.
 */
export function ignoredSettingsWarning(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = SETTINGS_VARIABLES.filter((v) => env[v]);
  if (!set.length) return undefined;
  const auth = set.some((v) => v.startsWith('SKYBRIDGE_ADMIN_'));
  return `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but read only with --kube-namespace and ignored here: ${auth ? '/api is NOT protected by them; ' : ''}put the same settings in config.json (governance.auth_config, client, mcp, skills, audit_logs) instead`;
}

let cached: { settings: GatewaySettings | undefined } | undefined;

/** The process's settings, read once (main.ts reads them first, so a bad value ends the start there). */
export function processGatewaySettings(): GatewaySettings | undefined {
  cached ??= { settings: gatewaySettingsFromEnv() };
  return cached.settings;
}

/**
 * The document with the settings merged in (the settings win over what it says) and the environment
 * its references resolve against. Without settings, the input as it is.
 */
export function withGatewaySettings<T extends { document: unknown; env: Record<string, string> }>(doc: T, settings: GatewaySettings | undefined = processGatewaySettings()): T {
  if (!settings || doc.document === null || typeof doc.document !== 'object' || Array.isArray(doc.document)) return doc;
  const d = doc.document as Record<string, unknown>;
  const section = (key: string): Record<string, unknown> => {
    const v = d[key];
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  };
  const document: Record<string, unknown> = { ...d };
  if (settings.client) document.client = { ...section('client'), ...settings.client };
  if (settings.mcp) document.mcp = { ...section('mcp'), ...settings.mcp };
  if (settings.skills) document.skills = { ...section('skills'), ...settings.skills };
  if (settings.auth) document.governance = { ...section('governance'), auth_config: settings.auth };
  if (settings.audit) document.audit_logs = { ...section('audit_logs'), ...settings.audit };
  return { ...doc, document, env: { ...doc.env, ...settings.env } };
}
