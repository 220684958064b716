// /genai/v1beta/models/{model}:generateContent and friends: Google's Gemini API in front of every
// provider, so the official @google/genai SDK works unchanged but for its base URL. `{model}` may be
// `provider/model`.
import type { Exchange } from '../../http/exchange.ts';
import type { Usage } from '../../unified/chat.ts';
import type { EmbeddingResponse } from '../../unified/embeddings.ts';
import { invalidRequest, requireOperation, unsupportedOperation } from '../../unified/errors.ts';
import { fromGeminiRequest } from '../../providers/gemini/native/request.ts';
import { toGeminiResponse } from '../../providers/gemini/native/response.ts';
import { createGeminiStreamEncoder, encodeGeminiSse } from '../../providers/gemini/native/stream.ts';
import { fromGeminiEmbedRequest, toGeminiEmbedResponse } from '../../providers/gemini/native/embeddings.ts';
import { toGeminiError } from '../../providers/gemini/native/error.ts';
import type { GeminiGenerateContentRequest, GeminiGenerateContentResponse } from '../../providers/gemini/types.ts';
import { acceptRequest, runInference } from '../inference.ts';
import { serveNativeChat } from './native-chat.ts';
import { collectModels } from '../models.ts';
import { sendError, sendJson } from '../../http/respond.ts';
import { encodedStreamPlan } from '../chunk-stream-plan.ts';

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
  return async (ex: Exchange): Promise<void> => {
    const model = ex.params[0];
    await serveNativeChat<GeminiGenerateContentResponse & { usage?: unknown }>(ex, {
      parse: (body) => ({ ...fromGeminiRequest(objectBody(body) as unknown as GeminiGenerateContentRequest, model), stream }),
      modelRequested: model,
      answer: (res) => {
        const out: GeminiGenerateContentResponse & { usage?: unknown } = toGeminiResponse(res, model);
        // The runner reads `usage`; Gemini calls it usageMetadata.
        Object.defineProperty(out, 'usage', { value: out.usageMetadata, enumerable: false });
        return out;
      },
      usage: geminiUsage,
      errorBody: toGeminiError,
      stream: (chunks, _req, ids) =>
        encodedStreamPlan(chunks, createGeminiStreamEncoder(model, ids.id), encodeGeminiSse, (err) => `data: ${JSON.stringify(toGeminiError(err).body)}\r\n\r\n`),
    });
  };
}

function embed(method: 'embedContent' | 'batchEmbedContents') {
  return async (ex: Exchange): Promise<void> => {
    const model = ex.params[0];
    const accepted = await acceptRequest(ex, (body) => fromGeminiEmbedRequest(method, objectBody(body), model), 'embeddings', 'embedding', toGeminiError);
    if (!accepted) return;
    const { req, targets } = accepted;
    await runInference<EmbeddingResponse, never>(ex, {
      operation: 'embeddings',
      requestType: 'embedding',
      modelRequested: model,
      targets,
      build: (t, adapter) => {
        requireOperation(t.provider, 'embeddings');
        if (!adapter.embeddingsRequest) throw unsupportedOperation(t.provider.name, 'embeddings');
        return adapter.embeddingsRequest({ ...req, encoding_format: 'float' }, t.model);
      },
      parse: (body, att) => toGeminiEmbedResponse(method, att.adapter.embeddingsResponse!(body, req, att.target.model, att.up)) as EmbeddingResponse,
      usage: () => undefined,
      errorBody: toGeminiError,
    });
  };
}

export const GENAI_PATTERNS: [string, { POST: (ex: Exchange) => Promise<void> }][] = [
  ['/genai/v1beta/models/(.+):generateContent', { POST: generate(false) }],
  ['/genai/v1beta/models/(.+):streamGenerateContent', { POST: generate(true) }],
  ['/genai/v1beta/models/(.+):embedContent', { POST: embed('embedContent') }],
  ['/genai/v1beta/models/(.+):batchEmbedContents', { POST: embed('batchEmbedContents') }],
];

/** GET /genai/v1beta/models: every provider's models in Gemini's list shape (`models/provider/model`). */
export async function genaiModels(ex: Exchange): Promise<void> {
  try {
    const models = await collectModels(ex, null);
    sendJson(ex.res, 200, {
      models: models.map((m) => ({
        name: `models/${m.id}`,
        displayName: m.name ?? m.id,
        ...(m.description ? { description: m.description } : {}),
        ...(m.max_input_tokens ? { inputTokenLimit: m.max_input_tokens } : {}),
        ...(m.max_output_tokens ? { outputTokenLimit: m.max_output_tokens } : {}),
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
      })),
    });
  } catch (err) {
    sendError(ex.res, err, undefined, toGeminiError);
  }
}
