// A stream relayed as text: an OpenAI-format upstream to an OpenAI-format client, when nothing in
// the configuration needs to look inside the events (no stream tap: no cache write, no content
// logging; no raw capture; no stage's final extra_fields). Each event goes out as the upstream wrote
// it, with only the gateway's extra_fields spliced in before its closing brace: no SSE event objects,
// no JSON parse, no serialisation. Events are found by their blank line; one that plainly is a choice
// chunk passes unread, and only the others (the usage chunk, an in-band error, any framing other than
// LF-ended `data: ` lines) go through the plan's translator, so usage is still metered and every
// answer is the one the item path (stream.ts) would have written, byte for byte.
import type { SseEvent } from '../unified/stream.ts';
import { asUpstreamFault, GatewayError, upstreamTooLarge } from '../unified/errors.ts';
import { EVENT_LIMIT_SETTING, SseParser } from '../upstream/sse.ts';
import { transportError } from './upstream-call.ts';
import type { RequestContext } from './context.ts';
import type { StreamFormat } from './outcome.ts';
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
  const relay = plan.relay;
  const max = opts.maxEventBytes ?? Infinity;
  const decoder = new TextDecoder();
  // {"provider":…,"model_requested":…,"chunk_index":N}: the item path's object, written once.
  const base = JSON.stringify(opts.extra);
  const head = base === '{}' ? '{"chunk_index":' : `${base.slice(0, -1)},"chunk_index":`;
  let chunkIndex = 0;
  const nextIndex = () => {
    if (chunkIndex === 0) ctx.firstChunkAt = performance.now();
    return chunkIndex++;
  };
  let out = '';
  let yielded = false;
  /** Text after the last complete event (LF framing), not yet an event. */
  let carry = '';
  /** Reads the events of any other framing (CR line ends, comments, `event:` or multi-line data). */
  let parser: SseParser | undefined;
  /** Once the upstream sent a CR: every byte goes through the parser from then on. */
  let parsing = false;
  const sseParser = () => (parser ??= new SseParser({ maxEventBytes: opts.maxEventBytes, provider: opts.provider }));

  /** Items the translator made, as the item path renders them. */
  const emit = (items: T[]) => {
    for (const item of items) {
      const usage = plan.usage(item);
      if (usage) ctx.usage = usage;
      if (!plan.visible(item)) continue;
      plan.decorate(item, { ...opts.extra, chunk_index: nextIndex() });
      out += plan.encode(item);
    }
  };
  const translated = (ev: SseEvent) => emit(plan.translator.push(ev));
  const event = (data: string) => {
    if (data === '[DONE]') return;
    if (relay.plain(data)) out += relay.frame(data, `${head}${nextIndex()}}`);
    else translated({ data });
  };
  /** An event the SSE parser read: a named one goes to the translator as it is. */
  const parsed = (ev: SseEvent) => (ev.event === undefined ? event(ev.data) : translated(ev));
  /** One event's text between blank lines (LF framing). */
  const block = (text: string) => {
    if (text.startsWith('data: ') && !text.includes('\n', 6)) {
      if (text.length - 5 > max) throw upstreamTooLarge(opts.provider, 'stream event', max, EVENT_LIMIT_SETTING);
      event(text.slice(6));
      return;
    }
    for (const ev of sseParser().push(`${text}\n\n`)) parsed(ev);
  };
  const take = (text: string) => {
    if (!parsing && text.includes('\r')) {
      parsing = true;
      text = carry + text;
      carry = '';
    }
    if (parsing) {
      for (const ev of sseParser().push(text)) parsed(ev);
      return;
    }
    // No line end: the event being read only grows (appended, not rescanned).
    if (!text.includes('\n')) {
      carry += text;
      if (carry.length > max) throw upstreamTooLarge(opts.provider, 'stream event', max, EVENT_LIMIT_SETTING);
      return;
    }
    const buffer = carry + text;
    let start = 0;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n', start)) {
      block(buffer.slice(start, end));
      start = end + 2;
    }
    carry = buffer.slice(start);
    if (carry.length > max) throw upstreamTooLarge(opts.provider, 'stream event', max, EVENT_LIMIT_SETTING);
  };
  const finish = () => {
    // (A UTF-8 sequence cut off by the end of the body is dropped, as the SSE parser drops it.)
    // An event not closed by a blank line is still delivered (as the SSE parser does).
    if (carry) sseParser().push(carry);
    carry = '';
    for (const ev of parser?.end() ?? []) parsed(ev);
    emit(plan.translator.finish());
  };
  // Whatever a translator throws on upstream data is the upstream's fault (stream.ts says why).
  const guarded = (f: () => void) => {
    try {
      f();
    } catch (err) {
      throw asUpstreamFault(err, opts.provider);
    }
  };

  try {
    for await (const bytes of upstream) {
      guarded(() => take(decoder.decode(bytes, { stream: true })));
      if (out) {
        const batch = out;
        out = '';
        yielded = true;
        yield [batch];
      }
    }
    guarded(finish);
  } catch (err) {
    if (ctx.signal.aborted) return;
    const e = err instanceof GatewayError ? err : transportError(opts.provider, err);
    if (opts.scrub) e.message = opts.scrub(e.message);
    if (!yielded && !out) throw e;
    if (out) {
      const batch = out;
      out = '';
      yield [batch];
    }
    throw e;
  }
  if (out) yield [out];
}
