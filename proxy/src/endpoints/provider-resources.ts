// What files, batches and containers share: they are a provider's stored resources, not model calls, so the
// provider is named by the client (`provider` query parameter, form or body field, or the
// `x-model-provider` header) or is the first configured provider that offers the operation; the
// call goes out once, with one stable key, and the answer comes back as the provider sent it, JSON
// with `extra_fields` added, or bytes relayed as they arrive.
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';
import type { Operation } from '../unified/operations.ts';
import type { UpstreamRequest } from '../providers/adapter.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { sendOnce } from '../pipeline/invoke.ts';
import { upstreamBytes } from '../pipeline/body-relay.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Accept, Execute } from '../pipeline/runner.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { GatewayError, invalidRequest, requireOperation } from '../unified/errors.ts';
import { appendMember } from '../unified/json-splice.ts';
import type { FormPart } from '../unified/form.ts';
import { chargeFixedCost } from '../governance/cost.ts';
import { httpRoute } from './serve.ts';

export type ResourceOperation = Extract<Operation, 'files' | 'batches' | 'containers'>;

/** Query parameters that choose the provider; they are the gateway's, never forwarded. */
export const PROVIDER_PARAMS = ['provider', 'x-model-provider'] as const;

/** The provider named in the request (`fromBody` first: a form or JSON body field), if any. */
export function namedProvider(ctx: RequestContext, fromBody?: unknown): string | undefined {
  if (typeof fromBody === 'string' && fromBody) return fromBody;
  const q = ctx.query();
  for (const p of PROVIDER_PARAMS) {
    const v = q.get(p);
    if (v) return v;
  }
  const h = ctx.headers['x-model-provider'];
  return typeof h === 'string' && h ? h : undefined;
}

/** The named provider, or else the first configured one offering the operation (among those the caller's key allows). */
export function chooseProvider(ctx: RequestContext, operation: ResourceOperation, name: string | undefined): ProviderRuntime {
  if (name) {
    const provider = ctx.snapshot.providers.get(name);
    if (!provider) throw new GatewayError(400, `provider '${name}' is not configured on this gateway`, { param: 'provider', code: 'provider_not_configured' });
    requireOperation(provider, operation);
    return provider;
  }
  const vk = ctx.vk;
  for (const provider of ctx.snapshot.providers.values()) {
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

/** The client's query string without the gateway's own parameters, `?`-prefixed when not empty. */
export function forwardedQuery(ctx: RequestContext): string {
  const q = ctx.query();
  for (const p of PROVIDER_PARAMS) q.delete(p);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The request body an HTTP exchange carries (files, batches and containers are HTTP only). */
export function httpRequestOf(ctx: RequestContext): NonNullable<RequestContext['http']>['req'] {
  if (!ctx.http) throw invalidRequest('this operation takes an HTTP request');
  return ctx.http.req;
}

export interface ResourceCall {
  provider: ProviderRuntime;
  up: UpstreamRequest;
  /** Relay the body as bytes (file content) instead of JSON with extra_fields. */
  raw?: boolean;
  /** USD the successful answer (parsed) costs, charged to budgets and logged (a container session); undefined: unpriced. */
  price?: (answer: unknown) => number | undefined;
}

/** Each request's call, from accept to execute. */
const calls = new WeakMap<RequestContext, ResourceCall>();

/**
 * A files, batches or containers route: `prepare` reads the request (after the caller is identified) and says
 * which provider gets what; the provider's permissions and limits are checked by the stages. One
 * call, no retries: an upload or a create repeated after a lost answer would happen twice.
 */
export function resourceRoute(operation: ResourceOperation, requestType: string, prepare: (ctx: RequestContext) => Promise<ResourceCall>): ReturnType<typeof httpRoute> {
  const execute: Execute = async (ctx) => {
    const call = calls.get(ctx)!;
    const { provider, up } = call;
    const body = up.body === undefined ? undefined : JSON.stringify(up.body);
    const key = resourceKey(provider, ctx.keyIds);
    // The log record names the key (its id, never its value) the resource lives under.
    ctx.keyId = key?.id;
    const answer = await sendOnce(ctx, { provider, model: '' }, ADAPTERS[provider.kind.format], key, up, body, ctx.signal);
    if (call.raw) return { kind: 'bytes', status: answer.status, headers: relayedHeaders(answer.headers), body: upstreamBytes(answer.body, provider.name, ctx.signal) };
    const text = await answer.text();
    if (call.price) chargeFixedCost(ctx, call.price(parsedOrUndefined(text)));
    return withExtra(ctx, provider, answer.status, text, requestType);
  };
  const accept: Accept = async (ctx) => {
    ctx.model = '';
    // Files, batches and containers name no model, so routing and model limits do not apply.
    const call = await prepare(ctx);
    calls.set(ctx, call);
    // The request is what the provider receives (a batch's JSON body), as on inference routes:
    // the call itself holds the provider's runtime, keys included, which must never be logged.
    ctx.request = call.up.body;
    ctx.provider = call.provider.name;
    ctx.scope = { kind: 'provider', provider: call.provider };
    return execute;
  };
  return httpRoute({ operation, requestType }, accept);
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function withExtra(ctx: RequestContext, provider: ProviderRuntime, status: number, text: string, requestType: string): Outcome {
  // A success with no body (Azure's container delete documents none) is relayed as such.
  if (text.trim() === '') return { kind: 'text', status, text: '', headers: { 'content-type': 'text/plain; charset=utf-8' } };
  const extra = { provider: provider.name, request_type: requestType, latency: Math.round(performance.now() - ctx.started) };
  const spliced = appendMember(text, 'extra_fields', extra);
  if (spliced === undefined) {
    throw new GatewayError(502, `provider '${provider.name}' returned a body that is not a JSON object`, {
      type: 'upstream_invalid_response',
      provider: provider.name,
      upstream: true,
    });
  }
  return { kind: 'text', status, text: spliced };
}

const RELAYED = ['content-type', 'content-length', 'content-disposition'];

function relayedHeaders(upstream: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of RELAYED) {
    const v = upstream[h];
    if (typeof v === 'string') headers[h] = v;
  }
  return headers;
}

/** Form fields that are the gateway's (which provider), not the provider's: never sent on. */
const GATEWAY_FIELDS = new Set(['provider']);

/** A form's parts as the provider gets them: without the gateway's own fields. */
export function providerParts(parts: readonly FormPart[]): FormPart[] {
  return parts.filter((p) => !GATEWAY_FIELDS.has(p.name));
}
