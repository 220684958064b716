// AWS event-stream framing (application/vnd.amazon.eventstream) for answers to Bedrock SDK clients:
// each message is prelude, headers, JSON payload and CRCs, encoded with @smithy/eventstream-codec
// (the codec the SDK decodes with). Frames travel as latin1 strings, one char per byte, so they
// go through the stream relay like SSE text.
import { eventStreamCodec, fromUtf8 } from '../codec.ts';

export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

function frame(headers: Record<string, string>, payload: unknown): string {
  const bytes = eventStreamCodec().encode({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string' as const, value: v }])),
    body: fromUtf8(JSON.stringify(payload)),
  });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** An event message: `:event-type` names the member of the stream union (`messageStart`, `chunk`, ...). */
export function eventFrame(eventType: string, payload: unknown): string {
  return frame({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, payload);
}

/**
 * An exception message, as AWS sends a failure after the 200: `:exception-type` is the member of
 * the stream union (`throttlingException`, ...), which the SDK throws as its exception class.
 */
export function exceptionFrame(exceptionType: string, message: string): string {
  return frame({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, { message });
}

/** latin1 frame text back to bytes (for tests and decoders). */
export function frameBytes(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'latin1'));
}
