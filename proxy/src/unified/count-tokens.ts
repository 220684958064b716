// Token counting (`POST /v1/responses/input_tokens`): the request is a Responses request without
// the generation settings, as OpenAI's own endpoint takes it; the reference gateway's `messages`
// is accepted as another name for `input`. Providers answer in their own shapes, each read into
// `TokenCount`.
import type { ResponsesRequest } from './responses.ts';
import { GatewayError, invalidRequest } from './errors.ts';
import type { ExtraFields } from './chat.ts';

/** What every provider's count endpoint tells us. */
export interface TokenCount {
  input_tokens: number;
  /** Tokens served from a provider-side cache, when the provider says. */
  cached_tokens?: number;
}

export interface CountTokensResponse {
  object: 'response.input_tokens';
  input_tokens: number;
  model: string;
  input_tokens_details?: { cached_tokens: number };
  extra_fields?: ExtraFields;
}

/** Fields OpenAI's input_tokens endpoint takes; anything else (generation settings, gateway fields) stays here. */
export const INPUT_TOKENS_FIELDS = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'text',
  'reasoning',
  'parallel_tool_calls',
  'truncation',
  'conversation',
  'previous_response_id',
  'personality',
] as const;

/**
 * The reference gateway's `messages` becomes `input`; a body without either is refused here, since
 * the Responses schema would only say `input` is missing.
 */
export function normalizeCountTokensBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  const b = { ...(body as Record<string, unknown>) };
  if (b.input === undefined && b.messages !== undefined) b.input = b.messages;
  delete b.messages;
  if (b.input === undefined) throw invalidRequest('input is required (the messages to count)', 'input');
  return b;
}

/** The body for OpenAI's own input_tokens endpoint: the request's counting fields, model replaced. */
export function toInputTokensBody(req: ResponsesRequest, model: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const src = req as Record<string, unknown>;
  for (const k of INPUT_TOKENS_FIELDS) if (src[k] !== undefined) out[k] = src[k];
  out.model = model;
  return out;
}

export function toCountTokensResponse(count: TokenCount, model: string): CountTokensResponse {
  return {
    object: 'response.input_tokens',
    input_tokens: count.input_tokens,
    model,
    ...(count.cached_tokens !== undefined ? { input_tokens_details: { cached_tokens: count.cached_tokens } } : {}),
  };
}

/** A count that is a non-negative integer, else a broken upstream answer. */
export function readTokenCount(v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  throw new GatewayError(502, 'the provider answered a token count that is not a number', { type: 'upstream_invalid_response', upstream: true });
}
