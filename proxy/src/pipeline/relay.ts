// A stream relayed as text: an OpenAI-format upstream to an OpenAI-format client, when nothing in
// the configuration needs to look inside the events (no stream tap: no cache write, no content
// logging; no raw capture; no stage's final extra_fields). Each event goes out as the upstream wrote
// it, with only the gateway's extra_fields spliced in before its closing brace: no SSE event objects,
// no JSON parse, no serialisation. Events are found by their blank line; one that plainly is a choice
// chunk passes unread, and only the others (the usage chunk, an in-band error, any framing other than
// LF-ended `data: ` lines) go through the plan's translator, so usage is still metered and every
// answer is the one the item path (stream.ts) would have written, byte for byte.
import type { Readable } from 'node:stream';
import type { SseEvent } from '../unified/stream.ts';
import { asUpstreamFault, GatewayError, upstreamTooLarge } from '../unified/errors.ts';
import { EVENT_LIMIT_SETTING, SseParser } from '../upstream/sse.ts';
import { transportError } from './upstream-call.ts';
import type { RequestContext } from './context.ts';
import type { StreamFormat, TextPump } from './outcome.ts';
import type { StreamOptions, StreamPlan, TextRelay } from './stream.ts';

/** Whether this stream may be relayed as text: the plan can, and nothing asks for the items. */
export function relayable<T>(ctx: RequestContext, plan: StreamPlan<T>, opts: StreamOptions): plan is StreamPlan<T> & { relay: TextRelay } {
  return plan.relay !== undefined && ctx.taps.length === 0 && ctx.finalExtra === undefined && !opts.rawResponse
    && opts.rawRequest === undefined && opts.decoder === undefined;
}

/** The items are encoded text already. */
export function textFormat(plan: StreamFormat<unknown>): StreamFormat<unknown> {
  return { encode: (text) => text as string, done: plan.done, errorEvent: plan.errorEvent, ...(plan.headers && { headers: plan.headers }) };
}

/**
 * The relay's work on the upstream's bytes, with no I/O: `take` each read, `finish` at the end, and
 * `drain` the client's text made so far. Both throw what the client must see (an upstream fault).
 */
export class TextRelayer<T> {
  readonly #ctx: RequestContext;
  readonly #plan: StreamPlan<T> & { relay: TextRelay };
  readonly #opts: StreamOptions;
  readonly #max: number;
  readonly #decoder = new TextDecoder();
  /** {"provider":…,"model_requested":…,"chunk_index":: the item path's object, written once. */
  readonly #head: string;
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
    this.#head = base === '{}' ? '{"chunk_index":' : `${base.slice(0, -1)},"chunk_index":`;
  }

  /** One upstream read. */
  take(bytes: Uint8Array): void {
    this.#guarded(() => this.#text(this.#decoder.decode(bytes, { stream: true })));
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

  /** The client's text made since the last call ('' for none). */
  drain(): string {
    const out = this.#out;
    this.#out = '';
    return out;
  }

  /** How the relay ends on `err` (a transport failure, or what take/finish threw), as the client must see it. */
  failure(err: unknown): GatewayError {
    const e = err instanceof GatewayError ? err : transportError(this.#opts.provider, err);
    if (this.#opts.scrub) e.message = this.#opts.scrub(e.message);
    return e;
  }

  #nextIndex(): number {
    if (this.#chunkIndex === 0) this.#ctx.firstChunkAt = performance.now();
    return this.#chunkIndex++;
  }

  /** Items the translator made, as the item path renders them. */
  #emit(items: T[]): void {
    const plan = this.#plan;
    for (const item of items) {
      const usage = plan.usage(item);
      if (usage) this.#ctx.usage = usage;
      if (!plan.visible(item)) continue;
      plan.decorate(item, { ...this.#opts.extra, chunk_index: this.#nextIndex() });
      this.#out += plan.encode(item);
    }
  }

  #translated(ev: SseEvent): void {
    this.#emit(this.#plan.translator.push(ev));
  }

  #event(data: string): void {
    if (data === '[DONE]') return;
    const relay = this.#plan.relay;
    if (relay.plain(data)) this.#out += relay.frame(data, `${this.#head}${this.#nextIndex()}}`);
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
export function pumpText<T>(
  ctx: RequestContext,
  upstream: Readable,
  plan: StreamPlan<T> & { relay: TextRelay },
  opts: StreamOptions,
): TextPump {
  return (sink) =>
    new Promise<void>((resolve, reject) => {
      const relayer = new TextRelayer(ctx, plan, opts);
      let settled = false;
      const resume = () => {
        if (!settled) upstream.resume();
      };
      const settle = (err?: unknown) => {
        if (settled) return;
        settled = true;
        upstream.off('data', onData);
        upstream.off('end', onEnd);
        upstream.off('error', settle);
        upstream.off('close', onClose);
        // A body left unread must not keep its connection: destroyed unless it ended.
        if (err !== undefined && !upstream.destroyed) {
          upstream.on('error', ignore);
          upstream.destroy();
        }
        if (err === undefined || ctx.signal.aborted) {
          resolve();
          return;
        }
        const e = relayer.failure(err);
        const out = relayer.drain();
        if (out) sink.write(out);
        reject(e);
      };
      const onData = (bytes: Uint8Array) => {
        try {
          relayer.take(bytes);
        } catch (err) {
          settle(err);
          return;
        }
        const out = relayer.drain();
        if (out && !sink.write(out)) {
          upstream.pause();
          void sink.drained().then(resume);
        }
      };
      const onEnd = () => {
        try {
          relayer.finish();
        } catch (err) {
          settle(err);
          return;
        }
        const out = relayer.drain();
        if (out) sink.write(out);
        settle();
      };
      // Closed with neither an end nor an error (destroyed by someone else): a cut upstream, as a stream iterator reports it.
      const onClose = () => settle(ctx.signal.aborted ? undefined : prematureClose());
      // Gone before the answer was written (the client left, a shutdown cut it): nothing will come.
      if (upstream.destroyed) {
        settle(upstream.errored ?? (ctx.signal.aborted ? undefined : prematureClose()));
        return;
      }
      upstream.on('data', onData);
      upstream.once('end', onEnd);
      upstream.on('error', settle);
      upstream.once('close', onClose);
    });
}

function ignore(): void {}

const prematureClose = () => Object.assign(new Error('upstream body closed early'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
