// Gateway errors → Google's error envelope (google.rpc.Status as JSON), which @google/genai reads.
import type { GatewayError } from '../../../unified/errors.ts';
import { STATUS_BY_HTTP } from '../error.ts';

export interface GeminiErrorResponse {
  status: number;
  body: { error: { code: number; message: string; status: string; details?: RequestInfo[] } };
}

/** google.rpc.RequestInfo: where Google's error details name the request. */
interface RequestInfo {
  '@type': 'type.googleapis.com/google.rpc.RequestInfo';
  requestId: string;
}

/** Statuses Google never answers with, mapped to the nearest canonical code. */
const EXTRA_STATUS: Record<number, string> = {
  408: 'DEADLINE_EXCEEDED',
  413: 'INVALID_ARGUMENT',
  422: 'INVALID_ARGUMENT',
  502: 'UNAVAILABLE',
};

export function toGeminiError(err: GatewayError, requestId?: string): GeminiErrorResponse {
  const status = Number.isInteger(err.status) && err.status >= 400 && err.status <= 599 ? err.status : 500;
  const name = STATUS_BY_HTTP[status] ?? EXTRA_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
  const error: GeminiErrorResponse['body']['error'] = { code: status, message: err.message, status: name };
  if (requestId !== undefined) error.details = [{ '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId }];
  return { status, body: { error } };
}
