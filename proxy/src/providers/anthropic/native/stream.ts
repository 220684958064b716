// Unified chat chunks -> native Anthropic Messages stream events, for clients of
// /anthropic/v1/messages. One content block is open at a time, as Anthropic streams: message_start,
// then per block content_block_start / _delta... / _stop with increasing indexes, then
// message_delta (stop reason, usage) and message_stop. The inverse of ../stream.ts.
import type { ChatChunk, FinishReason, ReasoningDetail, ToolCallDelta, Usage } from '../../../unified/chat.ts';
import type { GatewayError } from '../../../unified/errors.ts';
import { readChunk, type ChunkReader } from '../../../unified/stream.ts';
import type { AnthropicContentBlock, AnthropicContentDelta, AnthropicDeltaUsage, AnthropicStreamEvent } from '../types.ts';
import { toAnthropicError } from './error.ts';
import { redactedData, toAnthropicUsage, toStopReason } from './response.ts';

export interface AnthropicStreamEncoder {
  /** Events for one unified chunk; the first call also emits message_start. */
  push(chunk: ChatChunk): AnthropicStreamEvent[];
  /** Closes the open block, then message_delta (stop reason, final usage) and message_stop. */
  finish(): AnthropicStreamEvent[];
  /** An `error` event, as Anthropic sends after a 200; the stream is over afterwards. */
  fail(err: GatewayError): AnthropicStreamEvent[];
}

type OpenBlock =
  | { kind: 'text'; index: number }
  /** A signature completes a thinking block: later thinking text opens a new one. */
  | { kind: 'thinking'; index: number; signed: boolean }
  | { kind: 'tool'; index: number; toolIndex: number }
  | { kind: 'redacted'; index: number };

/**
 * `model` is the model the client asked for; `messageId` the `msg_…` id of the message. Chunks
 * other than choice 0 (n > 1) are ignored: an Anthropic message has one answer.
 */
export function createAnthropicStreamEncoder(model: string, messageId: string): AnthropicStreamEncoder {
  let started = false;
  let over = false;
  let nextIndex = 0;
  let current: OpenBlock | undefined;
  let usage: Usage | undefined;
  let finishReason: FinishReason | null = null;
  let toolUse = false;
  /** Unified tool-call indexes already streamed: a closed block cannot be reopened. */
  const toolsSeen = new Set<number>();
  let out: AnthropicStreamEvent[] = [];

  const drain = () => {
    const events = out;
    out = [];
    return events;
  };

  const start = () => {
    if (started) return;
    started = true;
    // Usage normally arrives at the end; message_delta then carries the real counts.
    out.push({
      type: 'message_start',
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: toAnthropicUsage(usage),
      },
    });
  };

  const close = () => {
    if (!current) return;
    out.push({ type: 'content_block_stop', index: current.index });
    current = undefined;
  };

  const open = <T extends OpenBlock>(block: AnthropicContentBlock, make: (index: number) => T): T => {
    close();
    const opened = make(nextIndex++);
    out.push({ type: 'content_block_start', index: opened.index, content_block: block });
    current = opened;
    return opened;
  };

  const delta = (index: number, d: AnthropicContentDelta) => out.push({ type: 'content_block_delta', index, delta: d });

  const openThinking = () =>
    current?.kind === 'thinking' && !current.signed
      ? current
      : open({ type: 'thinking', thinking: '', signature: '' }, (index) => ({ kind: 'thinking', index, signed: false }));

  const thinkingText = (text: string) => {
    if (!text) return;
    delta(openThinking().index, { type: 'thinking_delta', thinking: text });
  };

  const signature = (sig: string) => {
    const block = openThinking();
    block.signed = true;
    delta(block.index, { type: 'signature_delta', signature: sig });
  };

  const reasoning = (text: string | undefined, details: ReasoningDetail[]) => {
    // Translators that send details repeat the text in `reasoning`: details win when they carry it.
    const detailText = details.some((d) => (d.type === 'reasoning.text' && d.text) || (d.type === 'reasoning.summary' && d.summary));
    if (!detailText && text) thinkingText(text);
    for (const d of details) {
      if (d.type === 'reasoning.text') {
        if (d.text) thinkingText(d.text);
        if (d.signature) signature(d.signature);
      } else if (d.type === 'reasoning.summary') {
        if (d.summary) thinkingText(d.summary);
      } else if (d.data || d.id !== undefined) {
        // Redacted blocks arrive whole.
        open({ type: 'redacted_thinking', data: redactedData(d) }, (index) => ({ kind: 'redacted', index }));
        close();
      }
    }
  };

  const text = (t: string) => {
    const block = current?.kind === 'text' ? current : open({ type: 'text', text: '' }, (index) => ({ kind: 'text', index }));
    delta(block.index, { type: 'text_delta', text: t });
  };

  const toolCall = (tc: ToolCallDelta) => {
    let block = current?.kind === 'tool' && current.toolIndex === tc.index ? current : undefined;
    if (!block) {
      // Providers stream calls one after another; pieces of a call resumed after the next one
      // began have no block to go to.
      if (toolsSeen.has(tc.index)) return;
      toolsSeen.add(tc.index);
      toolUse = true;
      const id = tc.id ?? `toolu_${messageId.replace(/^msg_/, '')}_${tc.index}`;
      block = open({ type: 'tool_use', id, name: tc.function.name ?? '', input: {} }, (index) => ({
        kind: 'tool',
        index,
        toolIndex: tc.index,
      }));
    }
    const args = tc.function.arguments;
    if (args) delta(block.index, { type: 'input_json_delta', partial_json: args });
  };

  const reader: ChunkReader = { reasoning, text, toolCall };

  return {
    push(chunk) {
      if (over) return [];
      if (chunk.usage) usage = chunk.usage;
      start();
      finishReason = readChunk(chunk, reader) ?? finishReason;
      return drain();
    },

    finish() {
      if (over) return [];
      over = true;
      start();
      close();
      const deltaUsage: AnthropicDeltaUsage = { output_tokens: usage?.completion_tokens ?? 0 };
      if (usage) {
        // Cumulative totals: the SDK overwrites message_start's counts with these.
        const u = toAnthropicUsage(usage);
        deltaUsage.input_tokens = u.input_tokens;
        deltaUsage.cache_creation_input_tokens = u.cache_creation_input_tokens;
        deltaUsage.cache_read_input_tokens = u.cache_read_input_tokens;
      }
      out.push({
        type: 'message_delta',
        delta: { stop_reason: toStopReason(finishReason, toolUse), stop_sequence: null },
        usage: deltaUsage,
      });
      out.push({ type: 'message_stop' });
      return drain();
    },

    fail(err) {
      if (over) return [];
      over = true;
      return [{ type: 'error', error: toAnthropicError(err).body.error }];
    },
  };
}

/** SSE framing as Anthropic sends it: the event name repeated in `event:`. */
export function encodeAnthropicEvent(ev: AnthropicStreamEvent): string {
  return `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
}
