// Gateway errors in Anthropic's error shape, for clients of /anthropic/v1/messages: the SDK picks
// its exception class from the HTTP status and shows `error.type` / `error.message`.
import type { GatewayError } from '../../../unified/errors.ts';
import { typeForStatus } from '../error.ts';
import type { AnthropicErrorBody } from '../types.ts';

export interface AnthropicErrorResponse {
  status: number;
  body: AnthropicErrorBody & { type: 'error'; error: { type: string; message: string } };
  headers?: Record<string, string>;
}

/**
 * The status is kept; the type follows it through Anthropic's documented table (400
 * invalid_request_error ... 529 overloaded_error), since gateway and OpenAI-style types
 * (`unsupported_operation`, `server_error`) mean nothing to Anthropic clients.
 */
export function toAnthropicError(err: GatewayError, requestId?: string): AnthropicErrorResponse {
  // Anthropic's error bodies carry `request_id` (and its answers the `request-id` header, which the
  // SDK reads as APIError.requestID): both name the gateway's request id.
  if (requestId === undefined) return { status: err.status, body: { type: 'error', error: { type: typeForStatus(err.status), message: err.message } } };
  return {
    status: err.status,
    body: { type: 'error', error: { type: typeForStatus(err.status), message: err.message }, request_id: requestId },
    headers: { 'request-id': requestId },
  };
}
