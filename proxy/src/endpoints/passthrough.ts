// /<provider>_passthrough/<path>: forwards the request to the provider (its base URL plus <path>
// and the query, both exactly as received), with the provider's auth injected from the key pool.
// For the parts of a provider's API the gateway does not model. Bodies and answers stream through
// both ways.
//
// It spends the provider's keys, so it is governed like /v1: the caller's virtual key (401 when
// required), its provider permissions (403) and the limits that apply (429 / 402; one request
// counted, and the tokens of a JSON answer that reports usage). A key limited to some models must
// name one of them (body `model` or a `/models/{model}` path segment). What comes back is relayed,
// except a redirect (a 502: the gateway follows none and relays none) and the gateway's own key
// values, scrubbed from error answers.
//
// A provider serves more than inference under the same key (admin keys, billing, fine-tuning): a
// caller reaches only the provider's inference paths (providers/passthrough-paths.ts) and those the
// provider's `passthrough_allowed_paths` lists, unless it presents a management credential
// (admin Basic auth or a management API key); any other path is a 403 naming it.
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { readBody, parseJson } from '../http/body.ts';
import { GatewayError } from '../unified/errors.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { pickKey } from '../pipeline/key-pool.ts';
import { transportError } from '../pipeline/upstream-call.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Accept, Execute } from '../pipeline/runner.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { scrubProvider } from '../providers/scrub.ts';
import { forwardedRequestHeaders, passthroughPath, rawQuery, relayedAnswerHeaders } from './passthrough-request.ts';
import { answerUsage, requestedModel } from './passthrough-usage.ts';
import { httpRequestOf } from './provider-resources.ts';
import { httpRoute } from './serve.ts';
import { passthroughPathAllowed } from '../providers/passthrough-paths.ts';
import { authenticate, managementAuth, parseBasic, SessionStore } from '../api/auth.ts';

/** Session tokens are the dashboard's (a browser's cookie): passthrough takes Basic or a management API key only. */
const NO_SESSIONS = new SessionStore();

/**
 * True when the request carries a management credential (with management auth enabled). A wrong
 * one (Basic, or a Bearer / x-api-key that was not the caller's virtual key) counts as a guess.
 */
function managementCaller(ctx: RequestContext): boolean {
  const auth = managementAuth(ctx.snapshot.governance.auth);
  if (!auth.enabled) return false;
  const { authorization, 'x-api-key': apiKey } = ctx.headers;
  if (authenticate({ authorization, 'x-api-key': apiKey }, auth, NO_SESSIONS) !== undefined) return true;
  const basic = parseBasic(authorization);
  const client = httpRequestOf(ctx).socket?.remoteAddress;
  if (client !== undefined && (basic || (!ctx.vk && (authorization !== undefined || apiKey !== undefined)))) {
    ctx.services.guesses?.fail(client, basic?.username ?? '', basic ? 'basic' : 'api_key');
  }
  return false;
}

/** Error answers are read whole (to scrub them) up to this size; larger ones are a 502. */
const MAX_ERROR_BODY = 1 << 20;
/** JSON answers up to this size are also kept aside while relayed, to read their usage. */
const MAX_USAGE_BODY = 1 << 20;

/** Who is asking is known first (the identify stage): an anonymous caller learns nothing about the configuration. */
const accept: Accept = async (ctx) => {
  const name = ctx.params[0];
  const provider = ctx.snapshot.providers.get(name);
  ctx.provider = provider ? name : 'unknown';
  ctx.model = '';
  if (!provider) throw new GatewayError(404, `provider '${name}' is not configured on this gateway`, { code: 'provider_not_configured' });
  const req = httpRequestOf(ctx);
  const rest = passthroughPath(req.url ?? '');
  if (!passthroughPathAllowed(provider.kind.format, provider.passthroughPaths, req.method ?? 'GET', rest) && !managementCaller(ctx)) {
    throw new GatewayError(
      403,
      `${req.method ?? 'GET'} ${rest} is not an inference path of provider '${name}': passthrough reaches other paths only when providers.${name}.passthrough_allowed_paths lists them, or with a management credential`,
      { type: 'permission_error', code: 'passthrough_path_not_allowed', param: 'path' },
    );
  }
  ctx.request = rest;
  ctx.scope = { kind: 'provider', provider };
  return execute;
};

const execute: Execute = async (ctx) => {
  const req = httpRequestOf(ctx);
  const provider = (ctx.scope as { provider: ProviderRuntime }).provider;
  const rest = ctx.request as string;
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  let body: Buffer | typeof req | undefined = hasBody ? req : undefined;
  let model: string;
  if (ctx.models !== '*') {
    // Only a read body can show the model; the buffered copy is what goes upstream.
    const buffered = hasBody ? await readBody(req, ctx.snapshot.maxBodyBytes) : undefined;
    body = buffered;
    model = allowedModel(ctx, provider, rest, buffered);
  } else {
    model = requestedModel(rest, undefined) ?? '';
  }
  ctx.model = model;
  if (model) ctx.access.model = model;
  const answer = await send(ctx, provider, model, rest, body);
  const status = answer.statusCode;
  // 304 answers a conditional request; every other 3xx points elsewhere.
  if (status >= 300 && status < 400 && status !== 304) {
    await answer.body.dump().catch(() => undefined);
    throw new GatewayError(502, `provider '${provider.name}' answered with a redirect (${status}); the gateway does not follow or relay redirects: check the provider's base_url`, {
      type: 'upstream_redirect',
      code: 'upstream_redirect',
      provider: provider.name,
    });
  }
  if (status < 200 || (status >= 300 && status !== 304)) return relayError(provider, answer);
  const type = String(answer.headers['content-type'] ?? '');
  const encoded = answer.headers['content-encoding'] !== undefined && answer.headers['content-encoding'] !== 'identity';
  return {
    kind: 'bytes',
    status,
    headers: relayedAnswerHeaders(answer.headers),
    body: relayed(ctx, provider.name, answer.body as AsyncIterable<Buffer>, /\bjson\b/i.test(type) && !encoded),
  };
};

export const passthrough = httpRoute({ operation: 'passthrough', requestType: 'passthrough' }, accept);

/** The model a model-limited virtual key asks for, when the key allows it; else a 403. */
function allowedModel(ctx: RequestContext, provider: ProviderRuntime, rest: string, body: Buffer | undefined): string {
  let parsed: unknown;
  if (body?.length) {
    try {
      parsed = parseJson(body);
    } catch (err) {
      // A body the gateway reads obeys its rule (a `__proto__` member is a 400 naming it).
      if (err instanceof GatewayError && err.code === 'invalid_field') throw err;
      // Not JSON: the model can only come from the path.
    }
  }
  const model = requestedModel(rest, parsed);
  const name = ctx.vk?.record.name ?? '';
  if (!model) {
    throw new GatewayError(403, `virtual key '${name}' allows only some models of provider '${provider.name}': a passthrough call must name one (the body's 'model' or a /models/{model} path)`, {
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
  }
  if (ctx.models !== '*' && !ctx.models.has(model)) {
    throw new GatewayError(403, `model '${model}' of provider '${provider.name}' is not allowed by virtual key '${name}'`, {
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
  }
  return model;
}

async function send(
  ctx: RequestContext,
  provider: ProviderRuntime,
  model: string,
  rest: string,
  body: Buffer | NodeJS.ReadableStream | undefined,
): Promise<Dispatcher.ResponseData> {
  const req = httpRequestOf(ctx);
  const adapter = ADAPTERS[provider.kind.format];
  const keyIds = ctx.keyIds;
  let key;
  try {
    key = pickKey({ provider, model, ...(keyIds && { keyIds }) });
  } catch {
    // A call naming no model the pool could filter on: any key the caller may use will do.
    key = provider.keys.find((k) => k.weight > 0 && (!keyIds || keyIds.has(k.id)));
  }
  ctx.keyId = key?.id;
  // The call is the request's one attempt: its span when traced, whose context replaces the
  // client's traceparent; the gateway's request id replaces the client's x-request-id (the same
  // value when the client's was kept). The operator's extra headers and the key come last.
  const watch = ctx.attempts?.start({ provider, model }, 0, 0);
  const headers = { ...forwardedRequestHeaders(req.headers), 'x-request-id': ctx.requestId, ...watch?.headers, ...provider.extraHeaders, ...adapter.authHeaders(key?.value) };
  // The base path without the API version prefix: the client's path carries its own version.
  const root = provider.basePath.slice(0, provider.basePath.length - provider.kind.pathPrefix.length);
  let res: Dispatcher.ResponseData;
  try {
    res = await provider.pool.request({
      method: req.method as 'GET',
      path: root + rest + rawQuery(req.url ?? ''),
      headers,
      body: body as Buffer | undefined,
      signal: ctx.signal,
      headersTimeout: provider.timeoutMs,
      bodyTimeout: provider.streamIdleTimeoutMs,
    });
  } catch (err) {
    const e = transportError(provider.name, err, ctx.signal);
    watch?.end(e.status, key?.id, e);
    throw e;
  }
  // Relayed as it is, whatever the status: the span says whether the provider refused it.
  watch?.end(res.statusCode, key?.id, res.statusCode >= 400 ? new GatewayError(res.statusCode, `provider '${provider.name}' answered HTTP ${res.statusCode}`, { provider: provider.name, upstream: true }) : undefined);
  return res;
}

/** The answer's bytes as they arrive; a JSON answer small enough is kept aside to read its usage at the end. */
async function* relayed(ctx: RequestContext, provider: string, body: AsyncIterable<Buffer>, json: boolean): AsyncGenerator<Uint8Array> {
  const keep: Buffer[] | undefined = json ? [] : undefined;
  let kept = 0;
  try {
    for await (const chunk of body) {
      if (keep && kept <= MAX_USAGE_BODY) {
        keep.push(chunk);
        kept += chunk.length;
      }
      yield chunk;
    }
  } catch (err) {
    throw transportError(provider, err, ctx.signal);
  }
  if (keep && kept <= MAX_USAGE_BODY) noteUsage(ctx, Buffer.concat(keep).toString('utf8'));
}

/** Usage a JSON answer reports, and the model it names, for the limits and metrics after the answer. */
function noteUsage(ctx: RequestContext, text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  const found = answerUsage(parsed);
  if (!found) return;
  ctx.usage = found.usage;
  if (found.model) ctx.model = found.model;
}

/** An error answer, relayed with its status once the gateway's own secrets are scrubbed from it. */
async function relayError(provider: ProviderRuntime, answer: Dispatcher.ResponseData): Promise<Outcome> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ERROR_BODY) {
      answer.body.destroy();
      throw new GatewayError(502, `provider '${provider.name}' answered ${answer.statusCode} with an error body over ${MAX_ERROR_BODY} bytes`, {
        type: 'upstream_invalid_response',
        provider: provider.name,
      });
    }
    chunks.push(chunk);
  }
  const headers = relayedAnswerHeaders(answer.headers);
  const text = scrubProvider(decoded(Buffer.concat(chunks), answer.headers['content-encoding'], provider.name), provider);
  // The body is sent decoded and re-measured (respond sets content-length).
  delete headers['content-encoding'];
  delete headers['content-length'];
  return { kind: 'text', status: answer.statusCode, text, headers };
}

function decoded(raw: Buffer, encoding: string | string[] | undefined, provider: string): string {
  const enc = String(encoding ?? 'identity').trim().toLowerCase();
  const opts = { maxOutputLength: MAX_ERROR_BODY };
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return gunzipSync(raw, opts).toString('utf8');
    if (enc === 'deflate') return inflateSync(raw, opts).toString('utf8');
    if (enc === 'br') return brotliDecompressSync(raw, opts).toString('utf8');
  } catch {
    throw new GatewayError(502, `provider '${provider}' sent an error body that could not be decoded (${enc})`, { type: 'upstream_invalid_response', provider });
  }
  if (enc !== 'identity') throw new GatewayError(502, `provider '${provider}' sent an error body in an unknown encoding (${enc})`, { type: 'upstream_invalid_response', provider });
  return raw.toString('utf8');
}

export const PASSTHROUGH_PATTERN: [RegExp, { GET: typeof passthrough; POST: typeof passthrough; PUT: typeof passthrough; DELETE: typeof passthrough }] = [
  /^\/([a-z0-9][a-z0-9-]*)_passthrough(\/.*)$/,
  { GET: passthrough, POST: passthrough, PUT: passthrough, DELETE: passthrough },
];
