// OpenAI and every OpenAI-compatible provider: the unified format is this wire format, so the
// request only needs the gateway's own fields removed and the model name set.
import type { FormatAdapter } from '../adapter.ts';
import type { ChatRequest, ChatChunk, ChatResponse } from '../../unified/chat.ts';
import type { UpstreamErrorDetail } from '../../unified/errors.ts';
import type { ProviderModelPage } from '../../unified/models.ts';
import type { EmbeddingResponse } from '../../unified/embeddings.ts';
import type { TextRequest } from '../../unified/text.ts';
import { fromOpenAICountTokens, toOpenAICountTokensRequest } from './count-tokens.ts';
import { toOpenAIForm, toOpenAIImageGeneration, toOpenAISpeech } from './media.ts';
import { toUpstreamBody } from './body.ts';
import { toOpenAIDecisionRequest, fromOpenAIDecisionResponse } from './decisions.ts';
import { checkOpenAIChat, checkOpenAIChunk, isObject, objectList, ShapeError } from '../../unified/answer-shape.ts';
import { GatewayError } from '../../unified/errors.ts';
import { openaiVideo } from './video.ts';

export { toUpstreamBody };

export function toOpenAIChatRequest(req: ChatRequest, model: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = toUpstreamBody(req, model);
  // The gateway's `reasoning` object maps onto OpenAI's flat field.
  if (req.reasoning) {
    delete body.reasoning;
    if (req.reasoning.effort && !req.reasoning_effort) body.reasoning_effort = req.reasoning.effort;
  }
  if (stream) {
    body.stream = true;
    // Always ask for usage so tokens are counted; the gateway hides the chunk from clients that did not ask.
    body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  }
  return body;
}

/** Legacy text completion body; streams always ask for usage, as chat does. */
export function toOpenAITextRequest(req: TextRequest, model: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = toUpstreamBody(req, model);
  if (stream) body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  return body;
}

export function fromOpenAIError(status: number, body: unknown): UpstreamErrorDetail {
  const e = (body as { error?: string | { message?: unknown; type?: unknown; code?: unknown; param?: unknown } } | null)?.error;
  if (e && typeof e === 'object') {
    return {
      message: typeof e.message === 'string' ? e.message : `upstream returned HTTP ${status}`,
      type: typeof e.type === 'string' ? e.type : 'upstream_error',
      ...(e.code !== undefined && e.code !== null ? { code: String(e.code) } : {}),
      ...(typeof e.param === 'string' ? { param: e.param } : {}),
    };
  }
  // OpenAI-compatible servers that shape errors their own way: Ollama's `{"error": "..."}`, and
  // Mistral's `{object: "error", message, type}` whose message is FastAPI's `{detail: [{loc, msg}]}` on a 422.
  if (typeof e === 'string' && e) return { message: e.slice(0, 1000), type: 'upstream_error' };
  const own = fromMessageError(body);
  if (own) return own;
  if (typeof body === 'string' && body.trim()) return { message: body.trim().slice(0, 1000), type: 'upstream_error' };
  return { message: `upstream returned HTTP ${status}`, type: 'upstream_error' };
}

function fromMessageError(body: unknown): UpstreamErrorDetail | undefined {
  if (!isObject(body)) return undefined;
  const type = typeof body.type === 'string' ? body.type : 'upstream_error';
  if (typeof body.message === 'string' && body.message) return { message: body.message.slice(0, 1000), type };
  const detail = isObject(body.message) && Array.isArray(body.message.detail) ? body.message.detail.filter(isObject) : [];
  if (detail.length === 0) return undefined;
  const first = detail[0];
  // `loc` is ['body', 'document', 'document_url']: the field is what follows 'body'.
  const loc = Array.isArray(first.loc) ? first.loc.filter((x): x is string | number => typeof x === 'string' || typeof x === 'number') : [];
  const param = (loc[0] === 'body' ? loc.slice(1) : loc).join('.');
  const message = detail.map((d) => `${Array.isArray(d.loc) ? d.loc.join('.') : ''}: ${typeof d.msg === 'string' ? d.msg : 'invalid'}`).join('; ');
  return { message: message.slice(0, 1000), type, ...(param ? { param } : {}) };
}

/**
 * One OpenAI stream event: a chunk with a `choices` list. OpenAI reports a failure mid-stream as an
 * `{"error": {...}}` event; it becomes the upstream's error, anything else of the wrong shape a ShapeError.
 */
export function readOpenAIChunk(data: string): ChatChunk {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new ShapeError('a stream event is not JSON');
  }
  if (isObject(chunk) && isObject(chunk.error) && !Array.isArray(chunk.choices)) {
    const e = fromOpenAIError(502, chunk);
    throw new GatewayError(502, e.message, { type: e.type, code: e.code, upstream: true });
  }
  checkOpenAIChunk(chunk);
  return chunk as ChatChunk;
}

export function fromOpenAIModels(body: unknown): ProviderModelPage {
  const data = objectList(body, 'data') as { id?: unknown; created?: unknown }[];
  return {
    models: data
      .filter((m) => typeof m.id === 'string')
      .map((m) => ({ id: m.id as string, ...(typeof m.created === 'number' ? { created: m.created } : {}) })),
  };
}

export const openaiAdapter: FormatAdapter = {
  video: openaiVideo,
  authHeaders: (key): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {}),
  chatRequest: (req, model, stream) => ({
    method: 'POST',
    path: '/chat/completions',
    requestType: 'chat_completion',
    body: toOpenAIChatRequest(req, model, stream),
    stream,
  }),
  chatResponse: (body) => {
    checkOpenAIChat(body);
    return body as ChatResponse;
  },
  chatStream: () => ({
    push: (ev) => (ev.data === '[DONE]' ? [] : [readOpenAIChunk(ev.data)]),
    finish: () => [],
  }),
  textRequest: (req, model, stream) => ({
    method: 'POST',
    path: '/completions',
    requestType: 'text_completion',
    body: toOpenAITextRequest(req, model, stream),
    stream,
  }),
  embeddingsRequest: (req, model) => ({
    method: 'POST',
    path: '/embeddings',
    requestType: 'embedding',
    body: toUpstreamBody(req, model),
    stream: false,
  }),
  embeddingsResponse: (body) => {
    objectList(body, 'data');
    return body as EmbeddingResponse;
  },
  moderationRequest: (req, model) => ({
    method: 'POST',
    path: '/moderations',
    requestType: 'moderation',
    body: toUpstreamBody(req, model),
    stream: false,
  }),
  ocrRequest: (req, model) => ({ method: 'POST', path: '/ocr', requestType: 'ocr', body: toUpstreamBody(req, model), stream: false }),
  decisionRequest: toOpenAIDecisionRequest,
  decisionResponse: fromOpenAIDecisionResponse,
  imageGenerationRequest: toOpenAIImageGeneration,
  formRequest: toOpenAIForm,
  speechRequest: toOpenAISpeech,
  modelsRequest: () => ({ method: 'GET', path: '/models', requestType: 'list_models', stream: false }),
  modelsResponse: fromOpenAIModels,
  countTokensRequest: toOpenAICountTokensRequest,
  countTokensResponse: fromOpenAICountTokens,
  error: fromOpenAIError,
};
