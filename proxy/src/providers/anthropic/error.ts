// Anthropic error bodies: `{type:'error', error:{type, message}, request_id}`. Proxies and load
// balancers in front of the API can answer with HTML or plain text instead, so nothing is assumed.
import { errorJson, type UpstreamErrorDetail } from '../../unified/errors.ts';

/** Documented HTTP status of each Anthropic error type. */
const STATUS_BY_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** HTTP status for an error type; stream `error` events carry only the type. */
export function statusForAnthropicErrorType(type: string): number {
  return STATUS_BY_TYPE[type] ?? 500;
}

/** Anthropic error type for an HTTP status (the documented one, else by status class). */
export function typeForStatus(status: number): string {
  for (const [type, s] of Object.entries(STATUS_BY_TYPE)) if (s === status) return type;
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

const MAX_RAW_MESSAGE = 500;

export function fromAnthropicError(status: number, body: unknown): UpstreamErrorDetail {
  const parsed = errorJson(body);
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
  const type = typeof error?.type === 'string' && error.type ? error.type : typeForStatus(status);
  let message = typeof error?.message === 'string' && error.message ? error.message : undefined;
  if (message === undefined && typeof body === 'string' && body.trim()) {
    message = body.trim().slice(0, MAX_RAW_MESSAGE);
  }
  return { type, message: message ?? `anthropic returned HTTP ${status}` };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
