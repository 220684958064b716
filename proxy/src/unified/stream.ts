import type { ChatChunk } from './chat.ts';

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
