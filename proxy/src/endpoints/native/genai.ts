// /genai/v1beta/models/{model}:generateContent and friends: Google's Gemini API in front of every
// provider, so the official @google/genai SDK works unchanged but for its base URL. `{model}` may be
// `provider/model`.
import type { Exchange } from '../../http/exchange.ts';
import type { Usage } from '../../unified/chat.ts';
import type { EmbeddingResponse } from '../../unified/embeddings.ts';
import { invalidRequest } from '../../unified/errors.ts';
import { fromGeminiRequest } from '../../providers/gemini/native/request.ts';
import { toGeminiResponse } from '../../providers/gemini/native/response.ts';
import { createGeminiStreamEncoder, encodeGeminiSse } from '../../providers/gemini/native/stream.ts';
import { fromGeminiEmbedRequest, toGeminiEmbedResponse } from '../../providers/gemini/native/embeddings.ts';
import { toGeminiError } from '../../providers/gemini/native/error.ts';
import type { GeminiGenerateContentRequest, GeminiGenerateContentResponse } from '../../providers/gemini/types.ts';
import { buildBy, readJson } from '../../operations/inference.ts';
import { httpInference } from '../serve.ts';
import { nativeChat } from './native-chat.ts';
import { modelList } from '../models.ts';
import { encodedStreamPlan } from '../../operations/chunk-stream-plan.ts';

function objectBody(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  return body as Record<string, unknown>;
}

function geminiUsage(u: unknown): Usage | undefined {
  const v = u as GeminiGenerateContentResponse['usageMetadata'];
  if (typeof v?.promptTokenCount !== 'number') return undefined;
  const completion = (v.candidatesTokenCount ?? 0) + (v.thoughtsTokenCount ?? 0);
  return { prompt_tokens: v.promptTokenCount, completion_tokens: completion, total_tokens: v.totalTokenCount ?? v.promptTokenCount + completion };
}

function generate(stream: boolean) {
  return nativeChat<GeminiGenerateContentResponse & { usage?: unknown }>({
    parse: (body, ctx) => ({ ...fromGeminiRequest(objectBody(body) as unknown as GeminiGenerateContentRequest, ctx.params[0]), stream }),
    modelRequested: (ctx) => ctx.params[0],
    answer: (res, _req, ctx) => {
      const out: GeminiGenerateContentResponse & { usage?: unknown } = toGeminiResponse(res, ctx.params[0]);
      // The runner reads `usage`; Gemini calls it usageMetadata.
      Object.defineProperty(out, 'usage', { value: out.usageMetadata, enumerable: false });
      return out;
    },
    usage: geminiUsage,
    errorBody: toGeminiError,
    stream: (chunks, _req, ids, ctx) =>
      encodedStreamPlan(chunks, createGeminiStreamEncoder(ctx.params[0], ids.id), encodeGeminiSse, (err) => `data: ${JSON.stringify(toGeminiError(err).body)}\r\n\r\n`),
  });
}

function embed(method: 'embedContent' | 'batchEmbedContents') {
  return httpInference({
    operation: 'embeddings',
    requestType: 'embedding',
    errorBody: toGeminiError,
    read: (ctx) => readJson(ctx, (body) => fromGeminiEmbedRequest(method, objectBody(body), ctx.params[0])),
    spec: (req, ctx) => ({
      requestType: 'embedding',
      modelRequested: ctx.params[0],
      build: buildBy('embeddings', { ...req, encoding_format: 'float' as const }, (a, r, model) => a.embeddingsRequest?.(r, model)),
      parse: (body, att) => toGeminiEmbedResponse(method, att.adapter.embeddingsResponse!(body, req, att.target.model, att.up)) as EmbeddingResponse,
      usage: () => undefined,
    }),
  });
}

export const GENAI_PATTERNS: [string, { POST: (ex: Exchange) => Promise<void> }][] = [
  ['/genai/v1beta/models/(.+):generateContent', { POST: generate(false) }],
  ['/genai/v1beta/models/(.+):streamGenerateContent', { POST: generate(true) }],
  ['/genai/v1beta/models/(.+):embedContent', { POST: embed('embedContent') }],
  ['/genai/v1beta/models/(.+):batchEmbedContents', { POST: embed('batchEmbedContents') }],
];

/** GET /genai/v1beta/models: every provider's models in Gemini's list shape (`models/provider/model`). */
export const genaiModels = modelList(
  (models) => ({
      models: models.map((m) => ({
        name: `models/${m.id}`,
        displayName: m.name ?? m.id,
        ...(m.description ? { description: m.description } : {}),
        ...(m.max_input_tokens ? { inputTokenLimit: m.max_input_tokens } : {}),
        ...(m.max_output_tokens ? { outputTokenLimit: m.max_output_tokens } : {}),
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
      })),
  }),
  { paged: false, renderError: toGeminiError },
);
