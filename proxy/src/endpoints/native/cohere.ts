// /cohere/v2/chat, /cohere/v2/embed, /cohere/v2/rerank: Cohere's v2 API in front of every
// provider, so the official cohere-ai SDK works unchanged but for its base URL (`…/cohere`).
// `model` may be `provider/model`. Rerank goes through the unified rerank operation.
import { randomUUID } from 'node:crypto';
import type { Usage } from '../../unified/chat.ts';
import { asUsage } from '../../unified/chat.ts';
import { fromCohereChatRequest, fromCohereEmbedRequest, fromCohereRerankRequest } from '../../providers/cohere/native/request.ts';
import { toCohereChatResponse, toCohereEmbedResponse, toCohereRerankResponse } from '../../providers/cohere/native/response.ts';
import { createCohereStreamEncoder, encodeCohereEvent } from '../../providers/cohere/native/stream.ts';
import { toCohereError } from '../../providers/cohere/native/error.ts';
import { cohereAdapter } from '../../providers/cohere/adapter.ts';
import type { CohereChatResponse, CohereEmbedResponse, CohereRerankResponse, CohereUsage } from '../../providers/cohere/types.ts';
import { buildBy, readJson } from '../../operations/inference.ts';
import { httpInference } from '../serve.ts';
import { nativeChat } from './native-chat.ts';
import { encodedStreamPlan } from '../../operations/chunk-stream-plan.ts';

function cohereUsage(u: unknown): Usage | undefined {
  const v = u as CohereUsage | undefined;
  const input = v?.tokens?.input_tokens ?? v?.billed_units?.input_tokens;
  if (typeof input !== 'number') return undefined;
  const output = v?.tokens?.output_tokens ?? v?.billed_units?.output_tokens ?? 0;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export const cohereChat = nativeChat<CohereChatResponse>({
  parse: fromCohereChatRequest,
  errorBody: toCohereError,
  usage: cohereUsage,
  answer: (res) => toCohereChatResponse(res),
  stream: (chunks, req) => {
    const encoder = createCohereStreamEncoder(randomUUID(), (req.tools?.length ?? 0) > 0);
    return encodedStreamPlan(chunks, encoder, encodeCohereEvent, (err) => encoder.fail(err).map(encodeCohereEvent).join(''));
  },
});

export const cohereEmbed = httpInference({
  operation: 'embeddings',
  requestType: 'embedding',
  errorBody: toCohereError,
  read: (ctx) => readJson(ctx, fromCohereEmbedRequest),
  spec: (req) => {
    // Cohere-only fields reach the Cohere translator; other providers would refuse them.
    const { input_type: _inputType, truncate: _truncate, ...portable } = req;
    const texts = req.input as string[];
    return {
      requestType: 'embedding',
      modelRequested: req.model,
      build: buildBy('embeddings', req, (a, r, model) => a.embeddingsRequest?.(a === cohereAdapter ? r : { ...portable, encoding_format: 'float' }, model)),
      parse: (body, att) => {
        const res = att.adapter.embeddingsResponse!(body, req, att.target.model, att.up);
        const out: CohereEmbedResponse & { usage?: unknown } = toCohereEmbedResponse(res, texts, randomUUID());
        // The runner reads `usage`; Cohere reports it under meta.
        Object.defineProperty(out, 'usage', { value: res.usage, enumerable: false });
        return out;
      },
      usage: (u) => {
        const usage = u as { prompt_tokens?: number; total_tokens?: number } | undefined;
        return typeof usage?.prompt_tokens === 'number' ? { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.prompt_tokens } : undefined;
      },
    };
  },
});

export const cohereRerank = httpInference({
  operation: 'rerank',
  requestType: 'rerank',
  errorBody: toCohereError,
  read: (ctx) => readJson(ctx, fromCohereRerankRequest),
  spec: (req) => ({
    requestType: 'rerank',
    modelRequested: req.model,
    build: buildBy('rerank', req, (a, r, model) => a.rerankRequest?.(r, model)),
    parse: (body, att) => {
      const res = att.adapter.rerankResponse!(body, req, att.target.model);
      const out: CohereRerankResponse & { usage?: unknown } = toCohereRerankResponse(res, randomUUID());
      Object.defineProperty(out, 'usage', { value: res.usage, enumerable: false });
      return out;
    },
    usage: asUsage,
  }),
});
