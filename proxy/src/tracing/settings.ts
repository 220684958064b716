// What tracing does for one configuration: off, or where spans go, how they are sampled, what they
// carry. Pure: the `otel` plugin entry of config.json and the OpenTelemetry environment variables in,
// settings out. Config fields win over the variables; the variables fill what config leaves out
// (and alone turn tracing on, as the OTel SDKs' own autoconfiguration does). A bad value throws a
// TracingSettingsError naming the field or the variable.
import { OTEL_SAMPLERS, otelPluginEntry, type OtelPluginConfig } from '../schema/plugins.ts';

export type Sampler = (typeof OTEL_SAMPLERS)[number];

export interface TracingSettings {
  protocol: 'http/protobuf' | 'grpc';
  /** HTTP: the full traces URL; gRPC: http(s)://host:port. */
  endpoint: string;
  /** Sent to the collector: never logged or shown. */
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, parsed. */
  resource: Readonly<Record<string, string>>;
  sampler: Sampler;
  /** The ratio of the traceidratio samplers. */
  ratio: number;
  /** Prompt and answer text on the spans (off by default: content is often personal data). */
  captureContent: boolean;
  /** PEM file of the collector's CA. */
  caFile: string | undefined;
  /** gRPC without TLS. */
  insecure: boolean;
  /** Where they came from, for errors: `plugins[i].config` or `environment`. */
  source: string;
}

export class TracingSettingsError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.path = path;
  }
}

const DEFAULT_SERVICE = 'skybridge';

/** The tracing settings of a configuration and environment; undefined: tracing is off. */
export function tracingSettings(config: object, env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (isTrue(env.OTEL_SDK_DISABLED)) return undefined;
  const entry = otelPluginEntry(config);
  // An entry decides, enabled or not; without one the variables may turn tracing on.
  if (entry && !entry.enabled) return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return undefined;
  if (exporter && exporter !== 'otlp') throw new TracingSettingsError('OTEL_TRACES_EXPORTER', `'${exporter}' is not an exporter this gateway runs: use otlp or none`);
  const envEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!entry && !envEndpoint) return undefined;
  const c: OtelPluginConfig = entry?.config ?? {};
  const at = entry ? `plugins[${entry.index}].config` : 'environment';
  const protocol = c.protocol ? (c.protocol === 'grpc' ? 'grpc' : 'http/protobuf') : envProtocol(env);
  const endpoint = c.collector_url !== undefined ? configEndpoint(c.collector_url, protocol, `${at}.collector_url`) : envTracesEndpoint(env, protocol, entry ? `${at}.collector_url` : undefined);
  const samplerName = c.sampler ?? envSampler(env);
  return {
    protocol,
    endpoint,
    headers: { ...envHeaders(env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'), ...envHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'), ...c.headers },
    serviceName: c.service_name ?? (env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE),
    resource: envHeaders(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler: samplerName,
    ratio: c.sampler_arg ?? envRatio(env, samplerName),
    captureContent: c.capture_content ?? isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
    caFile: c.tls_ca_cert ?? (env.OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE || env.OTEL_EXPORTER_OTLP_CERTIFICATE || undefined),
    insecure: c.insecure ?? (isTrue(env.OTEL_EXPORTER_OTLP_TRACES_INSECURE) || isTrue(env.OTEL_EXPORTER_OTLP_INSECURE) || !endpoint.startsWith('https:')),
    source: at,
  };
}

/** Two settings that build the same exporter (a config reload that changed nothing else keeps it). */
export function sameSettings(a: TracingSettings | undefined, b: TracingSettings | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const isTrue = (v: string | undefined): boolean => v?.trim().toLowerCase() === 'true';

function envProtocol(env: NodeJS.ProcessEnv): TracingSettings['protocol'] {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const v = env[name]?.trim();
  if (!v || v === 'http/protobuf') return 'http/protobuf';
  if (v === 'grpc') return 'grpc';
  throw new TracingSettingsError(name, `'${v}' is not a protocol this gateway exports with: use http/protobuf or grpc`);
}

/** config.json's collector_url: HTTP gets /v1/traces when it names no path (as the reference does); gRPC takes host:port. */
function configEndpoint(url: string, protocol: TracingSettings['protocol'], path: string): string {
  if (!/^https?:\/\//.test(url)) {
    if (protocol !== 'grpc') throw new TracingSettingsError(path, "host:port is the gRPC form: give http(s)://host:port for protocol 'http'");
    return `http://${url}`;
  }
  return protocol === 'grpc' ? origin(url, path) : withTracesPath(url, path, false);
}

function envTracesEndpoint(env: NodeJS.ProcessEnv, protocol: TracingSettings['protocol'], configPath: string | undefined): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!traces && !base) throw new TracingSettingsError(configPath ?? 'OTEL_EXPORTER_OTLP_ENDPOINT', 'is required: set collector_url or OTEL_EXPORTER_OTLP_ENDPOINT');
  const name = traces ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const url = (traces || base)!.trim();
  if (!/^https?:\/\/[^\s/]+/.test(url)) throw new TracingSettingsError(name, 'must be an http(s) URL');
  if (protocol === 'grpc') return origin(url, name);
  // The signal-specific variable is the whole URL; the base one gets /v1/traces appended (OTLP spec).
  return traces ? withTracesPath(url, name, false) : withTracesPath(url, name, true);
}

function withTracesPath(url: string, path: string, append: boolean): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new TracingSettingsError(path, 'must be an absolute http(s) URL');
  }
  if (append) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/traces`;
  else if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/traces';
  return u.toString();
}

function origin(url: string, path: string): string {
  try {
    return new URL(url).origin;
  } catch {
    throw new TracingSettingsError(path, 'must be an absolute http(s) URL');
  }
}

function envSampler(env: NodeJS.ProcessEnv): Sampler {
  const v = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (!v) return 'parentbased_always_on';
  if ((OTEL_SAMPLERS as readonly string[]).includes(v)) return v as Sampler;
  throw new TracingSettingsError('OTEL_TRACES_SAMPLER', `'${v}' is not a sampler this gateway runs: use one of ${OTEL_SAMPLERS.join(', ')}`);
}

function envRatio(env: NodeJS.ProcessEnv, sampler: Sampler): number {
  const v = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!v || !sampler.endsWith('traceidratio')) return 1;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new TracingSettingsError('OTEL_TRACES_SAMPLER_ARG', `'${v}' must be a number from 0 to 1`);
  return n;
}

/** `k=v,k2=v2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES). Values are never echoed in errors. */
function envHeaders(v: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v?.trim()) return out;
  for (const part of v.split(',')) {
    if (!part.trim()) continue;
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    if (!key) throw new TracingSettingsError(name, 'must be a list of key=value pairs separated by commas');
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new TracingSettingsError(name, `the value of '${key}' is not valid percent-encoding`);
    }
    out[key] = value;
  }
  return out;
}
