// POST /anthropic/v1/messages/count_tokens and /genai/v1beta/models/{model}:countTokens: each SDK's
// own count call, answered in its own shape, for a model of any provider (`provider/model`).
import type { ChatRequest } from '../../unified/chat.ts';
import { invalidRequest } from '../../unified/errors.ts';
import { fromAnthropicRequest, type AnthropicNativeRequest } from '../../providers/anthropic/native/request.ts';
import { toAnthropicError } from '../../providers/anthropic/native/error.ts';
import { fromGeminiRequest } from '../../providers/gemini/native/request.ts';
import { toGeminiError } from '../../providers/gemini/native/error.ts';
import type { GeminiGenerateContentRequest } from '../../providers/gemini/types.ts';
import { readJson } from '../../operations/inference.ts';
import { httpInference } from '../serve.ts';
import { countTokensSpec } from '../../operations/count-tokens.ts';

function objectBody(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A Messages request without `max_tokens`, which counting does not take. */
function parseAnthropicCount(body: unknown): ChatRequest {
  const b = objectBody(body);
  if (typeof b.model !== 'string' || !b.model) throw invalidRequest('model: Field required', 'model');
  if (!Array.isArray(b.messages)) throw invalidRequest('messages: Field required', 'messages');
  const { stream: _s, ...rest } = b;
  return fromAnthropicRequest(rest as unknown as AnthropicNativeRequest);
}

export const anthropicCountTokens = httpInference<ChatRequest>({
  operation: 'count_tokens',
  requestType: 'count_tokens',
  errorBody: toAnthropicError,
  read: (ctx) => readJson(ctx, parseAnthropicCount),
  spec: (req) =>
    countTokensSpec({
      modelRequested: req.model,
      chat: () => req,
      render: (count) => ({ input_tokens: count.input_tokens }),
    }),
});

/**
 * The Developer API form (`contents`, or a whole `generateContentRequest`) and the Vertex form
 * (`contents` with `systemInstruction`, `tools`, `generationConfig` beside it) alike.
 */
function parseGenaiCount(body: unknown, model: string): ChatRequest {
  const b = objectBody(body);
  const inner = b.generateContentRequest;
  if (inner !== undefined && (!inner || typeof inner !== 'object' || Array.isArray(inner))) {
    throw invalidRequest('generateContentRequest must be an object', 'generateContentRequest');
  }
  const { model: _m, ...request } = (inner ?? b) as Record<string, unknown>;
  return fromGeminiRequest(request as unknown as GeminiGenerateContentRequest, model);
}

export const genaiCountTokens = httpInference<ChatRequest>({
  operation: 'count_tokens',
  requestType: 'count_tokens',
  errorBody: toGeminiError,
  read: (ctx) => readJson(ctx, (body) => parseGenaiCount(body, ctx.params[0])),
  spec: (req, ctx) =>
    countTokensSpec({
      modelRequested: ctx.params[0],
      chat: () => req,
      render: (count) => ({
        totalTokens: count.input_tokens,
        ...(count.cached_tokens !== undefined ? { cachedContentTokenCount: count.cached_tokens } : {}),
      }),
    }),
});

export const COUNT_TOKENS_PATTERNS: [string, { POST: typeof genaiCountTokens }][] = [
  ['/genai/v1beta/models/(.+):countTokens', { POST: genaiCountTokens }],
];
