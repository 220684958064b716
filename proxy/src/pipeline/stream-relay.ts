// Relays an upstream SSE stream to the client chunk by chunk: parse events as bytes arrive,
// translate, write, and wait for the client to drain before reading more (backpressure). Raw
// capture follows the spec: each chunk carries the upstream payloads read since the previous chunk
// sent, and trailing finish/usage payloads ride on the terminal chunk.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { SseEvent } from '../unified/stream.ts';
import type { ExtraFields, Usage } from '../unified/chat.ts';
import { asUpstreamFault, GatewayError } from '../unified/errors.ts';
import { SseParser } from '../upstream/sse.ts';
import type { StreamDecoder } from '../providers/adapter.ts';
import { transportError } from './upstream-call.ts';

export interface StreamPlan<T> {
  translator: { push(ev: SseEvent): T[]; finish(): T[] };
  encode(item: T): string;
  /** Written after the last item (`data: [DONE]` for chat and text). */
  done: string;
  usage(item: T): Usage | null | undefined;
  /** Finish and usage items: held back while raw capture is on, so trailing payloads can join them. */
  terminal(item: T): boolean;
  /** false: recorded but not sent (a usage chunk the client did not ask for). */
  visible(item: T): boolean;
  decorate(item: T, extra: ExtraFields): void;
  errorEvent(err: GatewayError): string;
  /** Response headers other than SSE's (a binary framing such as AWS event-stream). */
  headers?: Record<string, string>;
  /** How the encoded strings become bytes: binary framings use `latin1` (one char per byte). */
  encoding?: BufferEncoding;
}

export interface RelayOptions {
  extra: ExtraFields;
  provider: string;
  rawResponse: boolean;
  rawRequest: unknown;
  signal: AbortSignal;
  onFirstChunk(): void;
  onUsage(usage: Usage): void;
  /** Decoder for a non-SSE framing (the adapter's `decodeStream`); default: SSE. */
  decoder?: StreamDecoder;
  /** Largest single SSE event accepted from the upstream (default: unbounded). */
  maxEventBytes?: number;
  /** Removes the gateway's own secrets from an error message relayed in-band. */
  scrub?: (text: string) => string;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export async function relayStream<T>(
  res: ServerResponse,
  upstream: AsyncIterable<Uint8Array>,
  plan: StreamPlan<T>,
  opts: RelayOptions,
): Promise<void> {
  // Headers go out with the first bytes: a stream that fails before it produced anything is
  // answered with a plain error status instead of a 200 carrying only an error event.
  const head = () => {
    if (!res.headersSent) res.writeHead(200, plan.headers ?? SSE_HEADERS);
  };
  const parser = opts.decoder ?? new SseParser({ maxEventBytes: opts.maxEventBytes, provider: opts.provider });
  let pendingRaw: string[] = [];
  let held: T[] = [];
  let chunkIndex = 0;
  let out = '';

  const render = (item: T, raw: string[] | undefined) => {
    const extra: ExtraFields = { ...opts.extra, chunk_index: chunkIndex };
    if (chunkIndex === 0) {
      opts.onFirstChunk();
      if (opts.rawRequest !== undefined) extra.raw_request = opts.rawRequest;
    }
    if (raw && raw.length) extra.raw_response = raw.join('\n\n');
    chunkIndex++;
    plan.decorate(item, extra);
    out += plan.encode(item);
  };
  const take = (items: T[]) => {
    for (const item of items) {
      const usage = plan.usage(item);
      if (usage) opts.onUsage(usage);
      if (opts.rawResponse && plan.terminal(item)) {
        held.push(item);
        continue;
      }
      flushHeld();
      if (!plan.visible(item)) continue;
      render(item, opts.rawResponse ? pendingRaw : undefined);
      pendingRaw = [];
    }
  };
  // Held items go out in order; the last visible one carries every payload not yet sent.
  const flushHeld = () => {
    if (!held.length) return;
    const visible = held.filter((h) => plan.visible(h));
    held = [];
    visible.forEach((item, i) => {
      const last = i === visible.length - 1;
      render(item, last ? pendingRaw : undefined);
      if (last) pendingRaw = [];
    });
  };
  const write = async () => {
    if (!out) return;
    head();
    const ok = res.write(out, plan.encoding ?? 'utf8');
    out = '';
    if (!ok && !res.destroyed) await once(res, 'drain', { signal: opts.signal });
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
      await write();
    }
    onEvents(parser.end());
    translate(() => {
      take(plan.translator.finish());
      flushHeld();
    });
    out += plan.done;
    await write();
    head();
    res.end();
  } catch (err) {
    if (opts.signal.aborted || res.destroyed) {
      res.destroy();
      return;
    }
    const e = err instanceof GatewayError ? err : transportError(opts.provider, err);
    if (opts.scrub) e.message = opts.scrub(e.message);
    if (!res.headersSent && !out) {
      // Nothing was produced for the client yet: the caller answers with the error's own status.
      throw e;
    }
    try {
      flushHeld();
    } catch {
      // Held items that cannot be rendered are dropped; the error event still goes out.
    }
    out += plan.errorEvent(e);
    await write().catch(() => undefined);
    res.end();
    throw e;
  }
}
