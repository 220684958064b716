// Gateway errors in Anthropic's error shape, for clients of /anthropic/v1/messages: the SDK picks
// its exception class from the HTTP status and shows `error.type` / `error.message`.
import type { GatewayError } from '../../../unified/errors.ts';
import { typeForStatus } from '../error.ts';
import type { AnthropicErrorBody } from '../types.ts';

export interface AnthropicErrorResponse {
  status: number;
  body: AnthropicErrorBody & { type: 'error'; error: { type: string; message: string } };
}

/**
 * The status is kept; the type follows it through Anthropic's documented table (400
 * invalid_request_error ... 529 overloaded_error), since gateway and OpenAI-style types
 * (`unsupported_operation`, `server_error`) mean nothing to Anthropic clients.
 */
export function toAnthropicError(err: GatewayError): AnthropicErrorResponse {
  return {
    status: err.status,
    body: { type: 'error', error: { type: typeForStatus(err.status), message: err.message } },
  };
}
