// One error object for every failure the gateway reports, whether it found the problem itself or
// an upstream provider did. The shape matches the reference gateway's so existing clients keep
// working; `error.message/type/code/param` is also what the OpenAI SDKs read.
import { ShapeError } from './answer-shape.ts';

export interface ErrorBody {
  /** true when the gateway itself rejected or failed the request; false for upstream errors. */
  is_bifrost_error: boolean;
  status_code: number;
  /** `request_id`: the gateway's request id (the answer's `x-request-id`), where the answer goes to a client. */
  error: { message: string; type: string; code?: string; param?: string | null; request_id?: string };
  extra_fields?: { provider?: string; model_requested?: string; request_type?: string };
}

/** What a translator extracts from a provider's own error body. */
export interface UpstreamErrorDetail {
  message: string;
  type: string;
  code?: string;
  param?: string | null;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | undefined;
  readonly param: string | null | undefined;
  readonly provider: string | undefined;
  readonly upstream: boolean;
  /** Seconds the upstream asked us to wait (429/503), when it said. */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    message: string,
    opts: {
      type?: string;
      code?: string;
      param?: string | null;
      provider?: string;
      upstream?: boolean;
      retryAfter?: number;
    } = {},
  ) {
    super(message);
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.code = opts.code;
    this.param = opts.param;
    this.provider = opts.provider;
    this.upstream = opts.upstream ?? false;
    this.retryAfter = opts.retryAfter;
  }

  toBody(extra?: { model_requested?: string; request_type?: string }, requestId?: string): ErrorBody {
    const body: ErrorBody = {
      is_bifrost_error: !this.upstream,
      status_code: this.status,
      error: { message: this.message, type: this.type },
    };
    if (this.code !== undefined) body.error.code = this.code;
    if (this.param !== undefined) body.error.param = this.param;
    if (requestId !== undefined) body.error.request_id = requestId;
    if (this.provider || extra) body.extra_fields = { provider: this.provider, ...extra };
    return body;
  }
}

function defaultType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 501) return 'unsupported_operation';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export const invalidRequest = (message: string, param?: string) =>
  new GatewayError(400, message, { param: param ?? null });

export const unsupportedOperation = (provider: string, operation: string) =>
  new GatewayError(400, `operation '${operation}' is not supported by provider '${provider}'`, {
    type: 'unsupported_operation',
    code: 'unsupported_operation',
    provider,
  });

/** Throws the unsupported-operation error unless the provider offers `operation`. */
export function requireOperation(provider: { name: string; operations: ReadonlySet<string> }, operation: string): void {
  if (!provider.operations.has(operation)) throw unsupportedOperation(provider.name, operation);
}

/** An upstream error body as JSON: parsed when it came as text, undefined when the text is not JSON. */
export function errorJson(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** An upstream answer the gateway cannot read as the API it called promises (wrong shape, not JSON, truncated framing). */
export function invalidUpstreamResponse(provider: string, why: string): GatewayError {
  return new GatewayError(502, `provider '${provider}' returned an invalid response: ${why}`, {
    type: 'upstream_invalid_response',
    code: 'upstream_invalid_response',
    provider,
    upstream: true,
  });
}

/** An upstream answer or stream event above a configured size bound; the connection is dropped. */
export function upstreamTooLarge(provider: string, what: 'response body' | 'stream event', limit: number, setting: string): GatewayError {
  return new GatewayError(502, `provider '${provider}' sent a ${what} larger than the limit of ${limit} bytes (network_config.${setting})`, {
    type: 'upstream_response_too_large',
    code: 'upstream_response_too_large',
    provider,
    upstream: true,
  });
}

/**
 * Translators read upstream answers by indexing into them; an answer of the wrong shape surfaces as
 * a TypeError (or the like) there. Any such non-gateway error met while translating upstream data
 * is the upstream's fault: a 502 naming it, never a 500.
 */
export function asUpstreamFault(err: unknown, provider: string): GatewayError {
  if (err instanceof GatewayError) {
    // Translators that report a broken answer themselves do not know which provider sent it.
    if (err.provider || !err.upstream) return err;
    return new GatewayError(err.status, err.message, { type: err.type, code: err.code, param: err.param, provider, upstream: true });
  }
  if (err instanceof ShapeError) return invalidUpstreamResponse(provider, err.message);
  const detail = err instanceof Error ? err.message : String(err);
  return invalidUpstreamResponse(provider, `unexpected shape (${detail.slice(0, 200)})`);
}
