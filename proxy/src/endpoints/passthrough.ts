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
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Dispatcher } from 'undici';
import type { Exchange } from '../http/exchange.ts';
import { sendError } from '../http/respond.ts';
import { readBody, parseJson } from '../http/body.ts';
import { GatewayError } from '../unified/errors.ts';
import type { ProviderRuntime } from '../config/snapshot.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { pickKey } from '../pipeline/key-pool.ts';
import { transportError } from '../pipeline/upstream-call.ts';
import { modelLabel, requestCount, requestTime } from '../metrics/metrics.ts';
import { callerOf, governProviderCall, type ProviderCall } from '../governance/provider-call.ts';
import { scrubProvider } from '../upstream/scrub.ts';
import { forwardedRequestHeaders, passthroughPath, rawQuery, relayedAnswerHeaders } from './passthrough-request.ts';
import { answerUsage, requestedModel } from './passthrough-usage.ts';

/** Error answers are read whole (to scrub them) up to this size; larger ones are a 502. */
const MAX_ERROR_BODY = 1 << 20;
/** JSON answers up to this size are also kept aside while relayed, to read their usage. */
const MAX_USAGE_BODY = 1 << 20;

export async function passthrough(ex: Exchange): Promise<void> {
  const name = ex.params[0];
  let status = 200;
  let model = '';
  try {
    // Who is asking comes first: an anonymous caller learns nothing about the configuration.
    callerOf(ex);
    const provider = ex.snapshot.providers.get(name);
    if (!provider) throw new GatewayError(404, `provider '${name}' is not configured on this gateway`, { code: 'provider_not_configured' });
    const rest = passthroughPath(ex.req.url ?? '');
    const governed = await governProviderCall(ex, provider.name, 'passthrough');
    const hasBody = ex.req.method !== 'GET' && ex.req.method !== 'HEAD';
    let body: Buffer | typeof ex.req | undefined = hasBody ? ex.req : undefined;
    if (governed.models !== '*') {
      // Only a read body can show the model; the buffered copy is what goes upstream.
      const buffered = hasBody ? await readBody(ex.req, ex.snapshot.maxBodyBytes) : undefined;
      body = buffered;
      model = allowedModel(governed, provider, rest, buffered);
    } else {
      model = requestedModel(rest, undefined) ?? '';
    }
    if (model) ex.access.model = model;
    const answer = await send(ex, provider, governed, model, rest, body);
    status = answer.statusCode;
    // 304 answers a conditional request; every other 3xx points elsewhere.
    if (status >= 300 && status < 400 && status !== 304) {
      await answer.body.dump().catch(() => undefined);
      throw new GatewayError(502, `provider '${provider.name}' answered with a redirect (${status}); the gateway does not follow or relay redirects: check the provider's base_url`, {
        type: 'upstream_redirect',
        code: 'upstream_redirect',
        provider: provider.name,
      });
    }
    if (status < 200 || (status >= 300 && status !== 304)) await relayError(ex, provider, answer);
    else await relaySuccess(ex, answer, (text) => chargeUsage(governed, model, text));
  } catch (err) {
    status = sendError(ex.res, err, { request_type: 'passthrough' }).status;
  } finally {
    const labels = ['passthrough', ex.snapshot.providers.has(name) ? name : 'unknown', modelLabel(model), String(status)] as const;
    requestCount(...labels).inc();
    requestTime(...labels).observe((performance.now() - ex.started) / 1000);
  }
}

/** The model a model-limited virtual key asks for, when the key allows it; else a 403. */
function allowedModel(governed: ProviderCall, provider: ProviderRuntime, rest: string, body: Buffer | undefined): string {
  let parsed: unknown;
  if (body?.length) {
    try {
      parsed = parseJson(body);
    } catch {
      // Not JSON: the model can only come from the path.
    }
  }
  const model = requestedModel(rest, parsed);
  const name = governed.vk?.record.name ?? '';
  if (!model) {
    throw new GatewayError(403, `virtual key '${name}' allows only some models of provider '${provider.name}': a passthrough call must name one (the body's 'model' or a /models/{model} path)`, {
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
  }
  if (governed.models !== '*' && !governed.models.has(model)) {
    throw new GatewayError(403, `model '${model}' of provider '${provider.name}' is not allowed by virtual key '${name}'`, {
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
  }
  return model;
}

async function send(
  ex: Exchange,
  provider: ProviderRuntime,
  governed: ProviderCall,
  model: string,
  rest: string,
  body: Buffer | typeof ex.req | undefined,
): Promise<Dispatcher.ResponseData> {
  const adapter = ADAPTERS[provider.kind.format];
  let key;
  try {
    key = pickKey({ provider, model, ...(governed.keyIds && { keyIds: governed.keyIds }) });
  } catch {
    // A call naming no model the pool could filter on: any key the caller may use will do.
    key = provider.keys.find((k) => k.weight > 0 && (!governed.keyIds || governed.keyIds.has(k.id)));
  }
  const headers = { ...forwardedRequestHeaders(ex.req.headers), ...provider.extraHeaders, ...adapter.authHeaders(key?.value) };
  // The base path without the API version prefix: the client's path carries its own version.
  const root = provider.basePath.slice(0, provider.basePath.length - provider.kind.pathPrefix.length);
  try {
    return await provider.pool.request({
      method: ex.req.method as 'GET',
      path: root + rest + rawQuery(ex.req.url ?? ''),
      headers,
      body,
      signal: ex.signal,
      headersTimeout: provider.timeoutMs,
      bodyTimeout: provider.streamIdleTimeoutMs,
    });
  } catch (err) {
    throw transportError(provider.name, err, ex.signal);
  }
}

async function relaySuccess(ex: Exchange, answer: Dispatcher.ResponseData, onJson: (text: string) => void): Promise<void> {
  const headers = relayedAnswerHeaders(answer.headers);
  const type = String(answer.headers['content-type'] ?? '');
  const encoded = answer.headers['content-encoding'] !== undefined && answer.headers['content-encoding'] !== 'identity';
  const keep: Buffer[] | undefined = /\bjson\b/i.test(type) && !encoded ? [] : undefined;
  let kept = 0;
  ex.res.writeHead(answer.statusCode, headers);
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    if (ex.res.destroyed) return;
    if (keep && kept <= MAX_USAGE_BODY) {
      keep.push(chunk);
      kept += chunk.length;
    }
    // A client that leaves closes instead of draining; the upstream body is dropped by the abort signal.
    if (!ex.res.write(chunk)) {
      await new Promise((r) => {
        ex.res.once('drain', r);
        ex.res.once('close', r);
      });
    }
  }
  ex.res.end();
  if (keep && kept <= MAX_USAGE_BODY) onJson(Buffer.concat(keep).toString('utf8'));
}

function chargeUsage(governed: ProviderCall, model: string, text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  const found = answerUsage(parsed);
  if (found) governed.charge(found.model ?? model, found.usage);
}

/** An error answer, relayed with its status once the gateway's own secrets are scrubbed from it. */
async function relayError(ex: Exchange, provider: ProviderRuntime, answer: Dispatcher.ResponseData): Promise<void> {
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
  // The body is sent decoded and re-measured.
  delete headers['content-encoding'];
  const out = Buffer.from(text, 'utf8');
  headers['content-length'] = String(out.length);
  ex.res.writeHead(answer.statusCode, headers);
  ex.res.end(out);
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
