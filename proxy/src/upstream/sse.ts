// Incremental server-sent-events parser (WHATWG rules: LF, CRLF or CR line ends, multi-line data,
// comments ignored). Bytes go in as they arrive; complete events come out.
import type { SseEvent } from '../unified/stream.ts';

export class SseParser {
  #decoder = new TextDecoder();
  #buffer = '';
  #event: string | undefined;
  #data: string[] = [];

  /** Feed raw bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    this.#buffer += typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let i = start; i < this.#buffer.length; i++) {
        const c = this.#buffer.charCodeAt(i);
        if (c === 10) { end = i; next = i + 1; break; }
        if (c === 13) {
          // A CR at the very end may be the first half of CRLF: wait for more bytes.
          if (i + 1 === this.#buffer.length) break;
          end = i;
          next = this.#buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
          break;
        }
      }
      if (end < 0) break;
      this.#line(this.#buffer.slice(start, end), out);
      start = next;
    }
    this.#buffer = this.#buffer.slice(start);
    return out;
  }

  /** End of stream: an event not closed by a blank line is still delivered. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.#buffer) this.#line(this.#buffer, out);
    this.#buffer = '';
    this.#line('', out);
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.#data.length) out.push(this.#event ? { event: this.#event, data: this.#data.join('\n') } : { data: this.#data.join('\n') });
      this.#event = undefined;
      this.#data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }
}
