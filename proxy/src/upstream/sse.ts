// Incremental server-sent-events parser (WHATWG rules: LF, CRLF or CR line ends, multi-line data,
// comments ignored). Bytes go in as they arrive; complete events come out. One event may hold at
// most `maxEventBytes` (counted in characters, data plus the line being read): an upstream sending
// an endless event is cut off with a 502 instead of being buffered whole.
import type { SseEvent } from '../unified/stream.ts';
import { upstreamTooLarge } from '../unified/errors.ts';

export interface SseParserOptions {
  maxEventBytes?: number;
  /** Named in the error when an event is too large. */
  provider?: string;
}

export const EVENT_LIMIT_SETTING = 'max_stream_event_size_mb';

export class SseParser {
  #decoder = new TextDecoder();
  /** The line being read, in the pieces it arrived in. */
  #pieces: string[] = [];
  #piecesLength = 0;
  #event: string | undefined;
  #data: string[] = [];
  #dataSize = 0;
  readonly #max: number;
  readonly #provider: string;

  constructor(opts: SseParserOptions = {}) {
    this.#max = opts.maxEventBytes ?? Infinity;
    this.#provider = opts.provider ?? 'upstream';
  }

  /** Feed raw bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    // A chunk without a line end only extends the line being read: kept as a piece, not joined
    // (joining and rescanning a growing line on every chunk is quadratic in a long event).
    if (!hasLineEnd(text) && !this.#pendingCr()) {
      if (text) this.#pieces.push(text);
      this.#piecesLength += text.length;
      this.#check();
      return [];
    }
    const buffer = this.#pieces.length ? this.#pieces.join('') + text : text;
    this.#pieces = [];
    this.#piecesLength = 0;
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let i = start; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10) { end = i; next = i + 1; break; }
        if (c === 13) {
          // A CR at the very end may be the first half of CRLF: wait for more bytes.
          if (i + 1 === buffer.length) break;
          end = i;
          next = buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
          break;
        }
      }
      if (end < 0) break;
      this.#line(buffer.slice(start, end), out);
      start = next;
    }
    const rest = buffer.slice(start);
    if (rest) this.#pieces.push(rest);
    this.#piecesLength = rest.length;
    this.#check();
    return out;
  }

  #pendingCr(): boolean {
    const last = this.#pieces.at(-1);
    return last !== undefined && last.charCodeAt(last.length - 1) === 13;
  }

  #check(): void {
    if (this.#piecesLength + this.#dataSize > this.#max) {
      this.#reset();
      throw upstreamTooLarge(this.#provider, 'stream event', this.#max, EVENT_LIMIT_SETTING);
    }
  }

  /** End of stream: an event not closed by a blank line is still delivered. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.#pieces.join('');
    // A lone CR at the end closed its line; the rest is a last line without an end.
    if (rest) this.#line(rest.charCodeAt(rest.length - 1) === 13 ? rest.slice(0, -1) : rest, out);
    this.#pieces = [];
    this.#piecesLength = 0;
    this.#line('', out);
    return out;
  }

  #reset(): void {
    this.#pieces = [];
    this.#piecesLength = 0;
    this.#data = [];
    this.#dataSize = 0;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length) out.push(this.#event ? { event: this.#event, data: this.#data.join('\n') } : { data: this.#data.join('\n') });
      this.#event = undefined;
      this.#data = [];
      this.#dataSize = 0;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      this.#dataSize += value.length + 1;
      if (this.#dataSize > this.#max) {
        this.#reset();
        throw upstreamTooLarge(this.#provider, 'stream event', this.#max, EVENT_LIMIT_SETTING);
      }
    } else if (field === 'event') this.#event = value;
  }
}

function hasLineEnd(text: string): boolean {
  return text.includes('\n') || text.includes('\r');
}
