import { validated } from '../http/body.ts';
import { nullsAbsent } from '../unified/nulls.ts';
import { ChatRequestSchema, asUsage, type ChatRequest, type Usage } from '../unified/chat.ts';
import { requireOperation } from '../unified/errors.ts';
import { readJson, type AnswerIds, type InferenceSpec, type OperationSpec } from './inference.ts';
import { chunkStreamPlan, passthroughChunkPlan } from './chunk-stream-plan.ts';
import { openaiAdapter } from '../providers/openai/adapter.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import type { Attempted } from '../pipeline/invoke.ts';
import type { Target } from '../pipeline/target.ts';
import type { StreamPlan } from '../pipeline/stream.ts';

const parseChat = nullsAbsent(validated(ChatRequestSchema));

export const chatSpec: OperationSpec<ChatRequest> = {
  read: (ctx) => readJson(ctx, parseChat),
  // In process, answers are read as values: the text fast paths are for HTTP clients.
  spec: (chat, ctx) => new ChatCall(chat, ctx.http !== undefined),
};

// A class, not an object literal with closures: every chat request makes one, and its methods then
// cost no closure each (four, and a hidden class of its own, per request).
class ChatCall implements InferenceSpec<object, unknown> {
  readonly requestType: string;
  readonly modelRequested: string;
  /** Streaming, when the request asked for it (called as the spec's method). */
  readonly stream: ((attempt: Attempted, ids: AnswerIds) => StreamPlan<unknown>) | undefined;
  readonly #chat: ChatRequest;
  readonly #streaming: boolean;
  readonly #relayText: boolean;

  constructor(chat: ChatRequest, relayText: boolean) {
    const stream = chat.stream === true;
    this.requestType = stream ? 'chat_completion_stream' : 'chat_completion';
    this.modelRequested = chat.model;
    this.stream = stream ? ChatCall.prototype.streamPlan : undefined;
    this.#chat = chat;
    this.#streaming = stream;
    this.#relayText = relayText;
  }

  build(t: Target, adapter: FormatAdapter): UpstreamRequest {
    requireOperation(t.provider, 'chat');
    return adapter.chatRequest(this.#chat, t.model, this.#streaming);
  }

  parse(body: unknown, att: Attempted, ids: AnswerIds): object {
    return att.adapter.chatResponse(body, ids);
  }

  usage(usage: unknown): Usage | undefined {
    return asUsage(usage);
  }

  passthrough(att: Attempted): boolean {
    return this.#relayText && att.adapter === openaiAdapter;
  }

  streamPlan(att: Attempted, ids: AnswerIds): StreamPlan<unknown> {
    const includeUsage = this.#chat.stream_options?.include_usage === true;
    if (this.#relayText && att.adapter === openaiAdapter && !att.target.provider.sendBackRawResponse) return passthroughChunkPlan(includeUsage);
    return chunkStreamPlan(att.adapter.chatStream(ids), includeUsage);
  }
}
