// Server-sent event framing, one helper per provider dialect.

/** `data: <json>\n\n` (OpenAI Chat Completions / Completions). */
export function dataEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';

/** `event: <name>\ndata: <json>\n\n` (Anthropic Messages, OpenAI Responses). */
export function namedEvent(name: string, payload: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/** Gemini `?alt=sse`: `data: <json>` terminated by CRLF CRLF, as the real API sends. */
export function geminiEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\r\n\r\n`;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
} as const;
