// A POST whose answer is a server-sent event stream (the playground): EventSource only GETs, so
// the body is read with fetch and split into events here. A refusal (not 2xx) throws the gateway's
// error object as ApiError, like every other /api call.
import { ApiError, signalUnauthorized } from './api.ts';

export interface SseEvent {
  /** The `event:` field; 'message' when the event names none. */
  event: string;
  data: string;
}

/** Splits complete events off the front of `buffer`; what is left is an incomplete one. */
export function takeEvents(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const text = buffer.replace(/\r\n?/g, '\n');
  let start = 0;
  for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
    const block = text.slice(start, end);
    start = end + 2;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) events.push({ event, data: data.join('\n') });
  }
  return { events, rest: text.slice(start) };
}

/**
 * POSTs `body` to `path` and hands each event to `onEvent` as it arrives. A JSON answer (not a
 * stream) is returned instead.
 */
export async function postStream(path: string, body: unknown, onEvent: (e: SseEvent) => void, signal?: AbortSignal): Promise<unknown> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { accept: 'text/event-stream, application/json', 'content-type': 'application/json', 'x-requested-with': 'XMLHttpRequest' },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.startsWith('text/event-stream') || !res.body) {
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = text;
    }
    if (res.ok) return data;
    if (res.status === 401) signalUnauthorized();
    const err = (data as { error?: { message?: string; param?: string; code?: string } } | undefined)?.error;
    throw new ApiError(res.status, err?.message ?? `${res.status} ${res.statusText}`, err?.param ?? undefined, err?.code);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const { events, rest } = takeEvents(buffer + decoder.decode(value, { stream: true }));
    buffer = rest;
    for (const e of events) onEvent(e);
  }
  for (const e of takeEvents(`${buffer}\n\n`).events) onEvent(e);
  return undefined;
}
