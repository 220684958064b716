// A stream relayed as text: an OpenAI-format upstream to an OpenAI-format client, when nothing in
// the configuration needs to look inside the events (no stream tap: no cache write, no content
// logging; no raw capture; no stage's final extra_fields). Each event goes out as the upstream wrote
// it, with only the gateway's extra_fields spliced in before its closing brace: no SSE event objects,
// no JSON parse, no serialisation. Events are found by their blank line; one that plainly is a choice
// chunk passes unread, and only the others (the usage chunk, an in-band error, any framing other than
// LF-ended `data: ` lines) go through the plan's translator, so usage is still metered and every
// answer is the one the item path (stream.ts) would have written, byte for byte. An HTTP answer takes
// the byte relay (ByteRelayer): a plain event's bytes are not even decoded.
import { isAscii, isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { SseEvent } from '../unified/stream.ts';
import { asUpstreamFault, GatewayError, upstreamTooLarge } from '../unified/errors.ts';
import { EVENT_LIMIT_SETTING, SseParser } from '../upstream/sse.ts';
import { transportError } from './upstream-call.ts';
import type { RequestContext } from './context.ts';
import type { StreamFormat, TextPump, TextSink } from './outcome.ts';
import type { StreamOptions, StreamPlan, TextRelay } from './stream.ts';

/** Whether this stream may be relayed as text: the plan can, and nothing asks for the items. */
export function relayable<T>(ctx: RequestContext, plan: StreamPlan<T>, opts: StreamOptions): plan is StreamPlan<T> & { relay: TextRelay } {
  return plan.relay !== undefined && ctx.taps.length === 0 && ctx.finalExtra === undefined && !opts.rawResponse
    && opts.rawRequest === undefined && opts.decoder === undefined;
}

const asText = (text: unknown): string => text as string;
/** One text format per plan (a relayable plan is shared by every stream: operations/chunk-stream-plan.ts). */
const textFormats = new WeakMap<StreamFormat<unknown>, StreamFormat<unknown>>();

/** The items are encoded text already. */
export function textFormat(plan: StreamFormat<unknown>): StreamFormat<unknown> {
  let format = textFormats.get(plan);
  if (!format) {
    format = { encode: asText, done: plan.done, errorEvent: plan.errorEvent, ...(plan.headers && { headers: plan.headers }) };
    textFormats.set(plan, format);
  }
  return format;
}

const STREAMING = { stream: true } as const;

/**
 * The relay's work on the upstream's bytes, with no I/O: `take` each read, `finish` at the end, and
 * `drain` the client's text made so far. Both throw what the client must see (an upstream fault).
 */
export class TextRelayer<T> {
  readonly #ctx: RequestContext;
  readonly #plan: StreamPlan<T> & { relay: TextRelay };
  readonly #opts: StreamOptions;
  readonly #max: number;
  /** Made on the first read the text path decodes: under the byte relay most streams never need one. */
  #decoder: InstanceType<typeof TextDecoder> | undefined;
  /** {"provider":…,"model_requested":…,"chunk_index":: the item path's object, written once. */
  readonly head: string;
  #chunkIndex = 0;
  #out = '';
  /** Text after the last complete event (LF framing), not yet an event. */
  #carry = '';
  /** Reads the events of any other framing (CR line ends, comments, `event:` or multi-line data). */
  #parser: SseParser | undefined;
  /** Once the upstream sent a CR: every byte goes through the parser from then on. */
  #parsing = false;

  constructor(ctx: RequestContext, plan: StreamPlan<T> & { relay: TextRelay }, opts: StreamOptions) {
    this.#ctx = ctx;
    this.#plan = plan;
    this.#opts = opts;
    this.#max = opts.maxEventBytes ?? Infinity;
    const base = JSON.stringify(opts.extra);
    this.head = base === '{}' ? '{"chunk_index":' : `${base.slice(0, -1)},"chunk_index":`;
  }

  /** One upstream read. */
  take(bytes: Uint8Array): void {
    this.#guarded(() => this.#text((this.#decoder ??= new TextDecoder()).decode(bytes, STREAMING)));
  }

  /** The upstream ended. */
  finish(): void {
    this.#guarded(() => {
      // (A UTF-8 sequence cut off by the end of the body is dropped, as the SSE parser drops it.)
      // An event not closed by a blank line is still delivered (as the SSE parser does).
      if (this.#carry) this.#sseParser().push(this.#carry);
      this.#carry = '';
      for (const ev of this.#parser?.end() ?? []) this.#parsed(ev);
      this.#emit(this.#plan.translator.finish());
    });
  }

  /** One event's text between blank lines (LF framing), as the byte relay hands over what it does not frame itself. */
  block(text: string): void {
    this.#guarded(() => this.#block(text));
  }

  /** The client's text made since the last call ('' for none). */
  drain(): string {
    const out = this.#out;
    this.#out = '';
    return out;
  }

  /** The chunk index of the next event sent (the first one notes the first chunk's time). */
  nextIndex(): number {
    if (this.#chunkIndex === 0) this.#ctx.firstChunkAt = performance.now();
    return this.#chunkIndex++;
  }

  /** The gateway's extra_fields of the next event sent, as JSON text. */
  nextExtra(): string {
    return `${this.head}${this.nextIndex()}}`;
  }

  /** How the relay ends on `err` (a transport failure, or what take/finish threw), as the client must see it. */
  failure(err: unknown): GatewayError {
    const e = err instanceof GatewayError ? err : transportError(this.#opts.provider, err);
    if (this.#opts.scrub) e.message = this.#opts.scrub(e.message);
    return e;
  }

  /** Items the translator made, as the item path renders them. */
  #emit(items: T[]): void {
    const plan = this.#plan;
    for (const item of items) {
      const usage = plan.usage(item);
      if (usage) this.#ctx.usage = usage;
      if (!plan.visible(item)) continue;
      plan.decorate(item, { ...this.#opts.extra, chunk_index: this.nextIndex() });
      this.#out += plan.encode(item);
    }
  }

  #translated(ev: SseEvent): void {
    this.#emit(this.#plan.translator.push(ev));
  }

  #event(data: string): void {
    if (data === '[DONE]') return;
    const relay = this.#plan.relay;
    if (relay.plain(data)) this.#out += `data: ${data.slice(0, -1)}${relay.splice[0]}${this.nextExtra()}${relay.splice[1]}`;
    else this.#translated({ data });
  }

  /** An event the SSE parser read: a named one goes to the translator as it is. */
  #parsed(ev: SseEvent): void {
    if (ev.event === undefined) this.#event(ev.data);
    else this.#translated(ev);
  }

  #sseParser(): SseParser {
    return (this.#parser ??= new SseParser({ maxEventBytes: this.#opts.maxEventBytes, provider: this.#opts.provider }));
  }

  #tooLarge(): GatewayError {
    return upstreamTooLarge(this.#opts.provider, 'stream event', this.#max, EVENT_LIMIT_SETTING);
  }

  /** One event's text between blank lines (LF framing). */
  #block(text: string): void {
    if (text.startsWith('data: ') && !text.includes('\n', 6)) {
      if (text.length - 5 > this.#max) throw this.#tooLarge();
      this.#event(text.slice(6));
      return;
    }
    for (const ev of this.#sseParser().push(`${text}\n\n`)) this.#parsed(ev);
  }

  #text(text: string): void {
    if (!this.#parsing && text.includes('\r')) {
      this.#parsing = true;
      text = this.#carry + text;
      this.#carry = '';
    }
    if (this.#parsing) {
      for (const ev of this.#sseParser().push(text)) this.#parsed(ev);
      return;
    }
    // No line end: the event being read only grows (appended, not rescanned).
    if (!text.includes('\n')) {
      this.#carry += text;
      if (this.#carry.length > this.#max) throw this.#tooLarge();
      return;
    }
    const buffer = this.#carry + text;
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
      this.#block(buffer.slice(start, end));
      start = end + 2;
    }
    this.#carry = buffer.slice(start);
    if (this.#carry.length > this.#max) throw this.#tooLarge();
  }

  // Whatever a translator throws on upstream data is the upstream's fault (stream.ts says why).
  #guarded(f: () => void): void {
    try {
      f();
    } catch (err) {
      throw asUpstreamFault(err, this.#opts.provider);
    }
  }
}

/** What the pushed relay needs of a relayer: TextRelayer, or ByteRelayer over it. */
export interface Relayer {
  /** `latin1`: drain() gives the answer's bytes, one character per byte. */
  readonly encoding?: 'latin1';
  take(bytes: Uint8Array): void;
  finish(): void;
  /** The client's text made since the last call ('' for none). */
  drain(): string;
  failure(err: unknown): GatewayError;
}

/** Mid-stream an event's text keeps a byte-order mark, as the streaming decoder does after the first bytes. */
const EVENT_TEXT = new TextDecoder('utf-8', { ignoreBOM: true });
/** Text as its UTF-8 bytes, one character per byte. */
const asBytes = (text: string): string => Buffer.from(text).toString('latin1');

/**
 * The relay on the upstream's bytes: each plain event goes out as the upstream's own bytes up to its
 * closing brace, then the gateway's extra_fields, with no UTF-8 decode and no encode on write. A read
 * is looked at as Latin-1 text (one character per byte: string search without a decode, byte
 * offsets are character offsets, and the answer is written from it as Latin-1, byte for byte). Every other event (the usage chunk, an in-band error, other SSE
 * lines, one near the size limit, bytes that are not UTF-8) is decoded and goes to the TextRelayer,
 * and from the first CR, or a byte-order mark at the start, every byte does: the client gets what
 * the TextRelayer would have written, byte for byte.
 */
export class ByteRelayer<T> implements Relayer {
  readonly encoding = 'latin1';
  readonly #text: TextRelayer<T>;
  readonly #relay: TextRelay;
  readonly #max: number;
  /** What goes before a plain event's chunk index (its closing brace replaced), and after it, as bytes. */
  readonly #open: string;
  readonly #close: string;
  /** Bytes after the last complete event, in the reads they came in. */
  #carry: Buffer[] = [];
  #carried = 0;
  /** The client's bytes since the last drain, one character per byte. */
  #out = '';
  #started = false;
  /** The TextRelayer takes every byte. */
  #asText = false;

  constructor(ctx: RequestContext, plan: StreamPlan<T> & { relay: TextRelay }, opts: StreamOptions) {
    this.#text = new TextRelayer(ctx, plan, opts);
    this.#relay = plan.relay;
    this.#max = opts.maxEventBytes ?? Infinity;
    const [before, after] = plan.relay.splice;
    this.#open = asBytes(`${before}${this.#text.head}`);
    this.#close = asBytes(`}${after}`);
  }

  take(bytes: Uint8Array): void {
    if (this.#asText) {
      this.#text.take(bytes);
      this.#pull();
      return;
    }
    if (bytes.length === 0) return;
    const read = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    // A byte-order mark at the start is dropped by the text's decoder.
    if (!this.#started && read[0] === 0xef) {
      this.#toText(read);
      return;
    }
    this.#started = true;
    const buffer = this.#carried ? Buffer.concat([...this.#carry, read]) : read;
    this.#carry = [];
    this.#carried = 0;
    const view = buffer.toString('latin1');
    // CR line ends: the SSE parser reads the rest, this read included (as the TextRelayer does).
    if (view.includes('\r')) {
      this.#toText(buffer);
      return;
    }
    const ascii = isAscii(buffer);
    let start = 0;
    for (let end = view.indexOf('\n\n'); end >= 0; end = view.indexOf('\n\n', start)) {
      this.#event(buffer, view, start, end, ascii);
      start = end + 2;
    }
    if (start < buffer.length) this.#keep(start ? buffer.subarray(start) : buffer);
  }

  finish(): void {
    if (this.#carried) this.#toText();
    this.#text.finish();
    this.#pull();
  }

  /** The client's bytes since the last call, one character per byte ('' for none). */
  drain(): string {
    // What the TextRelayer wrote before it threw is still its own.
    this.#pull();
    const out = this.#out;
    this.#out = '';
    return out;
  }

  failure(err: unknown): GatewayError {
    return this.#text.failure(err);
  }

  /** Part of an event: kept until its blank line; past the size limit the text decides (its limit counts characters). */
  #keep(bytes: Buffer): void {
    this.#carry.push(bytes);
    this.#carried += bytes.length;
    if (this.#carried > this.#max) this.#toText();
  }

  /** From here on the TextRelayer reads the stream, starting with what is carried, then `bytes`. */
  #toText(bytes?: Buffer): void {
    this.#asText = true;
    const pending = bytes ? [...this.#carry, bytes] : this.#carry;
    this.#carry = [];
    this.#carried = 0;
    if (pending.length) this.#text.take(pending.length === 1 ? pending[0] : Buffer.concat(pending));
    this.#pull();
  }

  /** The event in [start, end) of the bytes and of their Latin-1 view (`ascii`: all the read's bytes are). */
  #event(buffer: Buffer, view: string, start: number, end: number, ascii: boolean): void {
    const size = end - start;
    // A single `data: ` line within the limit (its bytes are at least the characters the limit counts).
    if (size > 6 && size - 5 <= this.#max && view.startsWith('data: ', start)) {
      const lineEnd = view.indexOf('\n', start + 6);
      if (lineEnd < 0 || lineEnd >= end) {
        const data = view.slice(start + 6, end);
        if (data === '[DONE]') return;
        const plainAscii = ascii || isAscii(buffer.subarray(start + 6, end));
        // Bytes that are not UTF-8 would reach the client as U+FFFD through the text.
        if ((plainAscii || isUtf8(buffer.subarray(start + 6, end))) && this.#relay.plainBytes(data, plainAscii)) {
          this.#out += `${view.slice(start, end - 1)}${this.#open}${this.#text.nextIndex()}${this.#close}`;
          return;
        }
      }
    }
    this.#text.block(EVENT_TEXT.decode(buffer.subarray(start, end)));
    this.#pull();
  }

  /** What the TextRelayer wrote, in its place among the bytes. */
  #pull(): void {
    const text = this.#text.drain();
    if (text) this.#out += asBytes(text);
  }
}

/**
 * The client's text, one batch (a single string) per upstream read that completed an event. Errors
 * as streamItems has them: before anything was produced the error itself is thrown (a plain error
 * status); later, what was ready goes out first, then the error (an in-band error event).
 */
export async function* relayText<T>(
  ctx: RequestContext,
  upstream: AsyncIterable<Uint8Array>,
  plan: StreamPlan<T> & { relay: TextRelay },
  opts: StreamOptions,
): AsyncGenerator<string[], void, undefined> {
  const relayer = new TextRelayer(ctx, plan, opts);
  let yielded = false;
  try {
    for await (const bytes of upstream) {
      relayer.take(bytes);
      const out = relayer.drain();
      if (out) {
        yielded = true;
        yield [out];
      }
    }
    relayer.finish();
  } catch (err) {
    if (ctx.signal.aborted) return;
    const e = relayer.failure(err);
    const out = relayer.drain();
    if (!yielded && !out) throw e;
    if (out) yield [out];
    throw e;
  }
  const out = relayer.drain();
  if (out) yield [out];
}

/**
 * The same relay pushed: the upstream body's reads are taken as its 'data' events come and written
 * to the sink at once, so a held stream costs an event listener call per read instead of a promise
 * chain through three async iterators. Backpressure: the body pauses while the client's buffer is full.
 */
export function pumpText<T>(ctx: RequestContext, upstream: Readable, plan: StreamPlan<T> & { relay: TextRelay }, opts: StreamOptions): TextPump {
  return (sink) => new PushedRelay(ctx, upstream, new ByteRelayer(ctx, plan, opts), sink).done;
}

/** The pushed relay with the relayer `make` gives (pumpText: the byte relay; the text relay too, for tests and benches). */
export function pumpRelayed(ctx: RequestContext, upstream: Readable, make: () => Relayer): TextPump {
  return (sink) => new PushedRelay(ctx, upstream, make(), sink).done;
}

/**
 * One pushed stream's state, kept for the stream's life: one object of one class and its four
 * listeners, where closures over the same state kept a context, five closures and two `once`
 * wrappers per held stream. The listeners are removed when the relay settles, so `on`, not `once`.
 */
class PushedRelay {
  /** Resolves when the upstream ended and its last bytes were written (or the client left); rejects with what the client must see. */
  readonly done: Promise<void>;
  readonly #ctx: RequestContext;
  readonly #upstream: Readable;
  readonly #relayer: Relayer;
  readonly #sink: TextSink;
  #resolve!: () => void;
  #reject!: (err: unknown) => void;
  #settled = false;

  constructor(ctx: RequestContext, upstream: Readable, relayer: Relayer, sink: TextSink) {
    this.#ctx = ctx;
    this.#upstream = upstream;
    this.#relayer = relayer;
    this.#sink = sink;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Gone before the answer was written (the client left, a shutdown cut it): nothing will come.
    if (upstream.destroyed) {
      this.#settle(upstream.errored ?? (ctx.signal.aborted ? undefined : prematureClose()));
      return;
    }
    upstream.on('data', this.#onData);
    upstream.on('end', this.#onEnd);
    upstream.on('error', this.#onError);
    upstream.on('close', this.#onClose);
  }

  readonly #onData = (bytes: Uint8Array): void => {
    const relayer = this.#relayer;
    try {
      relayer.take(bytes);
    } catch (err) {
      this.#settle(err);
      return;
    }
    const out = relayer.drain();
    if (out && !this.#sink.write(out, relayer.encoding)) {
      this.#upstream.pause();
      void this.#sink.drained().then(() => {
        if (!this.#settled) this.#upstream.resume();
      });
    }
  };

  readonly #onEnd = (): void => {
    const relayer = this.#relayer;
    try {
      relayer.finish();
    } catch (err) {
      this.#settle(err);
      return;
    }
    const out = relayer.drain();
    if (out) this.#sink.write(out, relayer.encoding);
    this.#settle();
  };

  readonly #onError = (err: unknown): void => this.#settle(err);

  // Closed with neither an end nor an error (destroyed by someone else): a cut upstream, as a stream iterator reports it.
  readonly #onClose = (): void => this.#settle(this.#ctx.signal.aborted ? undefined : prematureClose());

  #settle(err?: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    const upstream = this.#upstream;
    upstream.off('data', this.#onData);
    upstream.off('end', this.#onEnd);
    upstream.off('error', this.#onError);
    upstream.off('close', this.#onClose);
    // A body left unread must not keep its connection: destroyed unless it ended.
    if (err !== undefined && !upstream.destroyed) {
      upstream.on('error', ignore);
      upstream.destroy();
    }
    if (err === undefined || this.#ctx.signal.aborted) {
      this.#resolve();
      return;
    }
    const relayer = this.#relayer;
    const e = relayer.failure(err);
    const out = relayer.drain();
    if (out) this.#sink.write(out, relayer.encoding);
    this.#reject(e);
  }
}

function ignore(): void {}

const prematureClose = () => Object.assign(new Error('upstream body closed early'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
