// Cohere error bodies: `{id, message}` (older answers: `{message}` only). Proxies in front of the
// API may answer HTML or plain text instead.
import { errorJson, type UpstreamErrorDetail } from '../../unified/errors.ts';

const MAX_RAW_MESSAGE = 500;

export function typeForStatus(status: number): string {
  switch (status) {
    case 400: return 'invalid_request_error';
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 422: return 'invalid_request_error';
    case 429: return 'rate_limit_error';
    case 499: return 'client_closed_request';
    case 504: return 'timeout_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function fromCohereError(status: number, body: unknown): UpstreamErrorDetail {
  const parsed = errorJson(body);
  const rec = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  let message = typeof rec?.message === 'string' && rec.message ? rec.message : undefined;
  if (message === undefined && typeof body === 'string' && body.trim()) message = body.trim().slice(0, MAX_RAW_MESSAGE);
  const out: UpstreamErrorDetail = { type: typeForStatus(status), message: message ?? `cohere returned HTTP ${status}` };
  if (typeof rec?.id === 'string' && rec.id) out.code = rec.id;
  return out;
}
