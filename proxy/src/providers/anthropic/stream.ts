// Anthropic Messages SSE events -> unified chat completion chunks.
import type { ChatChunk, ChatDelta, FinishReason } from '../../unified/chat.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { SseEvent, StreamContext, StreamTranslator } from '../../unified/stream.ts';
import { statusForAnthropicErrorType } from './error.ts';
import { isBlock, toFinishReason, toUsage } from './response.ts';
import type { AnthropicContentBlock, AnthropicDeltaUsage, AnthropicStreamEvent, AnthropicUsage } from './types.ts';

const PROVIDER = 'anthropic';

export function createAnthropicStreamTranslator(ctx: StreamContext): StreamTranslator {
  let id = ctx.id;
  let model = ctx.model;
  // Unified tool-call and reasoning indexes count their own kind of block, not content blocks.
  const toolIndex = new Map<number, number>();
  const reasoningIndex = new Map<number, number>();
  let reasoningCount = 0;
  let usage: AnthropicUsage | undefined;
  let usageSent = false;

  const chunk = (delta: ChatDelta, finish: FinishReason | null = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  const usageChunk = (): ChatChunk[] => {
    if (!usage || usageSent) return [];
    usageSent = true;
    return [{ id, object: 'chat.completion.chunk', created: ctx.created, model, choices: [], usage: toUsage(usage) }];
  };

  const blockStart = (index: number, block: AnthropicContentBlock): ChatChunk[] => {
    if (isBlock(block, 'tool_use')) {
      const n = toolIndex.size;
      toolIndex.set(index, n);
      return [
        chunk({ tool_calls: [{ index: n, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] }),
      ];
    }
    if (isBlock(block, 'thinking')) {
      const n = reasoningCount++;
      reasoningIndex.set(index, n);
      return block.thinking ? [thinkingChunk(block.thinking, n)] : [];
    }
    if (isBlock(block, 'redacted_thinking')) {
      const n = reasoningCount++;
      reasoningIndex.set(index, n);
      return [chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: block.data, index: n }] })];
    }
    if (isBlock(block, 'text')) return block.text ? [chunk({ content: block.text })] : [];
    return []; // server-tool blocks have no unified equivalent
  };

  // Text is sent both as `reasoning` (what clients display) and as a reasoning_details fragment
  // (what they echo back), so a replayed turn can rebuild each signed thinking block.
  const thinkingChunk = (text: string, n: number): ChatChunk =>
    chunk({ reasoning: text, reasoning_details: [{ type: 'reasoning.text', text, index: n }] });

  const handle = (ev: AnthropicStreamEvent): ChatChunk[] => {
    switch (ev.type) {
      case 'message_start':
        id = ev.message.id || id;
        model = ev.message.model || model;
        usage = { ...ev.message.usage };
        return [chunk({ role: 'assistant', content: '' })];
      case 'content_block_start':
        return blockStart(ev.index, ev.content_block);
      case 'content_block_delta': {
        const d = ev.delta;
        switch (d.type) {
          case 'text_delta':
            return d.text ? [chunk({ content: d.text })] : [];
          case 'input_json_delta': {
            const n = toolIndex.get(ev.index);
            if (n === undefined || !d.partial_json) return [];
            return [chunk({ tool_calls: [{ index: n, function: { arguments: d.partial_json } }] })];
          }
          case 'thinking_delta': {
            const n = reasoningIndex.get(ev.index) ?? 0;
            return d.thinking ? [thinkingChunk(d.thinking, n)] : [];
          }
          case 'signature_delta': {
            const n = reasoningIndex.get(ev.index) ?? 0;
            return [chunk({ reasoning_details: [{ type: 'reasoning.text', signature: d.signature, index: n }] })];
          }
          default:
            return []; // citations_delta and future delta kinds
        }
      }
      case 'message_delta': {
        mergeUsage(ev.usage);
        const finish = toFinishReason(ev.delta?.stop_reason);
        return finish === null ? [] : [chunk({}, finish)];
      }
      case 'message_stop':
        return usageChunk();
      case 'error':
        throw new GatewayError(statusForAnthropicErrorType(ev.error?.type ?? ''), ev.error?.message || 'anthropic stream error', {
          type: ev.error?.type || 'api_error',
          provider: PROVIDER,
          upstream: true,
        });
      default:
        return []; // ping, content_block_stop, and event kinds added after this was written
    }
  };

  // message_delta counts are cumulative; input/cache counts there supersede message_start's.
  const mergeUsage = (u: AnthropicDeltaUsage | undefined) => {
    if (!u) return;
    usage ??= { input_tokens: 0, output_tokens: 0 };
    if (typeof u.output_tokens === 'number') usage.output_tokens = u.output_tokens;
    if (typeof u.input_tokens === 'number') usage.input_tokens = u.input_tokens;
    if (typeof u.cache_read_input_tokens === 'number') usage.cache_read_input_tokens = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') {
      usage.cache_creation_input_tokens = u.cache_creation_input_tokens;
    }
  };

  return {
    push(event: SseEvent): ChatChunk[] {
      if (!event.data.trim()) return [];
      return handle(parseEvent(event));
    },
    // A stream cut before message_stop still reports what was counted.
    finish: usageChunk,
  };
}

function parseEvent(event: SseEvent): AnthropicStreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    throw new GatewayError(502, `anthropic sent an unparseable stream event${event.event ? ` (${event.event})` : ''}`, {
      type: 'upstream_invalid_response',
      code: 'upstream_invalid_response',
      provider: PROVIDER,
      upstream: true,
    });
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    throw new GatewayError(502, 'anthropic sent a stream event without a type', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
  }
  return value as AnthropicStreamEvent;
}
