// The shape every provider-native chat endpoint shares (/anthropic messages and complete, /genai
// generateContent, /bedrock converse and invoke, /cohere chat): native request in, the unified chat
// pipeline against any provider, native answer, stream and errors out. Each endpoint supplies only
// its translators.
import type { Exchange } from '../../http/exchange.ts';
import type { ErrorRenderer } from '../../http/respond.ts';
import type { ChatRequest, ChatResponse, Usage } from '../../unified/chat.ts';
import type { StreamTranslator } from '../../unified/stream.ts';
import { requireOperation } from '../../unified/errors.ts';
import type { StreamPlan } from '../../pipeline/stream.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { EncodedItem } from '../../operations/chunk-stream-plan.ts';
import { readJson } from '../../operations/inference.ts';
import { httpInference } from '../serve.ts';

export interface NativeChat<TOut> {
  /** The native body into the unified request, `stream` set when the client asked for one. */
  parse(body: unknown, ctx: RequestContext): ChatRequest;
  /** `text_completion` for legacy completion APIs served over chat. */
  requestType?: 'chat_completion' | 'text_completion';
  /** The model as the client named it, when not the request's own (a path parameter). */
  modelRequested?(ctx: RequestContext): string;
  errorBody: ErrorRenderer;
  /** Reads the native answer's `usage` member. */
  usage(usage: unknown): Usage | undefined;
  answer(res: ChatResponse, req: ChatRequest, ctx: RequestContext): TOut;
  stream(chunks: StreamTranslator, req: ChatRequest, ids: { id: string; created: number }, ctx: RequestContext): StreamPlan<EncodedItem>;
}

export function nativeChat<TOut extends object>(spec: NativeChat<TOut>): (ex: Exchange) => Promise<void> {
  const base = spec.requestType ?? 'chat_completion';
  return httpInference<ChatRequest>({
    operation: 'chat',
    requestType: base,
    errorBody: spec.errorBody,
    read: (ctx) => readJson(ctx, (body) => spec.parse(body, ctx)),
    spec: (req, ctx) => {
      const stream = req.stream === true;
      return {
        requestType: stream ? `${base}_stream` : base,
        modelRequested: spec.modelRequested?.(ctx) ?? req.model,
        build: (t, adapter) => {
          requireOperation(t.provider, 'chat');
          return adapter.chatRequest(req, t.model, stream);
        },
        parse: (body, att, ids) => spec.answer(att.adapter.chatResponse(body, ids), req, ctx),
        usage: spec.usage,
        stream: stream ? (att, ids) => spec.stream(att.adapter.chatStream(ids), req, ids, ctx) : undefined,
      };
    },
  });
}
