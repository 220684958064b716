// Token counting on OpenAI (`POST /v1/responses/input_tokens`), which takes a Responses request:
// a chat request is re-expressed as Responses input first.
import type { ChatRequest } from '../../unified/chat.ts';
import { readTokenCount, type TokenCount } from '../../unified/count-tokens.ts';
import { chatToResponsesInput } from '../../unified/responses-bridge/from-chat.ts';
import type { UpstreamRequest } from '../adapter.ts';

export const INPUT_TOKENS_PATH = '/responses/input_tokens';

export function toOpenAICountTokensRequest(req: ChatRequest, model: string): UpstreamRequest {
  return { method: 'POST', path: INPUT_TOKENS_PATH, requestType: 'count_tokens', body: { model, ...chatToResponsesInput(req) }, stream: false };
}

export function fromOpenAICountTokens(body: unknown): TokenCount {
  const b = body as { input_tokens?: unknown; input_tokens_details?: { cached_tokens?: unknown } } | null;
  const cached = b?.input_tokens_details?.cached_tokens;
  return { input_tokens: readTokenCount(b?.input_tokens), ...(typeof cached === 'number' ? { cached_tokens: cached } : {}) };
}
