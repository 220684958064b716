// What the pipeline needs from a wire format: how to build the upstream request for each unified
// operation, and how to read answers, stream events and errors back. Adapters are thin: the
// translation itself lives in each format's pure translator modules.
import type { ChatRequest, ChatResponse } from '../unified/chat.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../unified/embeddings.ts';
import type { ProviderModelPage } from '../unified/models.ts';
import type { StreamContext, StreamTranslator } from '../unified/stream.ts';
import type { UpstreamErrorDetail } from '../unified/errors.ts';

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  /** Path below the provider's base path, with query string. */
  path: string;
  /** Name used by `custom_provider_config.request_path_overrides` (e.g. `chat_completion`). */
  requestType: string;
  body?: unknown;
  stream: boolean;
}

export interface ResponseContext {
  /** Bare upstream model name. */
  model: string;
  id: string;
  created: number;
}

export interface FormatAdapter {
  authHeaders(key: string | undefined): Record<string, string>;
  chatRequest(req: ChatRequest, model: string, stream: boolean): UpstreamRequest;
  chatResponse(body: unknown, ctx: ResponseContext): ChatResponse;
  chatStream(ctx: StreamContext): StreamTranslator;
  embeddingsRequest?(req: EmbeddingRequest, model: string): UpstreamRequest;
  embeddingsResponse?(body: unknown, req: EmbeddingRequest, model: string, up: UpstreamRequest): EmbeddingResponse;
  modelsRequest(pageToken: string | undefined): UpstreamRequest;
  modelsResponse(body: unknown): ProviderModelPage;
  error(status: number, body: unknown): UpstreamErrorDetail;
}
