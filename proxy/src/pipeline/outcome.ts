// What executing a request produces, before (and apart from) any HTTP answer: a JSON value, JSON
// text relayed unparsed, a stream of items pulled one upstream read at a time (backpressure: the
// upstream is read only as fast as the consumer pulls), bytes, or an error. `respond` (http/respond.ts)
// turns one into an HTTP answer; an in-process caller reads it directly.
import { GatewayError } from '../unified/errors.ts';
import type { SizedText } from '../unified/json-splice.ts';

/** Named in an error answer's extra_fields. */
export interface ErrorExtra {
  model_requested?: string;
  request_type?: string;
}

/** How a stream's items become bytes on the wire: the renderer half of a stream plan. */
export interface StreamFormat<T> {
  encode(item: T): string;
  /** Written after the last item (`data: [DONE]` for chat and text). */
  done: string;
  errorEvent(err: GatewayError): string;
  /** Response headers other than SSE's (a binary framing such as AWS event-stream). */
  headers?: Record<string, string>;
  /** How the encoded strings become bytes: binary framings use `latin1` (one char per byte). */
  encoding?: BufferEncoding;
}

/** Where a pushed stream's text goes (http/respond.ts: the answer). */
export interface TextSink {
  /**
   * false: the client's buffer is full; write more once drained() resolved. `latin1`: each
   * character is one byte of the answer (the byte relay's text, already UTF-8).
   */
  write(text: string, encoding?: 'latin1'): boolean;
  /** Resolves once the client drained what was written, or left. */
  drained(): Promise<void>;
}

/**
 * A stream's text pushed to a sink as the upstream's reads arrive, without a promise per read. It
 * settles as the items would end: resolves at the end (the client gone included), rejects with the
 * GatewayError the items would throw, after writing what was ready (so a rejection with nothing
 * written is an error the answer's status can still carry).
 */
export type TextPump = (sink: TextSink) => Promise<void>;

export type Outcome =
  | { kind: 'json'; status: number; value: unknown }
  /** Text already serialised: JSON (an upstream answer with extra_fields spliced in) unless `headers` name another content type. */
  /** `parsed`: the answer as the pipeline parsed it on the way (read-only), for stages that want its facts without reading the text again. */
  /** `length`: the text's UTF-8 length where it was counted on the way; used only while `text` is still that text (a stage may replace it). */
  | { kind: 'text'; status: number; text: string; headers?: Record<string, string | string[]>; parsed?: unknown; length?: SizedText }
  /** Items in batches (one per upstream read); the iterable throws a GatewayError when the stream fails. */
  /** `pump`: the same stream as text, pushed (an HTTP answer takes it when there is one; items are then not read). */
  | { kind: 'stream'; items: AsyncIterable<readonly unknown[]>; format: StreamFormat<unknown>; extra?: ErrorExtra; pump?: TextPump }
  /** Bytes relayed as they arrive (audio, file content, a passthrough answer). */
  | { kind: 'bytes'; status: number; headers: Record<string, string | string[]>; body: AsyncIterable<Uint8Array> }
  | { kind: 'error'; error: GatewayError; extra?: ErrorExtra };

/**
 * An iterable made only when something iterates it: a pushed stream's items, which an HTTP answer
 * never reads (two async generators per held stream, kept for its life, otherwise).
 */
export function lazyItems<T>(make: () => AsyncIterable<T>): AsyncIterable<T> {
  return new LazyItems(make);
}

/**
 * A class, not an object literal with a computed symbol key: the literal and its arrow cost about
 * 200 B and 220 ns each (a held stream keeps one for its life), an instance 27 B and 15-22 ns.
 */
class LazyItems<T> implements AsyncIterable<T> {
  readonly #make: () => AsyncIterable<T>;

  constructor(make: () => AsyncIterable<T>) {
    this.#make = make;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this.#make()[Symbol.asyncIterator]();
  }
}

/** The HTTP status an outcome answers with (a stream: 200 unless it failed). */
export function outcomeStatus(o: Outcome): number {
  if (o.kind === 'error') return o.error.status;
  if (o.kind === 'stream') return 200;
  return o.status;
}

/** Any thrown value as the gateway's error (anything not a GatewayError is a 500). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(500, `internal error: ${(err as Error)?.message ?? String(err)}`, { type: 'internal_error' });
}
