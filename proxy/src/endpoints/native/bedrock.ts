// /bedrock/model/{modelId}/converse, /converse-stream, /invoke, /invoke-with-response-stream: the
// AWS Bedrock Runtime API in front of every provider, so @aws-sdk/client-bedrock-runtime works
// unchanged but for its endpoint. The client's SigV4 signature is not checked (it was made with
// credentials the gateway does not hold); the gateway authenticates its own callers separately.
//
// `{modelId}` may be `provider/model` (URL-encoded by the SDK: `openai%2Fgpt-4o`) to reach any
// provider. Any other id (`anthropic.claude-...`, an inference profile, an ARN) is a Bedrock id:
// it goes to the `bedrock` provider when one is configured, else through the bare-model rules
// (the only provider, or a well-known family).
import { randomUUID } from 'node:crypto';
import type { Exchange } from '../../http/exchange.ts';
import type { Usage } from '../../unified/chat.ts';
import { PROVIDER_KINDS } from '../../providers/catalog.ts';
import type { BedrockConverseResponse, BedrockUsage } from '../../providers/bedrock/types.ts';
import type { AnthropicMessage } from '../../providers/anthropic/types.ts';
import { fromBedrockConverseRequest } from '../../providers/bedrock/native/request.ts';
import { toBedrockConverseResponse } from '../../providers/bedrock/native/response.ts';
import { bedrockStreamError, createBedrockStreamEncoder, encodeBedrockEvent } from '../../providers/bedrock/native/stream.ts';
import { toBedrockError, streamExceptionType } from '../../providers/bedrock/native/error.ts';
import { EVENT_STREAM_CONTENT_TYPE, exceptionFrame } from '../../providers/bedrock/native/eventstream.ts';
import { encodeInvokeChunk, fromInvokeRequest, withInvocationMetrics } from '../../providers/bedrock/native/invoke.ts';
import { toAnthropicMessage } from '../../providers/anthropic/native/response.ts';
import { anthropicUsage } from './anthropic.ts';
import { createAnthropicStreamEncoder } from '../../providers/anthropic/native/stream.ts';
import { nativeChat } from './native-chat.ts';
import { encodedStreamPlan, type EncodedItem } from '../../operations/chunk-stream-plan.ts';
import type { StreamPlan } from '../../pipeline/stream.ts';
import type { RequestContext } from '../../pipeline/context.ts';

/** The gateway model name for a path's model id (see the header comment). */
export function routeBedrockModel(providers: ReadonlyMap<string, unknown>, modelId: string): string {
  const slash = modelId.indexOf('/');
  if (slash > 0) {
    const prefix = modelId.slice(0, slash);
    if (providers.has(prefix) || PROVIDER_KINDS[prefix]) return modelId;
  }
  return providers.has('bedrock') ? `bedrock/${modelId}` : modelId;
}

function bedrockUsage(u: unknown): Usage | undefined {
  const v = u as BedrockUsage | undefined;
  if (typeof v?.inputTokens !== 'number') return undefined;
  const prompt = v.inputTokens + (v.cacheReadInputTokens ?? 0) + (v.cacheWriteInputTokens ?? 0);
  const completion = v.outputTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Event-stream answers: binary frames, written as latin1 text by the relay. */
function eventStream(plan: StreamPlan<EncodedItem>, extraHeaders: Record<string, string> = {}): StreamPlan<EncodedItem> {
  return {
    ...plan,
    headers: { 'content-type': EVENT_STREAM_CONTENT_TYPE, 'x-amzn-requestid': randomUUID(), ...extraHeaders },
    encoding: 'latin1',
  };
}

const latencyOf = (ctx: RequestContext) => () => Math.round(performance.now() - ctx.started);

function converse(stream: boolean) {
  return nativeChat<BedrockConverseResponse>({
    parse: (body, ctx) => fromBedrockConverseRequest(body, routeBedrockModel(ctx.snapshot.providers, ctx.params[0]), stream),
    errorBody: toBedrockError,
    usage: bedrockUsage,
    answer: (res, _req, ctx) => toBedrockConverseResponse(res, latencyOf(ctx)()),
    stream: (chunks, _req, ids, ctx) =>
      eventStream(
        encodedStreamPlan(chunks, createBedrockStreamEncoder(latencyOf(ctx), ids.id.replace(/^chatcmpl-/, '').replace(/-/g, '')), encodeBedrockEvent, bedrockStreamError),
      ),
  });
}

function invoke(stream: boolean) {
  return nativeChat<AnthropicMessage>({
    parse: (body, ctx) => fromInvokeRequest(body, routeBedrockModel(ctx.snapshot.providers, ctx.params[0]), ctx.params[0], stream),
    errorBody: toBedrockError,
    usage: anthropicUsage,
    answer: (res, _req, ctx) => toAnthropicMessage(res, ctx.params[0]),
    stream: (chunks, _req, ids, ctx) => {
      const encoder = createAnthropicStreamEncoder(ctx.params[0], `msg_bdrk_${ids.id.replace(/^chatcmpl-/, '').replace(/-/g, '')}`);
      const metrics = withInvocationMetrics(latencyOf(ctx));
      return eventStream(
        encodedStreamPlan(chunks, encoder, (ev) => encodeInvokeChunk(metrics(ev)), (err) => exceptionFrame(streamExceptionType(err, true), err.message)),
        { 'x-amzn-bedrock-content-type': 'application/json' },
      );
    },
  });
}

// The id is one path segment, normally URL-encoded (`openai%2Fgpt-4o`); `(.+)` also takes one
// written with raw slashes.
export const BEDROCK_PATTERNS: [string, { POST: (ex: Exchange) => Promise<void> }][] = [
  ['/bedrock/model/(.+)/converse', { POST: converse(false) }],
  ['/bedrock/model/(.+)/converse-stream', { POST: converse(true) }],
  ['/bedrock/model/(.+)/invoke', { POST: invoke(false) }],
  ['/bedrock/model/(.+)/invoke-with-response-stream', { POST: invoke(true) }],
];
