// /<provider>_passthrough/<path>: forwards the request untouched to the provider (its base URL plus
// <path> and the query), with the provider's auth injected from the key pool. For the parts of a
// provider's API the gateway does not model. Bodies and answers stream through both ways.
import type { Exchange } from '../http/exchange.ts';
import { sendError } from '../http/respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { pickKey } from '../pipeline/key-pool.ts';
import { transportError } from '../pipeline/upstream-call.ts';
import { modelLabel, requestCount, requestTime } from '../metrics/metrics.ts';

/** Client headers that describe the client's own connection or credentials: never forwarded. */
const DROP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-bf-vk', 'proxy-authorization', 'te', 'upgrade']);
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'proxy-authenticate']);

export async function passthrough(ex: Exchange): Promise<void> {
  const [name, rest] = ex.params;
  let status = 200;
  try {
    const provider = ex.snapshot.providers.get(name);
    if (!provider) throw new GatewayError(404, `provider '${name}' is not configured on this gateway`, { code: 'provider_not_configured' });
    const adapter = ADAPTERS[provider.kind.format];
    // Any key will do: a passthrough call names no model the key pool could filter on.
    let key;
    try {
      key = pickKey({ provider, model: '' });
    } catch {
      key = provider.keys.find((k) => k.weight > 0);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(ex.req.headers)) if (!DROP.has(k) && typeof v === 'string') headers[k] = v;
    Object.assign(headers, provider.extraHeaders, adapter.authHeaders(key?.value));
    const root = provider.basePath.slice(0, provider.basePath.length - provider.kind.pathPrefix.length);
    const q = ex.req.url!.indexOf('?');
    const hasBody = ex.req.method !== 'GET' && ex.req.method !== 'HEAD';
    let answer;
    try {
      answer = await provider.pool.request({
        method: ex.req.method as 'GET',
        path: root + rest + (q < 0 ? '' : ex.req.url!.slice(q)),
        headers,
        body: hasBody ? ex.req : undefined,
        signal: ex.signal,
        headersTimeout: provider.timeoutMs,
        bodyTimeout: provider.streamIdleTimeoutMs,
      });
    } catch (err) {
      throw transportError(provider.name, err, ex.signal);
    }
    status = answer.statusCode;
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
    ex.res.writeHead(answer.statusCode, out);
    for await (const chunk of answer.body) {
      if (!ex.res.write(chunk)) await new Promise((r) => ex.res.once('drain', r));
    }
    ex.res.end();
  } catch (err) {
    status = sendError(ex.res, err, { request_type: 'passthrough' }).status;
  } finally {
    const labels = ['passthrough', ex.snapshot.providers.has(name) ? name : 'unknown', modelLabel(''), String(status)] as const;
    requestCount(...labels).inc();
    requestTime(...labels).observe((performance.now() - ex.started) / 1000);
  }
}

export const PASSTHROUGH_PATTERN: [RegExp, { GET: typeof passthrough; POST: typeof passthrough; PUT: typeof passthrough; DELETE: typeof passthrough }] = [
  /^\/([a-z0-9][a-z0-9-]*)_passthrough(\/.*)$/,
  { GET: passthrough, POST: passthrough, PUT: passthrough, DELETE: passthrough },
];
