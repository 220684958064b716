// The compiled, immutable form of a GatewayConfig that the hot path reads. Everything that can be
// worked out once (URLs, headers, key pools, timeouts) is worked out here, never per request.
import { createHash } from 'node:crypto';
import type { GatewayConfig, ProviderConfig } from '../schema/gateway.ts';
import { PROVIDER_KINDS, type ProviderKind } from '../providers/catalog.ts';
import type { Operation } from '../unified/operations.ts';
import { poolFor } from '../upstream/pools.ts';
import { endpointSourceFor } from '../upstream/endpoint-sources.ts';
import { allowedPathMatcher } from '../providers/passthrough-paths.ts';
import { compileAzureKey } from '../providers/azure/key.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { GovernanceMemo, governanceSteps, type GovernanceRuntime } from './governance-runtime.ts';
import { runInSteps, runNow } from './steps.ts';
import { jsonDigestSteps } from './json-digest.ts';
import { keyId } from '../schema/key-id.ts';
import { ALLOWED_REQUEST_KEYS } from '../unified/operations.ts';
import { compileRules, type CompiledRules } from '../routing/rules.ts';
import { log } from '../log.ts';

export interface Snapshot {
  /** Short digest of the source config, shown in logs and metrics. */
  hash: string;
  providers: ReadonlyMap<string, ProviderRuntime>;
  convertTextToChat: boolean;
  maxBodyBytes: number;
  governance: GovernanceRuntime;
  /** Routing rules with their CEL programs compiled (once per snapshot). */
  routing: CompiledRules;
  config: GatewayConfig;
}

export const DEFAULTS = {
  timeoutSeconds: 30,
  streamIdleTimeoutSeconds: 60,
  maxRetries: 0,
  backoffInitialMs: 500,
  backoffMaxMs: 5000,
  maxConnections: 5000,
  maxBodyMb: 10,
  maxResponseBodyMb: 64,
  maxStreamEventMb: 8,
};

/**
 * What compileSnapshot keeps between the snapshots of one source: each provider's and virtual key's
 * compiled form, by the identity of its (immutable) resolved object, which an incremental check
 * (CheckMemo) hands again while the object is unchanged. A change to one resource compiles that one.
 */
export class CompileMemo {
  readonly providers = new WeakMap<object, ProviderRuntime>();
  readonly governance = new GovernanceMemo();
  /** Each resource's object's digest, by identity (the objects of a memoised check never change). */
  readonly digests = new WeakMap<object, string>();
  /** Providers compiled (not reused). */
  providersCompiled = 0;
}

export function compileSnapshot(config: GatewayConfig, memo?: CompileMemo): Snapshot {
  return runNow(snapshotSteps(config, memo));
}

/** compileSnapshot with the event loop free between its parts (a reload under traffic). */
export function compileSnapshotInSteps(config: GatewayConfig, memo?: CompileMemo): Promise<Snapshot> {
  return runInSteps(snapshotSteps(config, memo));
}

/** The compile, yielding between its passes: the digest, slices of the virtual keys, the routing rules. */
function* snapshotSteps(config: GatewayConfig, memo?: CompileMemo): Generator<void, Snapshot> {
  const providers = new Map<string, ProviderRuntime>();
  for (const [name, p] of Object.entries(config.providers ?? {})) {
    let rt = memo?.providers.get(p);
    if (rt?.name !== name) {
      rt = compileProvider(name, p);
      // An InferencePool's endpoint source is stopped once no snapshot names it: looked up afresh each time.
      if (memo && !rt.endpoints) {
        memo.providers.set(p, rt);
        memo.providersCompiled++;
      }
    }
    providers.set(name, rt);
  }
  yield;
  const hash = memo ? configHashReusing(config, memo.digests) : yield* configHashSteps(config);
  yield;
  const governance = yield* governanceSteps(config, memo?.governance);
  yield;
  const routing = compileRules(config.governance?.routing_rules ?? [], {
    warn: (message) => log.warn(message),
    resolveKeyName: (provider, keyName) => (config.providers?.[provider]?.keys?.some((k) => k.name === keyName) ? keyId(provider, keyName) : undefined),
  });
  return {
    hash,
    providers,
    convertTextToChat: config.client?.compat?.convert_text_to_chat ?? false,
    maxBodyBytes: (config.client?.max_request_body_size_mb ?? DEFAULTS.maxBodyMb) * 1024 * 1024,
    governance,
    routing,
    config,
  };
}

function compileProvider(name: string, p: ProviderConfig): ProviderRuntime {
  const custom = p.custom_provider_config;
  const base = (Object.hasOwn(PROVIDER_KINDS, name) ? PROVIDER_KINDS[name] : undefined) ?? PROVIDER_KINDS[custom?.base_provider_type ?? 'openai'];
  const operations = custom?.allowed_requests ? allowedOperations(base, custom.allowed_requests) : base.operations;
  const kind: ProviderKind = { ...base, operations };
  const region = base.format === 'bedrock' ? p.keys?.find((k) => k.bedrock_key_config)?.bedrock_key_config?.region : undefined;
  const azureEndpoint = base.format === 'azure' ? p.keys?.find((k) => k.azure_key_config)?.azure_key_config?.endpoint : undefined;
  const url = new URL(p.network_config?.base_url ?? azureEndpoint ?? (region ? `https://bedrock-runtime.${region}.amazonaws.com` : base.baseUrl));
  // As in the reference gateway, the API's version prefix is always appended to base_url's own path
  // (`https://api.groq.com/openai` + `/v1`), so configs carry over unchanged.
  const ownPath = url.pathname.replace(/\/+$/, '');
  const nc = p.network_config ?? {};
  return {
    name,
    kind,
    origin: url.origin,
    basePath: ownPath + kind.pathPrefix,
    // Null prototype: header names are the config's, never looked up through Object.prototype.
    extraHeaders: Object.assign(Object.create(null) as Record<string, string>, nc.extra_headers),
    keys: (p.keys ?? []).map((k) => ({
      id: keyId(name, k.name),
      name: k.name,
      value: k.value,
      models: k.models && k.models.length > 0 ? new Set(k.models) : null,
      weight: k.weight ?? 1,
      ...(k.bedrock_key_config && { bedrock: k.bedrock_key_config }),
      ...(k.vertex_key_config && { vertex: k.vertex_key_config }),
      ...(k.azure_key_config && { azure: compileAzureKey(k.azure_key_config) }),
    })),
    keyless: custom?.is_key_less ?? kind.keyless,
    operations,
    pathOverrides: custom?.request_path_overrides ?? {},
    timeoutMs: (nc.default_request_timeout_in_seconds ?? DEFAULTS.timeoutSeconds) * 1000,
    streamIdleTimeoutMs: (nc.stream_idle_timeout_in_seconds ?? DEFAULTS.streamIdleTimeoutSeconds) * 1000,
    maxResponseBytes: (nc.max_response_body_size_mb ?? DEFAULTS.maxResponseBodyMb) * 1024 * 1024,
    maxStreamEventBytes: (nc.max_stream_event_size_mb ?? DEFAULTS.maxStreamEventMb) * 1024 * 1024,
    maxRetries: nc.max_retries ?? DEFAULTS.maxRetries,
    backoffInitialMs: nc.retry_backoff_initial_ms ?? DEFAULTS.backoffInitialMs,
    backoffMaxMs: nc.retry_backoff_max_ms ?? DEFAULTS.backoffMaxMs,
    maxConnections: nc.max_conns_per_host ?? DEFAULTS.maxConnections,
    allowLinkLocal: nc.allow_link_local === true,
    pool: poolFor(url.origin, nc.max_conns_per_host ?? DEFAULTS.maxConnections, nc.allow_link_local === true),
    ...(nc.inference_pool && { endpoints: endpointSourceFor(nc.inference_pool) }),
    sendBackRawRequest: p.send_back_raw_request ?? false,
    sendBackRawResponse: p.send_back_raw_response ?? false,
    passthroughPaths: (p.passthrough_allowed_paths ?? []).map(allowedPathMatcher),
  };
}

/** Maps the reference gateway's `allowed_requests` names (the table's request types) onto unified operations. */
function allowedOperations(base: ProviderKind, allowed: Record<string, boolean>): ReadonlySet<Operation> {
  const out = new Set<Operation>();
  for (const op of base.operations) if (allowed[ALLOWED_REQUEST_KEYS[op]] ?? true) out.add(op);
  return out;
}


/** A one-way digest: safe to show in logs and metrics, and it changes when a key is rotated. */
function* configHashSteps(config: GatewayConfig): Generator<void, string> {
  return (yield* jsonDigestSteps(config)).slice(0, 12);
}

/**
 * The same kind of digest (a different value), made from each resource's object's digest, kept by
 * identity: a reload hashes the objects that changed and the document's outline, not all of it.
 * The outline is written out down to the resources' objects (2 levels: `providers.<name>`; 3:
 * `governance.virtual_keys[i]`); `#` never starts a JSON token, so a digest cannot pass for one.
 */
function configHashReusing(config: GatewayConfig, digests: WeakMap<object, string>): string {
  const out: string[] = [];
  const put = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'null');
      return;
    }
    if (depth >= 2 && !Array.isArray(v)) {
      let d = digests.get(v);
      if (d === undefined) digests.set(v, (d = createHash('sha256').update(JSON.stringify(v)).digest('base64')));
      out.push('#', d);
      return;
    }
    if (Array.isArray(v)) {
      out.push('[');
      for (const x of v) {
        put(x, depth + 1);
        out.push(',');
      }
      out.push(']');
      return;
    }
    out.push('{');
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      out.push(JSON.stringify(k), ':');
      put(x, depth + 1);
      out.push(',');
    }
    out.push('}');
  };
  put(config, 0);
  return createHash('sha256').update(out.join('')).digest('hex').slice(0, 12);
}
