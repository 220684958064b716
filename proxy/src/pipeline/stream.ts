// A streamed answer as items: upstream bytes parsed into events as they arrive, translated, and
// handed on one upstream read's worth at a time, so the upstream is read only as fast as the
// consumer (respond, or in-process code) pulls. Raw capture follows the spec: each item carries the
// upstream payloads read since the previous item sent, and trailing finish/usage payloads ride on
// the terminal item. Usage and the first item's time are noted on the context; stream taps see
// every translated item.
import type { SseEvent } from '../unified/stream.ts';
import type { ExtraFields, Usage } from '../unified/chat.ts';
import { asUpstreamFault, GatewayError } from '../unified/errors.ts';
import { SseParser } from '../upstream/sse.ts';
import type { StreamDecoder } from '../providers/adapter.ts';
import { transportError } from './upstream-call.ts';
import type { RequestContext } from './context.ts';
import type { StreamFormat } from './outcome.ts';

/** How a plan's plain events are relayed as text (relay.ts). */
export interface TextRelay {
  /** The event's data may go out unread (a choice chunk, no usage). */
  plain(data: string): boolean;
  /**
   * plain() read on the data's UTF-8 bytes as Latin-1 text (`ascii`: no byte past 0x7f, so the
   * same text): true only where plain() is (false: the decoded text decides).
   */
  plainBytes(data: string, ascii: boolean): boolean;
  /** What a plain event's closing `}` becomes: the text before the gateway's extra fields (an object's JSON text) and after them, the frame's blank line included. */
  splice: readonly [string, string];
}

/** How one endpoint's stream is translated (execution) and encoded (the StreamFormat half, for respond). */
export interface StreamPlan<T> extends StreamFormat<T> {
  translator: { push(ev: SseEvent): T[]; finish(): T[] };
  usage(item: T): Usage | null | undefined;
  /** Finish and usage items: held back while raw capture is on, so trailing payloads can join them. */
  terminal(item: T): boolean;
  /** false: recorded but not sent (a usage chunk the client did not ask for). */
  visible(item: T): boolean;
  decorate(item: T, extra: ExtraFields): void;
  /** Events may be relayed as text when nothing needs the items (relay.ts). */
  relay?: TextRelay;
}

export interface StreamOptions {
  extra: ExtraFields;
  provider: string;
  rawResponse: boolean;
  rawRequest: unknown;
  /** Decoder for a non-SSE framing (the adapter's `decodeStream`); default: SSE. */
  decoder?: StreamDecoder;
  /** Largest single SSE event accepted from the upstream (default: unbounded). */
  maxEventBytes?: number;
  /** Removes the gateway's own secrets from an error message relayed in-band. */
  scrub?: (text: string) => string;
}

/**
 * The items to send, in batches. A failure before any item was produced throws without yielding
 * (the answer can still be a plain error status); a later one yields what was ready, then throws,
 * for the renderer's in-band error event. A client gone (signal aborted) just ends it.
 */
export async function* streamItems<T>(
  ctx: RequestContext,
  upstream: AsyncIterable<Uint8Array>,
  plan: StreamPlan<T>,
  opts: StreamOptions,
): AsyncGenerator<T[], void, undefined> {
  const parser = opts.decoder ?? new SseParser({ maxEventBytes: opts.maxEventBytes, provider: opts.provider });
  const taps = ctx.taps;
  let pendingRaw: string[] = [];
  let held: T[] = [];
  let chunkIndex = 0;
  let batch: T[] = [];
  let yielded = false;
  // A stage's final extra_fields (a cache miss's cache_debug: the spec has only the final chunk carry
  // it, in full) go on the stream's final item. That item is known only once the upstream ended, so
  // the finish and usage items are held back, as raw capture holds them for its trailing payloads.
  const hold = opts.rawResponse || ctx.finalExtra !== undefined;

  const render = (item: T, raw: string[] | undefined, final = false) => {
    const extra: ExtraFields = { ...opts.extra, chunk_index: chunkIndex };
    if (chunkIndex === 0) {
      ctx.firstChunkAt = performance.now();
      if (opts.rawRequest !== undefined) extra.raw_request = opts.rawRequest;
    }
    if (raw && raw.length) extra.raw_response = raw.join('\n\n');
    if (final && ctx.finalExtra) Object.assign(extra, ctx.finalExtra);
    chunkIndex++;
    plan.decorate(item, extra);
    batch.push(item);
  };
  // Held items go out in order; the last visible one carries every payload not yet sent (and, at
  // the end of the stream, the stages' final extra_fields).
  const flushHeld = (end = false) => {
    if (!held.length) return;
    const visible = held.filter((h) => plan.visible(h));
    held = [];
    visible.forEach((item, i) => {
      const last = i === visible.length - 1;
      render(item, last ? pendingRaw : undefined, end && last);
      if (last) pendingRaw = [];
    });
  };
  const take = (items: T[]) => {
    for (const item of items) {
      const usage = plan.usage(item);
      if (usage) ctx.usage = usage;
      for (let i = 0; i < taps.length; i++) taps[i].tap!(ctx, item);
      if (hold && plan.terminal(item)) {
        held.push(item);
        continue;
      }
      flushHeld();
      if (!plan.visible(item)) continue;
      render(item, opts.rawResponse ? pendingRaw : undefined);
      pendingRaw = [];
    }
  };
  // Whatever the translators throw on upstream data (a chunk of the wrong shape) is the upstream's
  // fault; the stream ends with an in-band error, never a crash.
  const translate = (f: () => void) => {
    try {
      f();
    } catch (err) {
      throw asUpstreamFault(err, opts.provider);
    }
  };
  const onEvents = (events: SseEvent[]) =>
    translate(() => {
      for (const ev of events) {
        if (opts.rawResponse && ev.data !== '[DONE]') pendingRaw.push(ev.data);
        take(plan.translator.push(ev));
      }
    });

  try {
    for await (const bytes of upstream) {
      onEvents(parser.push(bytes));
      if (batch.length) {
        const out = batch;
        batch = [];
        yielded = true;
        yield out;
      }
    }
    onEvents(parser.end());
    translate(() => {
      take(plan.translator.finish());
      flushHeld(true);
    });
  } catch (err) {
    if (ctx.signal.aborted) return;
    const e = err instanceof GatewayError ? err : transportError(opts.provider, err);
    if (opts.scrub) e.message = opts.scrub(e.message);
    // Nothing produced for the client yet: it gets the error's own status.
    if (!yielded && !batch.length) throw e;
    try {
      flushHeld();
    } catch {
      // Held items that cannot be rendered are dropped; the error event still goes out.
    }
    if (batch.length) {
      const out = batch;
      batch = [];
      yield out;
    }
    throw e;
  }
  if (batch.length) yield batch;
}
