// Bedrock errors: `{message}` (sometimes `Message`) with the exception name in the
// `x-amzn-errortype` header (`ValidationException:http://internal.amazon.com/...`), or `__type` in
// the body. Stream exceptions carry the name in the `:exception-type` event header.
import { errorJson, type UpstreamErrorDetail } from '../../unified/errors.ts';

const STATUS_BY_TYPE: Record<string, number> = {
  ValidationException: 400,
  AccessDeniedException: 403,
  UnrecognizedClientException: 403,
  ResourceNotFoundException: 404,
  ModelErrorException: 424,
  ModelNotReadyException: 429,
  ThrottlingException: 429,
  ServiceQuotaExceededException: 429,
  ModelTimeoutException: 408,
  InternalServerException: 500,
  ModelStreamErrorException: 424,
  ServiceUnavailableException: 503,
};

/** HTTP status for an exception name (stream exceptions carry only the name). */
export function statusForBedrockErrorType(type: string): number {
  const name = type.charAt(0).toUpperCase() + type.slice(1);
  return STATUS_BY_TYPE[name] ?? 500;
}

/** `ValidationException:http://...` or `com.amazon...#ValidationException` -> `ValidationException`. */
export function bedrockErrorName(raw: string): string {
  return raw.split(':')[0].split('#').at(-1)!.trim();
}

function typeForStatus(status: number): string {
  for (const [type, s] of Object.entries(STATUS_BY_TYPE)) if (s === status) return type;
  return status >= 500 ? 'InternalServerException' : 'ValidationException';
}

export function fromBedrockError(status: number, body: unknown, headers?: Record<string, string | string[] | undefined>): UpstreamErrorDetail {
  const parsed = errorJson(body);
  const obj = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const header = headers?.['x-amzn-errortype'];
  const rawType = (Array.isArray(header) ? header[0] : header) ?? (typeof obj.__type === 'string' ? obj.__type : '');
  const type = rawType ? bedrockErrorName(rawType) : typeForStatus(status);
  const msg = obj.message ?? obj.Message;
  let message = typeof msg === 'string' && msg ? msg : undefined;
  if (message === undefined && typeof body === 'string' && body.trim()) message = body.trim().slice(0, 500);
  return { type, message: message ?? `bedrock returned HTTP ${status}` };
}
