// Cohere v2 chat stream events -> unified chat completion chunks. Each SSE event carries
// `event: <type>` and a JSON `data:` with the same `type`; the payload sits under `delta.message`.
import type { ChatChunk, ChatDelta, FinishReason, Usage } from '../../unified/chat.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { SseEvent, StreamContext, StreamTranslator } from '../../unified/stream.ts';
import { toFinishReason, toUsage } from './response.ts';
import type { CohereStreamEvent } from './types.ts';

const PROVIDER = 'cohere';

export function createCohereStreamTranslator(ctx: StreamContext): StreamTranslator {
  let id = ctx.id;
  let usage: Usage | undefined;
  let usageSent = false;
  // Cohere's tool-call `index` counts tool calls; kept as given, mapped in case it ever differs.
  const toolIndex = new Map<number, number>();

  const chunk = (delta: ChatDelta, finish: FinishReason | null = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  const usageChunk = (): ChatChunk[] => {
    if (!usage || usageSent) return [];
    usageSent = true;
    return [{ id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, choices: [], usage }];
  };

  const handle = (ev: CohereStreamEvent): ChatChunk[] => {
    switch (ev.type) {
      case 'message-start':
        if (ev.id) id = ev.id;
        return [chunk({ role: 'assistant', content: '' })];
      case 'content-start':
      case 'content-delta': {
        const c = ev.delta?.message?.content;
        if (c?.thinking) return [chunk({ reasoning: c.thinking })];
        return c?.text ? [chunk({ content: c.text })] : [];
      }
      case 'tool-plan-delta': {
        const plan = ev.delta?.message?.tool_plan;
        return plan ? [chunk({ reasoning: plan })] : [];
      }
      case 'tool-call-start': {
        const call = ev.delta?.message?.tool_calls;
        const n = toolIndex.size;
        toolIndex.set(ev.index ?? n, n);
        return [chunk({
          tool_calls: [{ index: n, id: call?.id ?? `call_${n}`, type: 'function', function: { name: call?.function?.name ?? '', arguments: call?.function?.arguments ?? '' } }],
        })];
      }
      case 'tool-call-delta': {
        const args = ev.delta?.message?.tool_calls?.function?.arguments;
        const n = toolIndex.get(ev.index ?? toolIndex.size - 1) ?? Math.max(0, toolIndex.size - 1);
        return args ? [chunk({ tool_calls: [{ index: n, function: { arguments: args } }] })] : [];
      }
      case 'message-end': {
        const d = ev.delta;
        if (d?.finish_reason === 'ERROR' && d.error) {
          throw new GatewayError(502, d.error, { type: 'api_error', provider: PROVIDER, upstream: true });
        }
        const u = toUsage(d?.usage);
        if (u) usage = u;
        const finish = toFinishReason(d?.finish_reason) ?? 'stop';
        return [chunk({}, finish), ...usageChunk()];
      }
      default:
        return []; // content-end, tool-call-end, citations, debug and later event kinds
    }
  };

  return {
    push(event: SseEvent): ChatChunk[] {
      const data = event.data.trim();
      if (!data || data === '[DONE]') return [];
      return handle(parseEvent(event));
    },
    finish: usageChunk,
  };
}

function parseEvent(event: SseEvent): CohereStreamEvent {
  let value: unknown;
  try {
    value = JSON.parse(event.data);
  } catch {
    throw new GatewayError(502, `cohere sent an unparseable stream event${event.event ? ` (${event.event})` : ''}`, { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
  }
  if (typeof value !== 'object' || value === null) {
    throw new GatewayError(502, 'cohere sent a stream event that is not an object', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
  }
  const v = value as { type?: unknown };
  if (typeof v.type !== 'string') {
    if (!event.event) throw new GatewayError(502, 'cohere sent a stream event without a type', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
    v.type = event.event;
  }
  return v as CohereStreamEvent;
}
