import type { FormatAdapter } from '../adapter.ts';
import { toCohereRequest } from './request.ts';
import { fromCohereResponse } from './response.ts';
import { createCohereStreamTranslator } from './stream.ts';
import { toCohereEmbedRequest, fromCohereEmbedResponse } from './embeddings.ts';
import { toCohereRerankRequest, fromCohereRerankResponse } from './rerank.ts';
import { fromCohereError } from './error.ts';
import { fromCohereModels } from './models.ts';
import type { CohereChatResponse, CohereEmbedResponse, CohereRerankResponse } from './types.ts';

// The catalog's path prefix for cohere is empty: chat, embed and rerank live under /v2 but the
// models list only under /v1, so each path names its own version.
export const cohereAdapter: FormatAdapter = {
  authHeaders: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  chatRequest: (req, model, stream) => {
    const body = toCohereRequest(req, model);
    if (stream) body.stream = true;
    return { method: 'POST', path: '/v2/chat', requestType: 'chat_completion', body, stream };
  },
  chatResponse: (body, ctx) => fromCohereResponse(body as CohereChatResponse, ctx),
  chatStream: (ctx) => createCohereStreamTranslator(ctx),
  embeddingsRequest: (req, model) => ({ method: 'POST', path: '/v2/embed', requestType: 'embedding', body: toCohereEmbedRequest(req, model), stream: false }),
  embeddingsResponse: (body, _req, model) => fromCohereEmbedResponse(body as CohereEmbedResponse, model),
  rerankRequest: (req, model) => ({ method: 'POST', path: '/v2/rerank', requestType: 'rerank', body: toCohereRerankRequest(req, model), stream: false }),
  rerankResponse: (body, req, model) => fromCohereRerankResponse(body as CohereRerankResponse, req, model),
  modelsRequest: (pageToken) => ({
    method: 'GET',
    path: `/v1/models?page_size=1000${pageToken ? `&page_token=${encodeURIComponent(pageToken)}` : ''}`,
    requestType: 'list_models',
    stream: false,
  }),
  modelsResponse: fromCohereModels,
  error: fromCohereError,
};
