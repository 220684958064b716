// Unified chat chunks -> native ConverseStream events, for clients of /bedrock/.../converse-stream.
// One content block is open at a time, as Bedrock streams: messageStart, then per block an
// optional contentBlockStart (tool uses only), contentBlockDelta... and contentBlockStop with
// increasing indexes, then messageStop (stop reason) and metadata (usage, latency). The inverse of
// ../stream.ts; frames are written with ./eventstream.ts.
import type { ChatChunk, FinishReason, ReasoningDetail, ToolCallDelta, Usage } from '../../../unified/chat.ts';
import type { GatewayError } from '../../../unified/errors.ts';
import { readChunk, type ChunkReader } from '../../../unified/stream.ts';
import type { BedrockStreamEvents } from '../types.ts';
import { eventFrame, exceptionFrame } from './eventstream.ts';
import { streamExceptionType } from './error.ts';
import { toBedrockUsage, toStopReason } from './response.ts';

/** One ConverseStream event: the union member name and its payload. */
export type BedrockNativeEvent = {
  [K in keyof BedrockStreamEvents]: { type: K; payload: BedrockStreamEvents[K] };
}[keyof BedrockStreamEvents];

export interface BedrockStreamEncoder {
  /** Events for one unified chunk; the first call also emits messageStart. */
  push(chunk: ChatChunk): BedrockNativeEvent[];
  /** Closes the open block, then messageStop and metadata. */
  finish(): BedrockNativeEvent[];
}

type OpenBlock =
  | { kind: 'text'; index: number }
  /** A signature completes a reasoning block: later reasoning text opens a new one. */
  | { kind: 'reasoning'; index: number; signed: boolean }
  | { kind: 'tool'; index: number; toolIndex: number };

/**
 * `latencyMs` reports the time since the request arrived, for the metadata event. Chunks other
 * than choice 0 (n > 1) are ignored: a Converse answer has one message.
 */
export function createBedrockStreamEncoder(latencyMs: () => number, toolIdPrefix: string): BedrockStreamEncoder {
  let started = false;
  let over = false;
  let nextIndex = 0;
  let current: OpenBlock | undefined;
  let usage: Usage | undefined;
  let finishReason: FinishReason | null = null;
  let toolUse = false;
  /** Unified tool-call indexes already streamed: a closed block cannot be reopened. */
  const toolsSeen = new Set<number>();
  let out: BedrockNativeEvent[] = [];

  const drain = () => {
    const events = out;
    out = [];
    return events;
  };

  const start = () => {
    if (started) return;
    started = true;
    out.push({ type: 'messageStart', payload: { role: 'assistant' } });
  };

  const close = () => {
    if (!current) return;
    out.push({ type: 'contentBlockStop', payload: { contentBlockIndex: current.index } });
    current = undefined;
  };

  const open = <T extends OpenBlock>(make: (index: number) => T): T => {
    close();
    const opened = make(nextIndex++);
    current = opened;
    return opened;
  };

  type Delta = NonNullable<BedrockStreamEvents['contentBlockDelta']['delta']>;
  const delta = (index: number, d: Delta) => out.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: index, delta: d } });

  const reasoningBlock = () =>
    current?.kind === 'reasoning' && !current.signed ? current : open((index) => ({ kind: 'reasoning' as const, index, signed: false }));

  const reasoningText = (text: string) => {
    if (text) delta(reasoningBlock().index, { reasoningContent: { text } });
  };

  const reasoning = (text: string | undefined, details: ReasoningDetail[]) => {
    // Translators that send details repeat the text in `reasoning`: details win when they carry it.
    const detailText = details.some((d) => (d.type === 'reasoning.text' && d.text) || (d.type === 'reasoning.summary' && d.summary));
    if (!detailText && text) reasoningText(text);
    for (const d of details) {
      if (d.type === 'reasoning.text') {
        if (d.text) reasoningText(d.text);
        if (d.signature) {
          const block = reasoningBlock();
          block.signed = true;
          delta(block.index, { reasoningContent: { signature: d.signature } });
        }
      } else if (d.type === 'reasoning.summary') {
        if (d.summary) reasoningText(d.summary);
      } else if (d.data) {
        // Redacted reasoning arrives whole, in a block of its own.
        delta(open((index) => ({ kind: 'reasoning' as const, index, signed: true })).index, { reasoningContent: { redactedContent: d.data } });
        close();
      }
    }
  };

  const text = (t: string) => {
    const block = current?.kind === 'text' ? current : open((index) => ({ kind: 'text' as const, index }));
    delta(block.index, { text: t });
  };

  const toolCall = (tc: ToolCallDelta) => {
    let block = current?.kind === 'tool' && current.toolIndex === tc.index ? current : undefined;
    if (!block) {
      // Providers stream calls one after another; pieces of a call resumed after the next one
      // began have no block to go to.
      if (toolsSeen.has(tc.index)) return;
      toolsSeen.add(tc.index);
      toolUse = true;
      block = open((index) => ({ kind: 'tool' as const, index, toolIndex: tc.index }));
      const toolUseId = tc.id ?? `tooluse_${toolIdPrefix}_${tc.index}`;
      out.push({ type: 'contentBlockStart', payload: { contentBlockIndex: block.index, start: { toolUse: { toolUseId, name: tc.function.name ?? '' } } } });
    }
    const args = tc.function.arguments;
    if (args) delta(block.index, { toolUse: { input: args } });
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
      out.push({ type: 'messageStop', payload: { stopReason: toStopReason(finishReason, toolUse) } });
      out.push({ type: 'metadata', payload: { usage: toBedrockUsage(usage), metrics: { latencyMs: latencyMs() } } });
      return drain();
    },
  };
}

export function encodeBedrockEvent(ev: BedrockNativeEvent): string {
  return eventFrame(ev.type, ev.payload);
}

/** A failure after the 200, as the exception frame ConverseStream clients throw from. */
export function bedrockStreamError(err: GatewayError): string {
  return exceptionFrame(streamExceptionType(err, false), err.message);
}
