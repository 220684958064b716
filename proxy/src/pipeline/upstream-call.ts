// One HTTP exchange with one provider, with one key. Non-2xx answers and transport failures come
// back as GatewayErrors carrying the provider's status and message, so retries and fallbacks can
// decide on them.
import type { Dispatcher } from 'undici';
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { asUpstreamFault, GatewayError, upstreamTooLarge } from '../unified/errors.ts';
import { parseRetryAfter } from './retry.ts';
import { poolFor } from '../upstream/pools.ts';
import type { PickedEndpoint } from '../upstream/endpoint-sources.ts';
import { scrubProvider } from '../providers/scrub.ts';
import { parseAnswerJson, readBounded, readPrefix, RESPONSE_LIMIT_SETTING } from './answer-body.ts';
import { dispatchRequest, DispatchedAnswer } from '../upstream/dispatched-answer.ts';
import { upstreamSignal, type AbortSource } from './client-gone.ts';
import { baseHeaders } from './upstream-headers.ts';

export interface UpstreamAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** Streams and relayed bytes are iterated; whole answers are read with text() or json(). */
  body: Dispatcher.ResponseData['body'];
  /** The whole body, bounded by the provider's max_response_body_size_mb (a 502 past it). */
  text(): Promise<string>;
  /** text() parsed; a body that is not JSON is a 502 upstream_invalid_response. */
  json(): Promise<unknown>;
}

/** Default bounds, for a provider compiled without them. */
const DEFAULT_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Only an error's message is needed: a longer error body is cut here. */
const ERROR_BODY_BYTES = 64 * 1024;

export function answerOf(provider: ProviderRuntime, res: Dispatcher.ResponseData | DispatchedAnswer): UpstreamAnswer {
  return new Answer(provider, res);
}

// A class, not an object literal with closures: every upstream call makes one, and its readers then
// cost no allocation of their own.
class Answer implements UpstreamAnswer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  readonly #provider: ProviderRuntime;
  readonly #res: Dispatcher.ResponseData | DispatchedAnswer;

  constructor(provider: ProviderRuntime, res: Dispatcher.ResponseData | DispatchedAnswer) {
    this.status = res.statusCode;
    this.headers = res.headers;
    this.#provider = provider;
    this.#res = res;
  }

  /** A dispatched answer's Readable is made here, on the first read (upstream/dispatched-answer.ts). */
  get body(): Dispatcher.ResponseData['body'] {
    return this.#res.body;
  }

  text(): Promise<string> {
    const limit = this.#provider.maxResponseBytes ?? DEFAULT_RESPONSE_BYTES;
    const res = this.#res;
    if (res instanceof DispatchedAnswer) {
      const name = this.#provider.name;
      const whole = res.readText(limit, () => upstreamTooLarge(name, 'response body', limit, RESPONSE_LIMIT_SETTING));
      if (whole) return whole;
    }
    return readBounded(res.body, this.headers, limit, this.#provider.name);
  }

  async json(): Promise<unknown> {
    return parseAnswerJson(await this.text(), this.#provider.name);
  }
}

export function upstreamPath(provider: ProviderRuntime, up: UpstreamRequest): string {
  const override = provider.pathOverrides[up.requestType];
  if (override !== undefined) return override;
  // The base URL's own path, without the version prefix the kind appends.
  const base = up.unversioned ? provider.basePath.slice(0, provider.basePath.length - provider.kind.pathPrefix.length) : provider.basePath;
  return base + up.path;
}

function hasHeader(headers: Readonly<Record<string, string>>, lowerName: string): boolean {
  for (const name in headers) if (name.toLowerCase() === lowerName) return true;
  return false;
}

/** The headers that carry the gateway's request id to a provider. */
export function requestIdHeaders(requestId: string | undefined): Readonly<Record<string, string>> | undefined {
  return requestId === undefined ? undefined : { 'x-request-id': requestId };
}

/**
 * One call with one key. Not async: without signing or a failure, the request is built and sent
 * synchronously and the pool's promise is chained once, so the call keeps no suspended frame of
 * its own while the provider answers. A throw while building is still a rejection.
 */
export function sendUpstream(
  provider: ProviderRuntime,
  adapter: FormatAdapter,
  key: ProviderKey | undefined,
  up: UpstreamRequest,
  body: string | undefined,
  signal: AbortSource,
  own?: Readonly<Record<string, string>>,
  resent = false,
): Promise<UpstreamAnswer> {
  try {
    const headers = baseHeaders(provider, adapter, key);
    headers.accept = up.accept ?? (up.stream ? 'text/event-stream' : 'application/json');
    // Joined to an operator's value of the same header (both are comma lists, e.g. anthropic-beta).
    if (up.headers) {
      for (const name in up.headers) {
        const value = up.headers[name];
        headers[name] = headers[name] ? `${headers[name]},${value}` : value;
      }
    }
    // The gateway's own (the request id, trace context): set before signing, so SigV4 covers them.
    // They replace a client's header of the same name; one the operator configured (extra_headers) wins.
    if (own) for (const name in own) if (!hasHeader(provider.extraHeaders, name)) headers[name] = own[name];
    if (body !== undefined) headers['content-type'] = 'application/json';
    else if (up.payload) headers['content-type'] = up.payload.contentType;
    const path = upstreamPath(provider, up);
    let pool = provider.pool;
    // An InferencePool provider: this request goes to the server the pool's source picks (least loaded).
    let picked: PickedEndpoint | undefined;
    if (provider.endpoints) {
      const choice = provider.endpoints.pick();
      if ('error' in choice) {
        throw new GatewayError(503, `provider '${provider.name}' has no model server to send to: ${choice.error}`, { type: 'upstream_unavailable', code: 'no_endpoints', provider: provider.name, upstream: true });
      }
      picked = choice;
      pool = poolFor(choice.origin, provider.maxConnections, provider.allowLinkLocal);
    }
    const call: Call = { provider, adapter, key, up, body, signal, own, resent };
    if (adapter.sign) return sendSigned(call, pool, picked, path, headers);
    return exchange(call, pool, picked, path, headers, body ?? up.payload?.bytes);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** What sendUpstream was asked (a 401 resend asks it again with the same). */
interface Call {
  provider: ProviderRuntime;
  adapter: FormatAdapter;
  key: ProviderKey | undefined;
  up: UpstreamRequest;
  /** The body before signing. */
  body: string | undefined;
  signal: AbortSource;
  own: Readonly<Record<string, string>> | undefined;
  resent: boolean;
}

/** The request signed first (SigV4, an OAuth token fetched): its own async step, off the plain path. */
async function sendSigned(call: Call, pool: Dispatcher, picked: PickedEndpoint | undefined, path: string, headers: Record<string, string>): Promise<UpstreamAnswer> {
  const { provider, up } = call;
  let body: string | Uint8Array | undefined = call.body;
  let payload = up.payload;
  const signed = await call.adapter.sign!({ method: up.method, origin: provider.origin, path, headers, body: call.body, basePath: provider.basePath, form: up.form }, call.key);
  if (signed.body !== undefined) body = signed.body;
  if (signed.payload) payload = signed.payload;
  // A key with its own endpoint (an Azure resource in another region) gets that origin's keep-alive pool.
  if (signed.origin && signed.origin !== provider.origin) pool = poolFor(signed.origin, provider.maxConnections);
  return exchange(call, pool, picked, signed.path, signed.headers, body ?? payload?.bytes);
}

/** The request sent: a 2xx answer as it comes; anything else, or no answer, a GatewayError. */
function exchange(call: Call, pool: Dispatcher, picked: PickedEndpoint | undefined, path: string, headers: Record<string, string>, body: string | Uint8Array | undefined): Promise<UpstreamAnswer> {
  const { provider, up, signal } = call;
  let sending: Promise<Dispatcher.ResponseData | DispatchedAnswer>;
  try {
    sending = sendVia(pool, picked, {
      method: up.method,
      path,
      headers,
      body,
      // An HTTP request's own: undici listens on its emitter instead (client-gone.ts).
      signal: upstreamSignal(signal) as Dispatcher.RequestOptions['signal'],
      headersTimeout: provider.timeoutMs,
      bodyTimeout: up.stream ? provider.streamIdleTimeoutMs : provider.timeoutMs,
    }, up.stream);
  } catch (err) {
    return Promise.reject(transportError(provider.name, err, signal));
  }
  return sending.then(
    (res) => (res.statusCode >= 200 && res.statusCode < 300 ? answerOf(provider, res) : refused(call, res, headers)),
    (err: unknown) => {
      throw transportError(provider.name, err, signal);
    },
  );
}

/** A non-2xx answer as the GatewayError it is (or, once, the 401 of a dropped credential resent). */
async function refused(call: Call, res: Dispatcher.ResponseData | DispatchedAnswer, headers: Record<string, string>): Promise<UpstreamAnswer> {
  const { provider, adapter, key } = call;
  if (res.statusCode < 400) {
    // Redirects are not followed (the provider's key would go wherever Location points) and a 3xx
    // relayed as is would reach the client without its Location: the upstream is misconfigured.
    res.body.destroy();
    throw new GatewayError(502, `provider '${provider.name}' answered with a redirect (HTTP ${res.statusCode}), which the gateway does not follow; check its base_url`, {
      type: 'upstream_invalid_response',
      code: 'upstream_redirect',
      provider: provider.name,
      upstream: true,
    });
  }
  // A cached credential the provider no longer takes (an OAuth token revoked or expired early) is dropped, and the call signed and sent once more.
  if (res.statusCode === 401 && !call.resent && adapter.authRejected?.(key, headers)) {
    await res.body.dump();
    return sendUpstream(provider, adapter, key, call.up, call.body, call.signal, call.own, true);
  }
  // Providers echo keys back ("Incorrect API key provided: sk-..."): scrubbed before anything reads it.
  const text = scrubProvider(await readPrefix(res.body, ERROR_BODY_BYTES), provider);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the adapter reads the text as it is.
  }
  const detail = adapter.error(res.statusCode, parsed, res.headers);
  if (res.statusCode === 401) {
    // The key refused is the gateway's own, not the caller's: answering 401 would send the client
    // looking at its virtual key. A 502 names the provider's key as the configuration to fix; it is
    // the gateway's error (not retried with the same key), and a fallback may still serve.
    throw new GatewayError(
      502,
      `provider '${provider.name}' refused the gateway's key${key?.name ? ` '${key.name}'` : ''} (HTTP 401: ${scrubProvider(detail.message, provider)}); fix the key configured for provider '${provider.name}' (its environment variable or providers.${provider.name}.keys in config.json)`,
      { type: 'provider_auth_error', code: 'provider_auth_failed', provider: provider.name },
    );
  }
  throw new GatewayError(res.statusCode, scrubProvider(detail.message, provider), {
    type: detail.type,
    code: detail.code,
    param: detail.param,
    provider: provider.name,
    upstream: true,
    retryAfter: parseRetryAfter(res.headers['retry-after']),
  });
}

/**
 * The request on `pool`; a picked server counts it in flight until its answer body is done with.
 * Not async: the dispatch's promise is handed back as is, without an async frame around it whose
 * promise would resolve with it a microtask later (the call every upstream request makes). A stream
 * keeps undici's request(): it needs the Readable at once, so a dispatched answer would spare it
 * nothing. A picked server's request too: its release waits on the Readable's 'close'.
 */
function sendVia(pool: Dispatcher, picked: PickedEndpoint | undefined, opts: Dispatcher.RequestOptions, stream: boolean | undefined): Promise<Dispatcher.ResponseData | DispatchedAnswer> {
  if (picked) return sendPicked(pool, picked, opts);
  return stream ? pool.request(opts) : dispatchRequest(pool, opts);
}

async function sendPicked(pool: Dispatcher, picked: PickedEndpoint, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  let res: Dispatcher.ResponseData;
  try {
    res = await pool.request(opts);
  } catch (err) {
    picked.release();
    throw err;
  }
  // 'close' follows the end of the body, its destruction (client gone, error) and a dump alike.
  if (res.body.closed || res.body.destroyed) picked.release();
  else res.body.once('close', () => picked.release());
  return res;
}

export function transportError(provider: string, err: unknown, signal?: AbortSource): GatewayError {
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

/** The answer's JSON through a translator: a body of the wrong shape is a 502 naming the provider. */
export async function readTranslated<T>(answer: UpstreamAnswer, provider: string, translate: (body: unknown) => T): Promise<T> {
  const body = await answer.json();
  try {
    return translate(body);
  } catch (err) {
    throw asUpstreamFault(err, provider);
  }
}
