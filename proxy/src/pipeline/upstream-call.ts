// One HTTP exchange with one provider, with one key. Non-2xx answers and transport failures come
// back as GatewayErrors carrying the provider's status and message, so retries and fallbacks can
// decide on them.
import type { Dispatcher } from 'undici';
import type { ProviderKey, ProviderRuntime } from '../config/snapshot.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { GatewayError } from '../unified/errors.ts';
import { parseRetryAfter } from './retry.ts';
import { poolFor } from '../upstream/pools.ts';

export interface UpstreamAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
}

export function upstreamPath(provider: ProviderRuntime, up: UpstreamRequest): string {
  return provider.pathOverrides[up.requestType] ?? provider.basePath + up.path;
}

export async function sendUpstream(
  provider: ProviderRuntime,
  adapter: FormatAdapter,
  key: ProviderKey | undefined,
  up: UpstreamRequest,
  body: string | undefined,
  signal: AbortSignal,
  resent = false,
): Promise<UpstreamAnswer> {
  const unsignedBody = body;
  let headers: Record<string, string> = {
    ...provider.extraHeaders,
    ...adapter.authHeaders(key?.value),
    accept: up.accept ?? (up.stream ? 'text/event-stream' : 'application/json'),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  else if (up.payload) headers['content-type'] = up.payload.contentType;
  let path = upstreamPath(provider, up);
  let pool = provider.pool;
  if (adapter.sign) {
    const signed = await adapter.sign({ method: up.method, origin: provider.origin, path, headers, body, basePath: provider.basePath }, key);
    ({ headers, path } = signed);
    if (signed.body !== undefined) body = signed.body;
    // A key with its own endpoint (an Azure resource in another region) gets that origin's keep-alive pool.
    if (signed.origin && signed.origin !== provider.origin) pool = poolFor(signed.origin, provider.maxConnections);
  }
  let res: Dispatcher.ResponseData;
  try {
    res = await pool.request({
      method: up.method,
      path,
      headers,
      body: body ?? up.payload?.bytes,
      signal,
      headersTimeout: provider.timeoutMs,
      bodyTimeout: up.stream ? provider.streamIdleTimeoutMs : provider.timeoutMs,
    });
  } catch (err) {
    throw transportError(provider.name, err, signal);
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body: res.body };
  // A cached credential the provider no longer takes (an OAuth token revoked or expired early) is dropped, and the call signed and sent once more.
  if (res.statusCode === 401 && !resent && adapter.authRejected?.(key, headers)) {
    await res.body.dump();
    return sendUpstream(provider, adapter, key, up, unsignedBody, signal, true);
  }
  const text = await res.body.text().catch(() => '');
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the adapter reads the text as it is.
  }
  const detail = adapter.error(res.statusCode, parsed, res.headers);
  throw new GatewayError(res.statusCode, detail.message, {
    type: detail.type,
    code: detail.code,
    param: detail.param,
    provider: provider.name,
    upstream: true,
    retryAfter: parseRetryAfter(res.headers['retry-after']),
  });
}

export function transportError(provider: string, err: unknown, signal?: AbortSignal): GatewayError {
  if (err instanceof GatewayError) return err;
  if (signal?.aborted) return new GatewayError(499, 'client closed the request', { type: 'client_closed', provider });
  const code = (err as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new GatewayError(504, `provider '${provider}' did not answer in time`, { type: 'upstream_timeout', code, provider });
  }
  return new GatewayError(502, `could not reach provider '${provider}': ${(err as Error).message || code}`, {
    type: 'upstream_connection_error',
    code: code || undefined,
    provider,
  });
}
