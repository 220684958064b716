// The plugins this gateway runs, by the name `plugins[]` gives them. A list of names, not the
// registry (plugins.ts, which builds the stages): the config check tells a built plugin from one
// that is only stored without loading the cache and logging stages, and so does the operator.
// test/unit/plugin-names.test.ts holds the registry to this list. The `otel` plugin's schema lives
// here too (not in a file of its own): the operator loads this floor and keeps to a small count of files.
import { Type, type Static } from '@sinclair/typebox';
import { SEMANTIC_CACHE_PLUGIN } from './cache.ts';

export const OTEL_PLUGIN = 'otel';

/**
 * In the registry's order (the management API lists them so), then `otel`: tracing is not a stage
 * among the others but wraps them all (builtin-stages.ts), so it has no registry entry.
 */
export const BUILT_PLUGINS: ReadonlySet<string> = new Set(['logging', SEMANTIC_CACHE_PLUGIN, OTEL_PLUGIN]);

/** Built plugins that run as a builtin, not from the registry. */
export const BUILTIN_RUN_PLUGINS: ReadonlySet<string> = new Set([OTEL_PLUGIN]);

export function pluginNotBuilt(name: string): string {
  return `plugin '${name}' is not built into this gateway: its configuration is kept, but nothing runs`;
}

/** The OTel sampler names of OTEL_TRACES_SAMPLER this gateway runs. */
export const OTEL_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/**
 * `plugins[].config` of the `otel` plugin: the reference gateway's shape (service_name,
 * collector_url, trace_type, protocol, headers, tls_ca_cert, insecure, metrics_*), plus the
 * sampler and content capture, which the reference leaves out. Unlike the reference, collector_url
 * and protocol may be left to the OTEL_EXPORTER_OTLP_* environment variables.
 */
export const OtelPluginConfigSchema = Type.Object(
  {
    service_name: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'service.name of the spans (default: OTEL_SERVICE_NAME, else skybridge).' })),
    collector_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: '^(https?://[^\\s]+|[^:/\\s]+:\\d+)$',
        description: 'OTLP endpoint: http(s)://host:port[/path] (HTTP: /v1/traces when no path is given) or host:port (gRPC).',
      }),
    ),
    trace_type: Type.Optional(Type.Literal('otel', { description: 'The reference\'s only trace type.' })),
    protocol: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('grpc')], { description: 'http: OTLP HTTP/protobuf; grpc: OTLP gRPC (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http).' })),
    headers: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$' }), Type.String({ maxLength: 8192 }), {
        description: 'Headers sent to the collector (env.VAR and vault references allowed); never shown.',
      }),
    ),
    tls_ca_cert: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'PEM file of the CA that signed the collector\'s certificate.' })),
    insecure: Type.Optional(Type.Boolean({ description: 'gRPC: plaintext instead of TLS (default: plaintext for http:// and host:port, TLS for https://).' })),
    sampler: Type.Optional(Type.Union(OTEL_SAMPLERS.map((s) => Type.Literal(s)), { description: 'As OTEL_TRACES_SAMPLER (default parentbased_always_on).' })),
    sampler_arg: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'The ratio of the traceidratio samplers (default 1).' })),
    capture_content: Type.Optional(Type.Boolean({ description: 'Record prompts and answers on the spans (default false).' })),
    metrics_enabled: Type.Optional(Type.Boolean()),
    metrics_endpoint: Type.Optional(Type.String({ maxLength: 2048 })),
    metrics_push_interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 300 })),
  },
  { additionalProperties: false },
);

export type OtelPluginConfig = Static<typeof OtelPluginConfigSchema>;

/** The first `otel` entry of `plugins[]` and its index (one is read; a second is an error). */
export function otelPluginEntry(config: object): { index: number; enabled: boolean; config: OtelPluginConfig } | undefined {
  const plugins = pluginsOf(config);
  const index = plugins.findIndex((p) => (p as { name?: unknown } | null)?.name === OTEL_PLUGIN);
  if (index < 0) return undefined;
  const p = plugins[index] as { enabled?: unknown; config?: unknown };
  return { index, enabled: p.enabled === true, config: (p.config ?? {}) as OtelPluginConfig };
}

/** A document's `plugins` list (anything else: none). */
function pluginsOf(config: object): unknown[] {
  const plugins = (config as { plugins?: unknown }).plugins;
  return Array.isArray(plugins) ? plugins : [];
}

interface PluginFieldError {
  path: string;
  message: string;
}

/** The `otel` entries' config against its schema (`validConfig` is the schema's validator), and what only one entry may say. */
export function otelConfigErrors(config: object, validConfig: (v: unknown) => PluginFieldError[] | undefined): PluginFieldError[] {
  const errors: PluginFieldError[] = [];
  let seen = false;
  pluginsOf(config).forEach((p: unknown, i) => {
    const entry = p as { name?: unknown; config?: unknown } | null;
    if (entry?.name !== OTEL_PLUGIN) return;
    if (seen) errors.push({ path: `plugins[${i}].name`, message: `only one '${OTEL_PLUGIN}' plugin may be configured` });
    seen = true;
    const at = `plugins[${i}].config`;
    for (const e of validConfig(entry.config ?? {}) ?? []) errors.push({ path: e.path ? `${at}.${e.path}` : at, message: e.message });
  });
  return errors;
}

/** Fields of the reference's otel config this gateway accepts and does not act on. */
export function otelWarnings(config: object): string[] {
  const entry = otelPluginEntry(config);
  if (!entry) return [];
  const at = `plugins[${entry.index}].config`;
  const out: string[] = [];
  for (const f of ['metrics_enabled', 'metrics_endpoint', 'metrics_push_interval'] as const) {
    if (entry.config[f] !== undefined) out.push(`config field '${at}.${f}' is not supported yet and is ignored (metrics are scraped from /metrics)`);
  }
  return out;
}
