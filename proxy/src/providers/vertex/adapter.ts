// Vertex AI: Gemini models through Google's generateContent, Claude models through Anthropic's
// Messages API behind rawPredict, Mistral's OCR model behind rawPredict (ocr.ts). The Gemini and Anthropic translators do the translation; only
// paths, two body tweaks for Claude and authentication differ.
import type { FormatAdapter, UpstreamRequest } from '../adapter.ts';
import type { ChatRequest } from '../../unified/chat.ts';
import { GatewayError, errorJson, unsupportedOperation, type UpstreamErrorDetail } from '../../unified/errors.ts';
import { toGeminiRequest } from '../gemini/request.ts';
import { fromGeminiResponse } from '../gemini/response.ts';
import { createGeminiStreamTranslator } from '../gemini/stream.ts';
import { fromGeminiError } from '../gemini/error.ts';
import type { GeminiGenerateContentResponse } from '../gemini/types.ts';
import { toAnthropicRequest } from '../anthropic/request.ts';
import { fromAnthropicResponse } from '../anthropic/response.ts';
import { createAnthropicStreamTranslator } from '../anthropic/stream.ts';
import { fromAnthropicError } from '../anthropic/error.ts';
import type { AnthropicMessage, AnthropicMessagesRequest } from '../anthropic/types.ts';
import { publisherFor, publisherModelPath } from './paths.ts';
import { fromVertexEmbedResponse, toVertexEmbedRequest } from './embeddings.ts';
import { toVertexOcrRequest } from './ocr.ts';
import { signVertex, vertexAuthRejected } from './auth.ts';
import { vertexVideo } from './video.ts';

/** The Messages API version Vertex serves Claude under; it goes in the body, not a header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export type VertexClaudeRequest = Omit<AnthropicMessagesRequest, 'model'> & { anthropic_version: string };

/** Anthropic's Messages body as Vertex takes it: the model is in the URL, the API version in the body. */
export function toVertexClaudeRequest(req: ChatRequest, model: string, stream: boolean): VertexClaudeRequest {
  const { model: _inUrl, ...body } = toAnthropicRequest(req, model);
  if (stream) body.stream = true;
  else delete body.stream;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body };
}

function chatRequest(req: ChatRequest, model: string, stream: boolean): UpstreamRequest {
  if (publisherFor(model) === 'anthropic') {
    return {
      method: 'POST',
      path: publisherModelPath('anthropic', model, stream ? 'streamRawPredict' : 'rawPredict'),
      requestType: 'chat_completion',
      body: toVertexClaudeRequest(req, model, stream),
      stream,
    };
  }
  return {
    method: 'POST',
    path: publisherModelPath('google', model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
    requestType: 'chat_completion',
    body: toGeminiRequest(req),
    stream,
  };
}

/** Errors from Claude's backend keep Anthropic's shape; Vertex's own (auth, quota, routing) are Google's. */
function vertexError(status: number, body: unknown): UpstreamErrorDetail {
  // Plain text: read as a Google error below.
  const parsed = errorJson(body) ?? body;
  const anthropicShaped = typeof parsed === 'object' && parsed !== null && (parsed as { type?: unknown }).type === 'error';
  if (anthropicShaped) return fromAnthropicError(status, parsed);
  const detail = fromGeminiError(status, parsed);
  return { ...detail, message: detail.message.replace(/^Gemini returned/, 'Vertex AI returned') };
}

export const vertexAdapter: FormatAdapter = {
  video: vertexVideo,
  // Authentication is per request (a cached OAuth token or an API key, and the key's project), done in `sign`.
  authHeaders: () => ({}),
  sign: signVertex,
  authRejected: vertexAuthRejected,
  chatRequest,
  chatResponse: (body, ctx) =>
    publisherFor(ctx.model) === 'anthropic'
      ? fromAnthropicResponse(body as AnthropicMessage, ctx.created)
      : fromGeminiResponse(body as GeminiGenerateContentResponse, ctx),
  chatStream: (ctx) => (publisherFor(ctx.model) === 'anthropic' ? createAnthropicStreamTranslator(ctx) : createGeminiStreamTranslator(ctx)),
  embeddingsRequest: (req, model) => {
    if (publisherFor(model) !== 'google') {
      throw new GatewayError(400, `Vertex AI embeddings come from Google's models (text-embedding-*, gemini-embedding-*), not '${model}'`, {
        type: 'unsupported_operation',
        code: 'unsupported_operation',
        param: 'model',
        provider: 'vertex',
      });
    }
    return { method: 'POST', path: publisherModelPath('google', model, 'predict'), requestType: 'embedding', body: toVertexEmbedRequest(req), stream: false };
  },
  embeddingsResponse: (body, req, model) => fromVertexEmbedResponse(body, model, req.encoding_format),
  ocrRequest: toVertexOcrRequest,
  // Listing models needs the Model Garden API (v1beta1 publishers.models.list): not offered yet.
  modelsRequest: () => {
    throw unsupportedOperation('vertex', 'list_models');
  },
  modelsResponse: () => {
    throw unsupportedOperation('vertex', 'list_models');
  },
  error: vertexError,
};
