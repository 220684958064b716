// Token counting: POST /v1/responses/input_tokens here, and the native Anthropic and GenAI count
// endpoints (native/count-tokens.ts) through the same runner. Each target provider's own count
// endpoint answers (OpenAI input_tokens, Anthropic count_tokens, Gemini countTokens), reached
// through the chat translators; a provider without one gets the unsupported-operation 400.
import { validated } from '../http/body.ts';
import { dropNulls } from '../unified/nulls.ts';
import type { ChatRequest } from '../unified/chat.ts';
import { normalizeCountTokensBody, toCountTokensResponse, toInputTokensBody, type CountTokensResponse, type TokenCount } from '../unified/count-tokens.ts';
import { requireOperation, unsupportedOperation } from '../unified/errors.ts';
import { ResponsesRequestSchema, type ResponsesRequest } from '../unified/responses.ts';
import { responsesToChat } from '../unified/responses-bridge/request.ts';
import type { UpstreamRequest } from '../providers/adapter.ts';
import { INPUT_TOKENS_PATH } from '../providers/openai/count-tokens.ts';
import type { Attempted } from '../pipeline/invoke.ts';
import type { Target } from '../pipeline/target.ts';
import { readJson, type OperationSpec, type InferenceSpec } from './inference.ts';

const REQUEST_TYPE = 'count_tokens';

export interface CountTokensSpec<TOut> {
  modelRequested: string;
  /** The unified request; called only for targets that need it (it may refuse what it cannot express). */
  chat: () => ChatRequest;
  /** A request to send as it is instead of translating `chat` (same-format targets). */
  direct?: (target: Target) => UpstreamRequest | undefined;
  render: (count: TokenCount, attempt: Attempted) => TOut;
}

export function countTokensSpec<TOut>(spec: CountTokensSpec<TOut>): InferenceSpec<TOut, never> {
  return {
    requestType: REQUEST_TYPE,
    modelRequested: spec.modelRequested,
    build: (t, adapter) => {
      requireOperation(t.provider, 'count_tokens');
      if (!adapter.countTokensRequest) throw unsupportedOperation(t.provider.name, 'count_tokens');
      return spec.direct?.(t) ?? adapter.countTokensRequest(spec.chat(), t.model);
    },
    // The runner adds extra_fields to whatever shape the endpoint answers in.
    parse: (body, att) => spec.render(att.adapter.countTokensResponse!(body), att),
    // A count generates nothing; its tokens are not usage.
    usage: () => undefined,
  };
}

/** Evaluates `f` once, on first use. */
export function lazy<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

const parseCount = ((check) => (body: unknown): ResponsesRequest => check(normalizeCountTokensBody(dropNulls(body))))(validated(ResponsesRequestSchema));

/** POST /v1/responses/input_tokens: OpenAI's request and answer shape, any provider behind it. */
export const inputTokensSpec: OperationSpec<ResponsesRequest> = {
  read: (ctx) => readJson(ctx, parseCount),
  spec: (req) =>
    countTokensSpec<CountTokensResponse>({
      modelRequested: req.model,
      chat: lazy(() => responsesToChat(req)),
      // OpenAI's endpoint takes this very request: it goes as sent, hosted tools and all.
      direct: (t) =>
        t.provider.kind.format === 'openai'
          ? { method: 'POST', path: INPUT_TOKENS_PATH, requestType: REQUEST_TYPE, body: toInputTokensBody(req, t.model), stream: false }
          : undefined,
      render: (count) => toCountTokensResponse(count, req.model),
    }),
};
