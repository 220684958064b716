// What files and batches share: they are a provider's stored resources, not model calls, so the
// provider is named by the client (`provider` query parameter, form or body field, or the
// `x-model-provider` header) or is the first configured provider that offers the operation; the
// call goes out once, with one stable key, and the answer comes back as the provider sent it, JSON
// with `extra_fields` added, or bytes relayed as they arrive.
import type { Exchange } from '../http/exchange.ts';
import { sendError, sendJsonText } from '../http/respond.ts';
import type { ProviderKey, ProviderRuntime } from '../config/snapshot.ts';
import type { Operation } from '../providers/catalog.ts';
import type { UpstreamRequest } from '../providers/adapter.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { sendUpstream, type UpstreamAnswer } from '../pipeline/upstream-call.ts';
import { GatewayError, requireOperation } from '../unified/errors.ts';
import { appendMember } from '../unified/json-splice.ts';
import { modelLabel, requestCount, requestTime } from '../metrics/metrics.ts';
import { callerOf, governProviderCall } from '../governance/provider-call.ts';

export type ResourceOperation = Extract<Operation, 'files' | 'batches'>;

/** Query parameters that choose the provider; they are the gateway's, never forwarded. */
export const PROVIDER_PARAMS = ['provider', 'x-model-provider'] as const;

/** The provider named in the request (`fromBody` first: a form or JSON body field), if any. */
export function namedProvider(ex: Exchange, fromBody?: unknown): string | undefined {
  if (typeof fromBody === 'string' && fromBody) return fromBody;
  const q = ex.query();
  for (const p of PROVIDER_PARAMS) {
    const v = q.get(p);
    if (v) return v;
  }
  const h = ex.req.headers['x-model-provider'];
  return typeof h === 'string' && h ? h : undefined;
}

/** The named provider, or else the first configured one offering the operation. */
export function chooseProvider(ex: Exchange, operation: ResourceOperation, name: string | undefined): ProviderRuntime {
  if (name) {
    const provider = ex.snapshot.providers.get(name);
    if (!provider) throw new GatewayError(400, `provider '${name}' is not configured on this gateway`, { param: 'provider', code: 'provider_not_configured' });
    requireOperation(provider, operation);
    return provider;
  }
  // Unnamed: the first that offers it among those the caller's virtual key allows.
  const vk = callerOf(ex);
  for (const provider of ex.snapshot.providers.values()) {
    if (provider.operations.has(operation) && (!vk || vk.grants.some((g) => g.provider === provider.name))) return provider;
  }
  throw new GatewayError(400, `no configured provider offers ${operation}; name one with the 'provider' query parameter`, {
    type: 'unsupported_operation',
    code: 'unsupported_operation',
    param: 'provider',
  });
}

/**
 * Files live in the account of the key that uploaded them, so every file and batch call uses the
 * same key: the first enabled one (among those the caller's virtual key allows), preferring a key
 * not limited to some models.
 */
function resourceKey(provider: ProviderRuntime, keyIds: ReadonlySet<string> | undefined): ProviderKey | undefined {
  const enabled = provider.keys.filter((k) => k.weight > 0 && (!keyIds || keyIds.has(k.id)));
  const key = enabled.find((k) => k.models === null) ?? enabled[0];
  if (!key && !provider.keyless) {
    throw new GatewayError(500, `provider '${provider.name}' has no enabled keys`, { provider: provider.name, code: 'no_keys' });
  }
  return key;
}

/**
 * One call, no retries: an upload or a create repeated after a lost answer would happen twice.
 * Governed first: the caller's key must allow the provider, and the request counts against its limits.
 */
export async function callProvider(ex: Exchange, provider: ProviderRuntime, up: UpstreamRequest): Promise<UpstreamAnswer> {
  const governed = await governProviderCall(ex, provider.name, up.requestType);
  const body = up.body === undefined ? undefined : JSON.stringify(up.body);
  return sendUpstream(provider, ADAPTERS[provider.kind.format], resourceKey(provider, governed.keyIds), up, body, ex.signal);
}

/** The client's query string without the gateway's own parameters, `?`-prefixed when not empty. */
export function forwardedQuery(ex: Exchange): string {
  const q = ex.query();
  for (const p of PROVIDER_PARAMS) q.delete(p);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface ResourceAnswer {
  provider: ProviderRuntime;
  answer: UpstreamAnswer;
  /** Relay the body as bytes (file content) instead of JSON with extra_fields. */
  raw?: boolean;
}

/** Runs one resource call and answers it; errors in the gateway shape; metrics either way. */
export async function serveResource(
  ex: Exchange,
  operation: ResourceOperation,
  requestType: string,
  call: () => Promise<ResourceAnswer>,
): Promise<void> {
  let provider = 'none';
  let status = 200;
  try {
    // Files and batches name no model, so routing and model limits do not apply. The caller is
    // checked before the body is read; its provider permissions and limits in callProvider.
    callerOf(ex);
    const done = await call();
    provider = done.provider.name;
    if (done.raw) await relayBytes(ex, done.answer);
    else await sendWithExtra(ex, done, requestType);
  } catch (err) {
    const e = sendError(ex.res, err, { request_type: requestType });
    status = e.status;
    if (e.provider) provider = e.provider;
  } finally {
    const labels = [operation, provider, modelLabel(''), String(status)] as const;
    requestCount(...labels).inc();
    requestTime(...labels).observe((performance.now() - ex.started) / 1000);
  }
}

async function sendWithExtra(ex: Exchange, done: ResourceAnswer, requestType: string): Promise<void> {
  const text = await done.answer.text();
  const extra = { provider: done.provider.name, request_type: requestType, latency: Math.round(performance.now() - ex.started) };
  const spliced = appendMember(text, 'extra_fields', extra);
  if (spliced === undefined) {
    throw new GatewayError(502, `provider '${done.provider.name}' returned a body that is not a JSON object`, {
      type: 'upstream_invalid_response',
      provider: done.provider.name,
      upstream: true,
    });
  }
  sendJsonText(ex.res, done.answer.status, spliced);
}

const RELAYED = ['content-type', 'content-length', 'content-disposition'];

async function relayBytes(ex: Exchange, answer: UpstreamAnswer): Promise<void> {
  const headers: Record<string, string> = {};
  for (const h of RELAYED) {
    const v = answer.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  ex.res.writeHead(answer.status, headers);
  for await (const chunk of answer.body) {
    if (ex.res.destroyed) return;
    // A client that leaves closes instead of draining; the upstream body is dropped by the abort signal.
    if (!ex.res.write(chunk)) {
      await new Promise((r) => {
        ex.res.once('drain', r);
        ex.res.once('close', r);
      });
    }
  }
  ex.res.end();
}
