// ConverseStream: AWS event-stream binary frames (application/vnd.amazon.eventstream) decoded into
// events named by their `:event-type` header, then translated into unified chat chunks.
import { eventStreamCodec, toUtf8 } from './codec.ts';
import type { ChatChunk, ChatDelta, FinishReason } from '../../unified/chat.ts';
import { GatewayError, upstreamTooLarge } from '../../unified/errors.ts';
import type { SseEvent, StreamContext, StreamTranslator } from '../../unified/stream.ts';
import type { StreamDecoder } from '../adapter.ts';
import { statusForBedrockErrorType } from './error.ts';
import { toFinishReason, toUsage } from './response.ts';
import type { BedrockStreamEvents } from './types.ts';

const PROVIDER = 'bedrock';
/** Event name given to stream exceptions: `exception:<exception type>`. */
const EXCEPTION = 'exception:';

/**
 * Splits bytes into event-stream messages (each starts with its 4-byte big-endian total length)
 * and decodes them with the codec, which checks the prelude and message CRCs. Events come out as
 * `{event: <:event-type>, data: <JSON payload>}`; exceptions as `{event: 'exception:<type>'}`.
 */
export function createEventStreamDecoder(opts: { maxEventBytes?: number; provider?: string } = {}): StreamDecoder {
  const max = opts.maxEventBytes ?? Infinity;
  const codec = eventStreamCodec();
  let buf: Uint8Array = new Uint8Array(0);
  const header = (headers: Record<string, { value: unknown }>, name: string): string | undefined => {
    const v = headers[name]?.value;
    return typeof v === 'string' ? v : undefined;
  };
  return {
    push(bytes: Uint8Array): SseEvent[] {
      if (buf.length === 0) buf = bytes;
      else {
        const joined = new Uint8Array(buf.length + bytes.length);
        joined.set(buf);
        joined.set(bytes, buf.length);
        buf = joined;
      }
      const out: SseEvent[] = [];
      while (buf.length >= 4) {
        const total = new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0);
        if (total < 16) throw new GatewayError(502, 'bedrock sent a malformed event-stream frame', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
        // The frame announces its length: one too large is refused before it is buffered.
        if (total > max) throw upstreamTooLarge(opts.provider ?? PROVIDER, 'stream event', max, 'max_stream_event_size_mb');
        if (buf.length < total) break;
        let message;
        try {
          message = codec.decode(buf.subarray(0, total));
        } catch (err) {
          throw new GatewayError(502, `bedrock sent an unreadable event-stream frame: ${(err as Error).message}`, { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
        }
        buf = buf.subarray(total);
        const type = header(message.headers, ':message-type') ?? 'event';
        const data = toUtf8(message.body);
        if (type === 'event') out.push({ event: header(message.headers, ':event-type') ?? '', data });
        else if (type === 'exception') out.push({ event: EXCEPTION + (header(message.headers, ':exception-type') ?? 'InternalServerException'), data });
        else {
          const msg = header(message.headers, ':error-message') ?? data;
          out.push({ event: EXCEPTION + (header(message.headers, ':error-code') ?? 'InternalServerException'), data: JSON.stringify({ message: msg }) });
        }
      }
      return out;
    },
    end(): SseEvent[] {
      if (buf.length > 0) throw new GatewayError(502, 'bedrock stream ended inside an event-stream frame', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
      return [];
    },
  };
}

export function createBedrockStreamTranslator(ctx: StreamContext): StreamTranslator {
  // Unified tool-call and reasoning indexes count their own kind of block, not content blocks.
  const toolIndex = new Map<number, number>();
  const reasoningIndex = new Map<number, number>();
  let usageSent = false;

  const chunk = (delta: ChatDelta, finish: FinishReason | null = null): ChatChunk => ({
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const reasoningSlot = (block: number): number => {
    let n = reasoningIndex.get(block);
    if (n === undefined) {
      n = reasoningIndex.size;
      reasoningIndex.set(block, n);
    }
    return n;
  };

  const handle = (name: string, data: unknown): ChatChunk[] => {
    switch (name) {
      case 'messageStart':
        return [chunk({ role: 'assistant', content: '' })];
      case 'contentBlockStart': {
        const ev = data as BedrockStreamEvents['contentBlockStart'];
        const tool = ev.start?.toolUse;
        if (!tool) return [];
        const n = toolIndex.size;
        toolIndex.set(ev.contentBlockIndex, n);
        return [chunk({ tool_calls: [{ index: n, id: tool.toolUseId, type: 'function', function: { name: tool.name, arguments: '' } }] })];
      }
      case 'contentBlockDelta': {
        const ev = data as BedrockStreamEvents['contentBlockDelta'];
        const d = ev.delta ?? {};
        if (typeof d.text === 'string') return d.text ? [chunk({ content: d.text })] : [];
        if (d.toolUse) {
          const n = toolIndex.get(ev.contentBlockIndex);
          if (n === undefined || !d.toolUse.input) return [];
          return [chunk({ tool_calls: [{ index: n, function: { arguments: d.toolUse.input } }] })];
        }
        const r = d.reasoningContent;
        if (r) {
          const n = reasoningSlot(ev.contentBlockIndex);
          if (r.text) return [chunk({ reasoning: r.text, reasoning_details: [{ type: 'reasoning.text', text: r.text, index: n }] })];
          if (r.signature) return [chunk({ reasoning_details: [{ type: 'reasoning.text', signature: r.signature, index: n }] })];
          if (r.redactedContent) return [chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: r.redactedContent, index: n }] })];
        }
        return [];
      }
      case 'messageStop': {
        const finish = toFinishReason((data as BedrockStreamEvents['messageStop']).stopReason);
        return finish === null ? [] : [chunk({}, finish)];
      }
      case 'metadata': {
        const usage = (data as BedrockStreamEvents['metadata']).usage;
        if (!usage || usageSent) return [];
        usageSent = true;
        return [{ id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, choices: [], usage: toUsage(usage) }];
      }
      default:
        return []; // contentBlockStop and event kinds added after this was written
    }
  };

  return {
    push(event: SseEvent): ChatChunk[] {
      const name = event.event ?? '';
      let data: unknown = {};
      if (event.data.trim()) {
        try {
          data = JSON.parse(event.data);
        } catch {
          throw new GatewayError(502, `bedrock sent an unparseable stream event (${name})`, { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: PROVIDER, upstream: true });
        }
      }
      if (name.startsWith(EXCEPTION)) {
        const type = name.slice(EXCEPTION.length);
        const message = (data as { message?: unknown; Message?: unknown }).message ?? (data as { Message?: unknown }).Message;
        throw new GatewayError(statusForBedrockErrorType(type), typeof message === 'string' && message ? message : `bedrock stream error (${type})`, {
          type: type.charAt(0).toUpperCase() + type.slice(1),
          provider: PROVIDER,
          upstream: true,
        });
      }
      return handle(name, data);
    },
    finish: () => [],
  };
}
