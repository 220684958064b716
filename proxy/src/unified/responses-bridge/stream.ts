// Unified chat chunks → Responses stream events. One output item is open at a time: a different
// kind of output (or a new tool-call index) closes it with its `.done` events, the way OpenAI
// streams. The terminal response is assembled by the same builders chatToResponses uses.
import type { ChatChunk, FinishReason, ReasoningDetail, ToolCall, ToolCallDelta, Usage } from '../chat.ts';
import { readChunk, type ChunkReader } from '../stream.ts';
import type {
  ResponsesItemStatus,
  ResponsesObject,
  ResponsesOutputContent,
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesStreamEvent,
} from '../responses.ts';
import {
  functionCallItem,
  mapUsage,
  messageItem,
  outputItemId,
  reasoningItem,
  responsesEnvelope,
  terminalState,
  wantsEncryptedReasoning,
  type ResponseIds,
  type ResponseState,
} from './response.ts';

export interface ResponsesStreamEncoder {
  push(chunk: ChatChunk): ResponsesStreamEvent[];
  /** Closes open items and emits response.completed or response.incomplete. */
  finish(): ResponsesStreamEvent[];
  /** Emits `error` then response.failed; the stream is over afterwards. */
  fail(error: { message: string; code?: string }): ResponsesStreamEvent[];
}

type WithoutSequence<E> = E extends unknown ? Omit<E, 'sequence_number'> : never;
type Unsequenced = WithoutSequence<ResponsesStreamEvent>;

type OpenItem =
  | { kind: 'reasoning'; index: number; id: string; text: string; details: ReasoningDetail[]; summaryOpen: boolean }
  /** The last part is the one receiving deltas while `partOpen`. */
  | { kind: 'message'; index: number; id: string; parts: ResponsesOutputContent[]; partOpen: boolean }
  | { kind: 'tool'; index: number; id: string; toolIndex: number; call: ToolCall };

export function createResponsesStreamEncoder(req: ResponsesRequest, ids: ResponseIds): ResponsesStreamEncoder {
  let sequence = 0;
  let started = false;
  let over = false;
  let model = req.model;
  let usage: Usage | undefined;
  let finishReason: FinishReason | null = null;
  let current: OpenItem | undefined;
  const closed: ResponsesOutputItem[] = [];
  /** chat tool-call index → output index, for deltas that arrive after their item closed. */
  const closedTools = new Map<number, number>();
  let out: ResponsesStreamEvent[] = [];

  const emit = (event: Unsequenced) => {
    out.push({ ...event, sequence_number: sequence++ } as ResponsesStreamEvent);
  };
  const envelope = (state: Omit<ResponseState, 'model'>): ResponsesObject =>
    responsesEnvelope(req, ids, { ...state, model });
  const drain = () => {
    const events = out;
    out = [];
    return events;
  };

  const start = () => {
    if (started) return;
    started = true;
    emit({ type: 'response.created', response: envelope({ status: 'in_progress', output: [] }) });
    emit({ type: 'response.in_progress', response: envelope({ status: 'in_progress', output: [] }) });
  };

  /** Closes the open item first, so the new one's output index is the next free one. */
  const open = <T extends OpenItem>(make: (index: number) => T): T => {
    closeCurrent('completed');
    const item = make(closed.length);
    current = item;
    emit({ type: 'response.output_item.added', output_index: item.index, item: snapshot(item, 'in_progress', true) });
    return item;
  };

  /** The item as an output item; `added` is the empty form output_item.added carries. */
  const snapshot = (item: OpenItem, status: ResponsesItemStatus, added = false): ResponsesOutputItem => {
    switch (item.kind) {
      case 'reasoning':
        if (added) return { id: item.id, type: 'reasoning', summary: [] };
        return reasoningItem(item.id, item.text, item.details, req) ?? { id: item.id, type: 'reasoning', summary: [] };
      case 'message':
        return messageItem(item.id, added ? [] : item.parts.map((p) => ({ ...p })), status);
      case 'tool':
        return functionCallItem(item.id, { ...item.call, function: { ...item.call.function } }, status);
    }
  };

  const closePart = (item: Extract<OpenItem, { kind: 'message' }>) => {
    const part = item.parts.at(-1);
    if (!item.partOpen || !part) return;
    item.partOpen = false;
    const at = { item_id: item.id, output_index: item.index, content_index: item.parts.length - 1 };
    if (part.type === 'output_text') emit({ type: 'response.output_text.done', ...at, text: part.text, logprobs: [] });
    else emit({ type: 'response.refusal.done', ...at, refusal: part.refusal });
    emit({ type: 'response.content_part.done', ...at, part: { ...part } });
  };

  const closeCurrent = (status: ResponsesItemStatus) => {
    const item = current;
    if (!item) return;
    current = undefined;
    const at = { item_id: item.id, output_index: item.index };
    if (item.kind === 'reasoning' && item.summaryOpen) {
      emit({ type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text: item.text });
      const part = { type: 'summary_text' as const, text: item.text };
      emit({ type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part });
    }
    if (item.kind === 'message') closePart(item);
    if (item.kind === 'tool') {
      emit({ type: 'response.function_call_arguments.done', ...at, arguments: item.call.function.arguments });
      closedTools.set(item.toolIndex, item.index);
    }
    const done = snapshot(item, status);
    closed.push(done);
    emit({ type: 'response.output_item.done', output_index: item.index, item: done });
  };

  const openReasoning = () =>
    current?.kind === 'reasoning'
      ? current
      : open((index) => ({ kind: 'reasoning', index, id: outputItemId(ids, 'rs', index), text: '', details: [], summaryOpen: false }));

  const reasoningText = (delta: string) => {
    const item = openReasoning();
    const at = { item_id: item.id, output_index: item.index, summary_index: 0 };
    if (!item.summaryOpen) {
      item.summaryOpen = true;
      emit({ type: 'response.reasoning_summary_part.added', ...at, part: { type: 'summary_text', text: '' } });
    }
    item.text += delta;
    emit({ type: 'response.reasoning_summary_text.delta', ...at, delta });
  };

  const reasoningDetails = (details: ReasoningDetail[]) => {
    // Without `include`, details are never shown, so they must not open an item of their own.
    if (current?.kind !== 'reasoning' && !wantsEncryptedReasoning(req)) return;
    const item = openReasoning();
    item.details = mergeReasoningDetails(item.details, details);
  };

  const messageDelta = (kind: ResponsesOutputContent['type'], delta: string) => {
    const item =
      current?.kind === 'message'
        ? current
        : open((index) => ({ kind: 'message', index, id: outputItemId(ids, 'msg', index), parts: [], partOpen: false }));
    let part = item.parts.at(-1);
    if (!item.partOpen || part?.type !== kind) {
      closePart(item);
      part = kind === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' };
      item.parts.push(part);
      item.partOpen = true;
      emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: item.index,
        content_index: item.parts.length - 1,
        part: kind === 'output_text' ? { type: 'output_text', text: '', annotations: [] } : { type: 'refusal', refusal: '' },
      });
    }
    const at = { item_id: item.id, output_index: item.index, content_index: item.parts.length - 1 };
    if (part.type === 'output_text') {
      part.text += delta;
      emit({ type: 'response.output_text.delta', ...at, delta, logprobs: [] });
    } else {
      part.refusal += delta;
      emit({ type: 'response.refusal.delta', ...at, delta });
    }
  };

  const toolDelta = (tc: ToolCallDelta) => {
    const args = tc.function.arguments ?? '';
    const closedAt = closedTools.get(tc.index);
    if (closedAt !== undefined) {
      // A provider resumed a call after another began: no event can reopen the item, but the
      // terminal response still gets the whole arguments.
      const item = closed[closedAt];
      if (item.type === 'function_call') closed[closedAt] = { ...item, arguments: item.arguments + args };
      return;
    }
    let item = current?.kind === 'tool' && current.toolIndex === tc.index ? current : undefined;
    if (!item) {
      item = open((index) => ({
        kind: 'tool',
        index,
        id: outputItemId(ids, 'fc', index),
        toolIndex: tc.index,
        call: {
          id: tc.id ?? `call_${ids.responseId.replace(/^resp_/, '')}_${tc.index}`,
          type: 'function',
          function: { name: tc.function.name ?? '', arguments: '' },
        },
      }));
    } else if (tc.function.name && !item.call.function.name) {
      item.call.function.name = tc.function.name;
    }
    if (!args) return;
    item.call.function.arguments += args;
    emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: item.index, delta: args });
  };

  const reader: ChunkReader = {
    reasoning: (text, details) => {
      if (text) reasoningText(text);
      if (details.length) reasoningDetails(details);
    },
    text: (text, refusal) => messageDelta(refusal ? 'refusal' : 'output_text', text),
    toolCall: toolDelta,
  };

  return {
    push(chunk) {
      if (over) return [];
      if (chunk.model) model = chunk.model;
      start();
      if (chunk.usage) usage = chunk.usage;
      // The Responses API has a single output; extra choices (n > 1) have nowhere to go.
      finishReason = readChunk(chunk, reader) ?? finishReason;
      return drain();
    },

    finish() {
      if (over) return [];
      over = true;
      start();
      const end = terminalState(finishReason);
      closeCurrent(end.lastItemStatus);
      const response = envelope({
        status: end.status,
        output: closed,
        usage: mapUsage(usage),
        incomplete_details: end.incomplete_details,
      });
      emit({ type: end.status === 'completed' ? 'response.completed' : 'response.incomplete', response });
      return drain();
    },

    fail(error) {
      if (over) return [];
      over = true;
      start();
      // The open item is abandoned, not closed: it appears in the failed response as incomplete.
      const output = current ? [...closed, snapshot(current, 'incomplete')] : closed;
      emit({ type: 'error', code: error.code ?? null, message: error.message, param: null });
      emit({
        type: 'response.failed',
        response: envelope({
          status: 'failed',
          output,
          usage: mapUsage(usage),
          error: { code: error.code ?? 'server_error', message: error.message },
        }),
      });
      return drain();
    },
  };
}

/** SSE framing as OpenAI sends it: the event name repeated in `event:`. */
export function encodeResponsesEvent(ev: ResponsesStreamEvent): string {
  return `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
}

/**
 * Streamed reasoning_details arrive in pieces keyed by `index`: text, summary and data grow,
 * the latest id/signature/type win. Pieces without an index stand alone.
 */
export function mergeReasoningDetails(acc: ReasoningDetail[], deltas: ReasoningDetail[]): ReasoningDetail[] {
  const merged = acc.map((d) => ({ ...d }));
  for (const delta of deltas) {
    const target = delta.index === undefined ? undefined : merged.find((d) => d.index === delta.index);
    if (!target) {
      merged.push({ ...delta });
      continue;
    }
    target.type = delta.type;
    for (const key of ['text', 'summary', 'data'] as const) {
      if (delta[key] !== undefined) target[key] = (target[key] ?? '') + delta[key];
    }
    for (const key of ['id', 'signature'] as const) {
      if (delta[key] !== undefined) target[key] = delta[key];
    }
  }
  return merged;
}
