// Gemini error bodies → the gateway's upstream error detail.
import type { UpstreamErrorDetail } from '../../unified/errors.ts';

/** Canonical status names Google uses, for bodies that don't carry one (proxies, HTML error pages). */
export const STATUS_BY_HTTP: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const MAX_RAW_MESSAGE = 500;

/**
 * `{error: {code, message, status, details}}`, also when wrapped in an array (streaming endpoints
 * answer `[{error: …}]`). type = status (e.g. RESOURCE_EXHAUSTED); code = the ErrorInfo reason when
 * present (e.g. API_KEY_INVALID); param = the first BadRequest field violation.
 */
export function fromGeminiError(status: number, body: unknown): UpstreamErrorDetail {
  const parsed = typeof body === 'string' || body instanceof Uint8Array ? parseJson(body) : body;
  const error = errorObject(Array.isArray(parsed) ? parsed[0] : parsed);
  const fallbackType = STATUS_BY_HTTP[status] ?? (status >= 500 ? 'INTERNAL' : 'UNKNOWN');
  if (!error) return { message: rawMessage(body, status), type: fallbackType };

  const detail: UpstreamErrorDetail = {
    message: typeof error.message === 'string' && error.message ? error.message : `Gemini returned HTTP ${status}`,
    type: typeof error.status === 'string' && error.status ? error.status : fallbackType,
  };
  const details = Array.isArray(error.details) ? error.details.filter(isRecord) : [];
  const reason = details.map((d) => d.reason).find((r) => typeof r === 'string');
  if (typeof reason === 'string') detail.code = reason;
  const field = details
    .flatMap((d) => (Array.isArray(d.fieldViolations) ? d.fieldViolations.filter(isRecord) : []))
    .map((v) => v.field)
    .find((f) => typeof f === 'string');
  if (typeof field === 'string') detail.param = field;
  return detail;
}

function errorObject(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) && isRecord(value.error) ? value.error : undefined;
}

function parseJson(body: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
  } catch {
    return undefined;
  }
}

function rawMessage(body: unknown, status: number): string {
  const text = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : '';
  const trimmed = text.trim();
  if (!trimmed) return `Gemini returned HTTP ${status}`;
  return trimmed.length > MAX_RAW_MESSAGE ? `${trimmed.slice(0, MAX_RAW_MESSAGE)}…` : trimmed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
