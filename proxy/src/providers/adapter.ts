// What the pipeline needs from a wire format: how to build the upstream request for each unified
// operation, and how to read answers, stream events and errors back. Adapters are thin: the
// translation itself lives in each format's pure translator modules.
import type { ChatRequest, ChatResponse } from '../unified/chat.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../unified/embeddings.ts';
import type { RerankRequest, RerankResponse } from '../unified/rerank.ts';
import type { ModerationRequest } from '../unified/moderation.ts';
import type { VideoCreateRequest, VideoJobState, VideoContentRef, VideoVariant } from '../unified/video.ts';
import type { FormPart } from '../unified/form.ts';
import type { OcrRequest } from '../unified/ocr.ts';
import type { DecisionRequest, DecisionResponse } from '../unified/decisions.ts';
import type { FormOperation, FormRequest, ImageGenerationRequest, ImageResponse, SpeechRequest } from '../unified/media.ts';
import type { TextRequest } from '../unified/text.ts';
import type { TokenCount } from '../unified/count-tokens.ts';
import type { ProviderModelPage } from '../unified/models.ts';
import type { StreamContext, StreamTranslator } from '../unified/stream.ts';
import type { UpstreamErrorDetail } from '../unified/errors.ts';
import type { ProviderKey } from './runtime.ts';
import type { DecisionsShape } from './catalog.ts';
import type { SseEvent } from '../unified/stream.ts';

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the provider's base path, with query string. */
  path: string;
  /**
   * The path is below the base URL's own path, beside the version prefix rather than under it
   * (OpenRouter's `/api/alpha/decisions` beside `/api/v1`).
   */
  unversioned?: boolean;
  /** Name used by `custom_provider_config.request_path_overrides` (e.g. `chat_completion`). */
  requestType: string;
  body?: unknown;
  stream: boolean;
  /** A body that is not JSON (a multipart form), sent as these bytes instead of `body`. */
  payload?: { bytes: Buffer; contentType: string };
  /** The parts `payload` was encoded from, for a `sign` that rewrites one per key (Azure's deployment in `model`). */
  form?: readonly FormPart[];
  /** Accept header, when neither JSON nor SSE (binary audio). */
  accept?: string;
  /** Headers of the client's own request that the provider's API documents (see client-headers.ts). */
  headers?: Record<string, string>;
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
  /** The provider's base path that `path` starts with (a key with its own endpoint replaces it). */
  basePath?: string;
  /** A multipart body's parts (UpstreamRequest.form). */
  form?: readonly FormPart[];
}

/** What `sign` settled on: headers and path, and where a key's own endpoint moves the request, its origin (and body). */
export interface SignedRequest {
  headers: Record<string, string>;
  path: string;
  /** Another origin than the provider's (a key with its own endpoint, e.g. an Azure resource). */
  origin?: string;
  /** A rewritten body (e.g. the model renamed to a key's deployment). */
  body?: string;
  /** A re-encoded multipart body; `headers` then carry its content type. */
  payload?: { bytes: Buffer; contentType: string };
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
  /** Native legacy text completion (OpenAI wire format); without it, text is emulated over chat when allowed. */
  textRequest?(req: TextRequest, model: string, stream: boolean): UpstreamRequest;
  embeddingsRequest?(req: EmbeddingRequest, model: string): UpstreamRequest;
  embeddingsResponse?(body: unknown, req: EmbeddingRequest, model: string, up: UpstreamRequest): EmbeddingResponse;
  rerankRequest?(req: RerankRequest, model: string): UpstreamRequest;
  rerankResponse?(body: unknown, req: RerankRequest, model: string): RerankResponse;
  /** Moderation, where the provider speaks OpenAI's moderation API (the answer is OpenAI's shape). */
  moderationRequest?(req: ModerationRequest, model: string): UpstreamRequest;
  /** Video generation jobs, where the provider has them (OpenAI's Videos API, Veo's long-running operations). */
  video?: VideoAdapter;
  /** Document OCR, where the provider speaks Mistral's OCR API (the answer is the unified OCR shape). */
  ocrRequest?(req: OcrRequest, model: string): UpstreamRequest;
  /** Decisions in the provider's shape: OpenAI's Decisions API or System One's. */
  decisionRequest?(req: DecisionRequest, model: string, shape: DecisionsShape): UpstreamRequest;
  decisionResponse?(body: unknown, req: DecisionRequest, shape: DecisionsShape): DecisionResponse;
  /** Token counting, where the provider has an endpoint for it. */
  countTokensRequest?(req: ChatRequest, model: string): UpstreamRequest;
  countTokensResponse?(body: unknown): TokenCount;
  /** Image generation; the answer is OpenAI's images shape (translated where the format differs). */
  imageGenerationRequest?(req: ImageGenerationRequest, model: string): UpstreamRequest;
  imageGenerationResponse?(body: unknown, req: ImageGenerationRequest, model: string): ImageResponse;
  /** Multipart operations (image edit and variation, transcription): the client's form, model replaced. */
  formRequest?(op: FormOperation, form: FormRequest, model: string): UpstreamRequest;
  /** Speech: the answer is relayed as the provider's audio bytes (or its SSE events). */
  speechRequest?(req: SpeechRequest, model: string): UpstreamRequest;
  modelsRequest(pageToken: string | undefined): UpstreamRequest;
  modelsResponse(body: unknown): ProviderModelPage;
  error(status: number, body: unknown, headers?: Record<string, string | string[] | undefined>): UpstreamErrorDetail;
  /** Replaces `authHeaders` when present: the complete headers (and possibly path) to send. */
  sign?(req: SignableRequest, key: ProviderKey | undefined): Promise<SignedRequest>;
  /**
   * The provider answered 401 to a request signed with `sent` headers: drop any cached credential.
   * True when signing again may succeed; the call is then signed and sent once more.
   */
  authRejected?(key: ProviderKey | undefined, sent: Record<string, string>): boolean;
  /** Stream framing other than SSE; one frame may hold at most `maxEventBytes`. */
  decodeStream?(opts: { maxEventBytes: number; provider: string }): StreamDecoder;
}

/**
 * A provider's video jobs: how to start one, ask where it stands and fetch its bytes, and what its
 * answers say in the unified job shape (unified/video.ts). The management calls only OpenAI's
 * Videos API has (remix, edits, extensions, delete, characters) are optional.
 */
export interface VideoAdapter {
  create(req: VideoCreateRequest, model: string): UpstreamRequest;
  /** A create or poll answer as the job's state (throws when it is not one). */
  state(body: unknown): VideoJobState;
  /** The seconds and size a create asked for, recorded where the provider's answer does not say them. */
  asked(req: VideoCreateRequest): { seconds: string; size: string };
  /**
   * True: the content is fetched by the job's id (OpenAI's Videos API). Otherwise the finished job's
   * answer names where it is (`state().content`), read again when the record does not hold it.
   */
  contentById?: true;
  /** Where the job stands: `upstreamId` is what `state` read from the create answer. */
  retrieve(upstreamId: string, model: string): UpstreamRequest;
  /** The finished video's bytes (undefined: this variant does not exist here; inline content is decoded by the caller). */
  content(upstreamId: string, variant: VideoVariant, ref: VideoContentRef | undefined): UpstreamRequest | undefined;
  /** Deletes the provider's copy; without it, deleting forgets the gateway's record only. */
  delete?(upstreamId: string): UpstreamRequest;
  remix?(upstreamId: string, prompt: string, extra: Readonly<Record<string, string>>): UpstreamRequest;
  edit?(upstreamId: string, prompt: string, extra: Readonly<Record<string, string>>): UpstreamRequest;
  extend?(upstreamId: string, prompt: string, seconds: string, extra: Readonly<Record<string, string>>): UpstreamRequest;
  /** Characters: a reference video uploaded under a name (the client's form as sent). */
  createCharacter?(parts: readonly FormPart[]): UpstreamRequest;
  getCharacter?(id: string): UpstreamRequest;
}
