// The OpenAI Realtime event protocol as the gateway checks it: which client events exist, how a
// frame from the client is read, and the `error` event the SDK understands (it raises it as an
// OpenAIRealtimeError with the code and message). Pure functions: the session (session.ts) does the I/O.

/** Client events of the Realtime API (GA, and the beta's transcription_session.update). */
export const CLIENT_EVENT_TYPES: ReadonlySet<string> = new Set([
  'session.update',
  'transcription_session.update',
  'input_audio_buffer.append',
  'input_audio_buffer.commit',
  'input_audio_buffer.clear',
  'output_audio_buffer.clear',
  'conversation.item.create',
  'conversation.item.retrieve',
  'conversation.item.truncate',
  'conversation.item.delete',
  'response.create',
  'response.cancel',
]);

export interface ClientEvent {
  type: string;
  event_id?: string;
  [field: string]: unknown;
}

/** Why a frame ends the session: the error event to send, then the close code. */
export interface BadFrame {
  code: 'invalid_json' | 'invalid_event' | 'unknown_event' | 'binary_frame' | 'event_too_large';
  message: string;
  param?: string;
  eventId?: string;
}

/** A text frame from the client, read: the event, or why it is refused. */
export function readClientFrame(data: Buffer | string, isBinary: boolean, maxBytes: number): ClientEvent | BadFrame {
  const size = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  if (isBinary) return { code: 'binary_frame', message: 'binary frames are not part of the Realtime protocol: send each event as a JSON text frame (audio as base64 in input_audio_buffer.append)' };
  if (size > maxBytes) return { code: 'event_too_large', message: `an event of ${size} bytes is over this gateway's limit of ${maxBytes} bytes: send audio in smaller input_audio_buffer.append events` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    return { code: 'invalid_json', message: 'the frame is not JSON: each Realtime event is a JSON object in a text frame' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { code: 'invalid_event', message: 'an event must be a JSON object with a string `type`', param: 'type' };
  const event = parsed as Record<string, unknown>;
  const eventId = typeof event.event_id === 'string' ? event.event_id.slice(0, 200) : undefined;
  if (typeof event.type !== 'string') return { code: 'invalid_event', message: 'an event must be a JSON object with a string `type`', param: 'type', ...(eventId !== undefined && { eventId }) };
  if (!CLIENT_EVENT_TYPES.has(event.type)) {
    return { code: 'unknown_event', message: `unknown event type '${event.type.slice(0, 100)}': the client events are ${[...CLIENT_EVENT_TYPES].join(', ')}`, param: 'type', ...(eventId !== undefined && { eventId }) };
  }
  return event as ClientEvent;
}

export function isBadFrame(v: ClientEvent | BadFrame): v is BadFrame {
  return !('type' in v);
}

let counter = 0;
/** Event ids of the gateway's own events, told apart from the provider's. */
export function gatewayEventId(): string {
  return `event_bf_${Date.now().toString(36)}${(++counter).toString(36)}`;
}

/** The Realtime `error` event, as the provider sends it (the SDK reads error.type, code, message, param, event_id). */
export function errorEvent(type: string, code: string, message: string, param?: string, eventId?: string): string {
  return JSON.stringify({
    type: 'error',
    event_id: gatewayEventId(),
    error: { type, code, message, param: param ?? null, event_id: eventId ?? null },
  });
}

/** The error event for a refused frame. */
export function badFrameEvent(bad: BadFrame): string {
  return errorEvent('invalid_request_error', bad.code, bad.message, bad.param, bad.eventId);
}
