import type { FormatAdapter } from '../adapter.ts';
import { toGeminiRequest } from './request.ts';
import { fromGeminiResponse } from './response.ts';
import { createGeminiStreamTranslator } from './stream.ts';
import { toGeminiEmbedRequest, fromGeminiEmbedResponse } from './embeddings.ts';
import { fromGeminiError } from './error.ts';
import { fromGeminiModels } from './models.ts';
import { fromGeminiCountTokens, toGeminiCountTokensRequest } from './count-tokens.ts';
import type { GeminiGenerateContentResponse } from './types.ts';
import { geminiVideo } from './video.ts';

const modelPath = (model: string) => `/models/${encodeURIComponent(model)}`;

export const geminiAdapter: FormatAdapter = {
  video: geminiVideo,
  authHeaders: (key): Record<string, string> => (key ? { 'x-goog-api-key': key } : {}),
  chatRequest: (req, model, stream) => ({
    method: 'POST',
    path: stream ? `${modelPath(model)}:streamGenerateContent?alt=sse` : `${modelPath(model)}:generateContent`,
    requestType: 'chat_completion',
    body: toGeminiRequest(req),
    stream,
  }),
  chatResponse: (body, ctx) => fromGeminiResponse(body as GeminiGenerateContentResponse, ctx),
  chatStream: (ctx) => createGeminiStreamTranslator(ctx),
  embeddingsRequest: (req, model) => {
    const { method, body } = toGeminiEmbedRequest(req, model);
    return { method: 'POST', path: `${modelPath(model)}:${method}`, requestType: 'embedding', body, stream: false };
  },
  embeddingsResponse: (body, req, model, up) =>
    fromGeminiEmbedResponse(up.path.endsWith(':batchEmbedContents') ? 'batchEmbedContents' : 'embedContent', body, model, req.encoding_format),
  modelsRequest: (pageToken) => ({
    method: 'GET',
    path: `/models?pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ''}`,
    requestType: 'list_models',
    stream: false,
  }),
  modelsResponse: fromGeminiModels,
  countTokensRequest: toGeminiCountTokensRequest,
  countTokensResponse: fromGeminiCountTokens,
  error: fromGeminiError,
};
