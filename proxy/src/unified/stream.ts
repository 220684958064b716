import type { ChatChunk, FinishReason, ReasoningDetail, ToolCallDelta } from './chat.ts';

/** One server-sent event as read off an upstream stream. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Context every stream translator starts from (ids and timestamps the provider may not send). */
export interface StreamContext {
  /** Model name reported in chunks when the provider does not name one. */
  model: string;
  /** Fallback completion id. */
  id: string;
  /** Unix seconds. */
  created: number;
}

/**
 * Turns a provider's stream events into unified chunks. Translators always end with a usage chunk
 * (`choices: []`, `usage` set) when the provider reported usage; the pipeline drops it for clients
 * that did not ask for `stream_options.include_usage`, after recording the tokens. Stateful (tool-call indexes, ids), but
 * free of I/O: feed it events, get chunks back. `finish` flushes anything held at end of stream.
 */
export interface StreamTranslator {
  push(event: SseEvent): ChatChunk[];
  finish(): ChatChunk[];
}

/** What a chunk-to-native encoder does with each part of a unified chunk's first choice. */
export interface ChunkReader {
  reasoning(text: string | undefined, details: ReasoningDetail[]): void;
  /** Answer text; a refusal comes here too, with `refusal` set. */
  text(text: string, refusal: boolean): void;
  toolCall(tc: ToolCallDelta): void;
}

/**
 * Walks a unified chunk for the native stream encoders: choice 0 only (native APIs stream one
 * answer), reasoning, text, refusal and tool calls in that order. Returns its finish reason, if any.
 */
export function readChunk(chunk: ChatChunk, r: ChunkReader): FinishReason | undefined {
  const choice = chunk.choices.find((c) => c.index === 0);
  if (!choice) return undefined;
  const d = choice.delta;
  if (d.reasoning || d.reasoning_details?.length) r.reasoning(d.reasoning, d.reasoning_details ?? []);
  if (d.content) r.text(d.content, false);
  if (d.refusal) r.text(d.refusal, true);
  for (const tc of d.tool_calls ?? []) r.toolCall(tc);
  return choice.finish_reason ?? undefined;
}
