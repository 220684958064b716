// Token counting on Gemini (`models/{model}:countTokens`): the whole generateContent request goes in
// `generateContentRequest`, so system instruction and tools are counted too, not only `contents`.
import type { ChatRequest } from '../../unified/chat.ts';
import { readTokenCount, type TokenCount } from '../../unified/count-tokens.ts';
import type { UpstreamRequest } from '../adapter.ts';
import { toGeminiRequest } from './request.ts';

export function toGeminiCountTokensRequest(req: ChatRequest, model: string): UpstreamRequest {
  const generateContentRequest = { model: `models/${model}`, ...toGeminiRequest(req) };
  return {
    method: 'POST',
    path: `/models/${encodeURIComponent(model)}:countTokens`,
    requestType: 'count_tokens',
    body: { generateContentRequest },
    stream: false,
  };
}

export function fromGeminiCountTokens(body: unknown): TokenCount {
  const b = body as { totalTokens?: unknown; cachedContentTokenCount?: unknown } | null;
  const cached = b?.cachedContentTokenCount;
  return {
    input_tokens: readTokenCount(b?.totalTokens ?? 0),
    ...(typeof cached === 'number' ? { cached_tokens: cached } : {}),
  };
}
