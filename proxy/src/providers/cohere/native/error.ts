// Gateway errors in Cohere's error shape, for clients of /cohere: `{id, message}` with the status
// kept, from which the cohere-ai SDK picks its error class (TooManyRequestsError, BadRequestError, ...).
import { randomUUID } from 'node:crypto';
import type { GatewayError } from '../../../unified/errors.ts';

export interface CohereErrorResponse {
  status: number;
  body: { id: string; message: string };
}

export function toCohereError(err: GatewayError, requestId?: string): CohereErrorResponse {
  const status = Number.isInteger(err.status) && err.status >= 400 && err.status <= 599 ? err.status : 500;
  // An upstream Cohere error id (kept as `code` by ../error.ts) is passed on; otherwise the
  // gateway's request id (the answer's x-request-id), else a fresh one.
  const id = err.upstream && err.provider === 'cohere' && err.code ? err.code : (requestId ?? randomUUID());
  return { status, body: { id, message: err.message } };
}
