// Unified chat chunks -> native Cohere v2 chat stream events, for clients of /cohere/v2/chat with
// `stream: true`: message-start, then content-start / content-delta... / content-end per content
// block (thinking or text), tool-plan-delta, tool-call-start / -delta... / -end per call, and
// message-end (finish reason, usage). The inverse of ../stream.ts.
import type { ChatChunk, FinishReason, ToolCallDelta, Usage } from '../../../unified/chat.ts';
import type { GatewayError } from '../../../unified/errors.ts';
import { readChunk, type ChunkReader } from '../../../unified/stream.ts';
import type { CohereStreamEvent } from '../types.ts';
import { toCohereFinishReason, toCohereUsage } from './response.ts';

export interface CohereStreamEncoder {
  /** Events for one unified chunk; the first call also emits message-start. */
  push(chunk: ChatChunk): CohereStreamEvent[];
  /** Closes the open block, then message-end. */
  finish(): CohereStreamEvent[];
  /** A failure after the 200: message-end with finish_reason ERROR, as Cohere reports one. */
  fail(err: GatewayError): CohereStreamEvent[];
}

type OpenBlock = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number; toolIndex: number };

/**
 * `toolPlan`: the request offered tools, so reasoning streams as the tool plan (what Cohere sends
 * before tool calls); otherwise it streams as thinking content. Chunks other than choice 0 are ignored.
 */
export function createCohereStreamEncoder(messageId: string, toolPlan: boolean): CohereStreamEncoder {
  let started = false;
  let over = false;
  let current: OpenBlock | undefined;
  let nextContent = 0;
  let nextTool = 0;
  let usage: Usage | undefined;
  let finishReason: FinishReason | null = null;
  const toolsSeen = new Set<number>();
  let out: CohereStreamEvent[] = [];

  const drain = () => {
    const events = out;
    out = [];
    return events;
  };

  const start = () => {
    if (started) return;
    started = true;
    out.push({ type: 'message-start', id: messageId, delta: { message: { role: 'assistant' } } });
  };

  const close = () => {
    if (!current) return;
    if (current.kind === 'tool') out.push({ type: 'tool-call-end', index: current.index });
    else out.push({ type: 'content-end', index: current.index });
    current = undefined;
  };

  const content = (kind: 'text' | 'thinking', piece: string) => {
    if (current?.kind !== kind) {
      close();
      const index = nextContent++;
      current = { kind, index };
      const empty = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' };
      out.push({ type: 'content-start', index, delta: { message: { content: empty } } });
    }
    const delta = kind === 'text' ? { text: piece } : { thinking: piece };
    out.push({ type: 'content-delta', index: current.index, delta: { message: { content: delta } } });
  };

  const reasoning = (piece: string) => {
    if (!toolPlan) return content('thinking', piece);
    close();
    out.push({ type: 'tool-plan-delta', delta: { message: { tool_plan: piece } } });
  };

  const toolCall = (tc: ToolCallDelta) => {
    let block = current?.kind === 'tool' && current.toolIndex === tc.index ? current : undefined;
    if (!block) {
      // Pieces of a call resumed after the next one began have no block to go to.
      if (toolsSeen.has(tc.index)) return;
      toolsSeen.add(tc.index);
      close();
      block = { kind: 'tool', index: nextTool++, toolIndex: tc.index };
      current = block;
      const id = tc.id ?? `${messageId}_tool_${tc.index}`;
      out.push({
        type: 'tool-call-start',
        index: block.index,
        delta: { message: { tool_calls: { id, type: 'function', function: { name: tc.function.name ?? '', arguments: '' } } } },
      });
    }
    const args = tc.function.arguments;
    if (args) out.push({ type: 'tool-call-delta', index: block.index, delta: { message: { tool_calls: { function: { arguments: args } } } } });
  };

  const reader: ChunkReader = {
    reasoning: (t, details) => {
      const thought = t || details.map((r) => r.text ?? r.summary ?? '').join('');
      if (thought) reasoning(thought);
    },
    text: (t) => content('text', t),
    toolCall,
  };

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
      out.push({ type: 'message-end', delta: { finish_reason: toCohereFinishReason(finishReason, toolsSeen.size > 0), usage: toCohereUsage(usage) } });
      return drain();
    },

    fail(err) {
      if (over) return [];
      over = true;
      start();
      close();
      out.push({ type: 'message-end', delta: { finish_reason: 'ERROR', error: err.message } });
      return drain();
    },
  };
}

/** SSE framing as Cohere sends it: the event type repeated in `event:`. */
export function encodeCohereEvent(ev: CohereStreamEvent): string {
  return `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
}
