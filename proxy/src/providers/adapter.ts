// What the pipeline needs from a wire format: how to build the upstream request for each unified
// operation, and how to read answers, stream events and errors back. Adapters are thin: the
// translation itself lives in each format's pure translator modules.
import type { ChatRequest, ChatResponse } from '../unified/chat.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../unified/embeddings.ts';
import type { RerankRequest, RerankResponse } from '../unified/rerank.ts';
import type { ProviderModelPage } from '../unified/models.ts';
import type { StreamContext, StreamTranslator } from '../unified/stream.ts';
import type { UpstreamErrorDetail } from '../unified/errors.ts';
import type { ProviderKey } from '../config/snapshot.ts';
import type { SseEvent } from '../unified/stream.ts';

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

/** The exact request about to be sent, for formats that sign it (AWS SigV4). */
export interface SignableRequest {
  method: string;
  /** `https://bedrock-runtime.us-east-1.amazonaws.com` */
  origin: string;
  /** Path with query string, as sent. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Turns a binary stream framing into events for the stream translator (instead of the SSE parser). */
export interface StreamDecoder {
  push(bytes: Uint8Array): SseEvent[];
  end(): SseEvent[];
}

export interface FormatAdapter {
  authHeaders(key: string | undefined): Record<string, string>;
  chatRequest(req: ChatRequest, model: string, stream: boolean): UpstreamRequest;
  chatResponse(body: unknown, ctx: ResponseContext): ChatResponse;
  chatStream(ctx: StreamContext): StreamTranslator;
  embeddingsRequest?(req: EmbeddingRequest, model: string): UpstreamRequest;
  embeddingsResponse?(body: unknown, req: EmbeddingRequest, model: string, up: UpstreamRequest): EmbeddingResponse;
  rerankRequest?(req: RerankRequest, model: string): UpstreamRequest;
  rerankResponse?(body: unknown, req: RerankRequest, model: string): RerankResponse;
  modelsRequest(pageToken: string | undefined): UpstreamRequest;
  modelsResponse(body: unknown): ProviderModelPage;
  error(status: number, body: unknown, headers?: Record<string, string | string[] | undefined>): UpstreamErrorDetail;
  /** Replaces `authHeaders` when present: the complete headers (and possibly path) to send. */
  sign?(req: SignableRequest, key: ProviderKey | undefined): Promise<{ headers: Record<string, string>; path: string }>;
  /** Stream framing other than SSE. */
  decodeStream?(): StreamDecoder;
}
