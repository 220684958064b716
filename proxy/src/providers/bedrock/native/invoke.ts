// InvokeModel / InvokeModelWithResponseStream for clients of /bedrock: the body is the model
// family's own format. Supported: Anthropic Claude's Messages body (`anthropic_version:
// "bedrock-2023-05-31"`, no `model`, no `stream`), for `anthropic.*` / `*.anthropic.*` / Claude
// model ids and for the gateway's `provider/model` ids (any provider then answers the Claude
// body). It reuses the Anthropic reverse translators: the answer is an Anthropic Message, and the
// stream's `chunk` events carry base64 `bytes` of Anthropic stream events, as Bedrock sends them.
import type { ChatRequest } from '../../../unified/chat.ts';
import { invalidRequest } from '../../../unified/errors.ts';
import type { AnthropicStreamEvent } from '../../anthropic/types.ts';
import { fromAnthropicRequest, type AnthropicNativeRequest } from '../../anthropic/native/request.ts';
import { eventFrame } from './eventstream.ts';

/** Model ids whose InvokeModel body the gateway reads (`provider/model` ids are the gateway's own). */
export function invokeBodyFormat(modelId: string): 'anthropic' | undefined {
  if (modelId.includes('/') && !modelId.startsWith('arn:')) return 'anthropic';
  return /(^|[.:/])anthropic\.|claude/i.test(modelId) ? 'anthropic' : undefined;
}

/** The Claude Messages body of InvokeModel -> unified request for `model` (the routed path id). */
export function fromInvokeRequest(body: unknown, model: string, modelId: string, stream: boolean): ChatRequest {
  if (invokeBodyFormat(modelId) === undefined) {
    throw invalidRequest(
      `InvokeModel through the gateway takes the Anthropic Claude Messages body only (anthropic.* / claude model ids or provider/model ids); use Converse for '${modelId}'`,
      'modelId',
    );
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('Malformed input request: the body must be a JSON object');
  const { anthropic_version: version, anthropic_beta: _beta, stream: _stream, model: _model, ...rest } = body as Record<string, unknown>;
  if (version !== undefined && typeof version !== 'string') throw invalidRequest('anthropic_version must be a string', 'anthropic_version');
  if (!Array.isArray(rest.messages)) throw invalidRequest('messages: Field required', 'messages');
  if (typeof rest.max_tokens !== 'number') throw invalidRequest('max_tokens: Field required', 'max_tokens');
  return fromAnthropicRequest({ ...(rest as unknown as AnthropicNativeRequest), model, ...(stream ? { stream: true } : {}) });
}

/** What Bedrock adds to the last stream event (`amazon-bedrock-invocationMetrics`). */
export interface InvocationMetrics {
  inputTokenCount: number;
  outputTokenCount: number;
  invocationLatency: number;
  firstByteLatency: number;
}

/**
 * Wraps the Anthropic encoder's events for the event stream: remembers the final usage from
 * message_delta and adds the invocation metrics to message_stop, as Bedrock does.
 */
export function withInvocationMetrics(latencyMs: () => number): (ev: AnthropicStreamEvent) => AnthropicStreamEvent {
  let input = 0;
  let output = 0;
  let firstByte: number | undefined;
  return (ev) => {
    firstByte ??= latencyMs();
    if (ev.type === 'message_start') input = ev.message.usage.input_tokens + (ev.message.usage.cache_read_input_tokens ?? 0);
    if (ev.type === 'message_delta') {
      output = ev.usage.output_tokens;
      if (typeof ev.usage.input_tokens === 'number') input = ev.usage.input_tokens + (ev.usage.cache_read_input_tokens ?? 0);
    }
    if (ev.type !== 'message_stop') return ev;
    const metrics: InvocationMetrics = { inputTokenCount: input, outputTokenCount: output, invocationLatency: latencyMs(), firstByteLatency: firstByte };
    return { ...ev, 'amazon-bedrock-invocationMetrics': metrics } as AnthropicStreamEvent;
  };
}

/** One `chunk` event: the model's own stream event as base64 JSON bytes. */
export function encodeInvokeChunk(ev: AnthropicStreamEvent): string {
  return eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(ev), 'utf8').toString('base64') });
}
