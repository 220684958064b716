import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants, type Http2Stream } from 'node:http2';
import type { GatewayError } from '../unified/errors.ts';
import { toGatewayError, type ErrorExtra, type Outcome, type StreamFormat, type TextPump, type TextSink } from '../pipeline/outcome.ts';
import { answerRequestId, writeContentHead } from './answer-response.ts';
import { noteError } from './answer-errors.ts';
import type { SizedText } from '../unified/json-splice.ts';

export { toGatewayError };

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * The one place an executed request becomes an HTTP answer. `renderError`: native prefixes answer
 * errors in their provider's own shape (streams carry their own encoding in the outcome). A promise
 * only for a body still being written (bytes, streams): a whole answer is written at once and makes
 * none for its caller to wait on.
 */
export function respond(res: ServerResponse, outcome: Outcome, renderError?: ErrorRenderer): Promise<void> | undefined {
  switch (outcome.kind) {
    case 'json':
      sendJson(res, outcome.status, outcome.value);
      return undefined;
    case 'text':
      sendJsonText(res, outcome.status, outcome.text, outcome.headers, outcome.length);
      return undefined;
    case 'error':
      sendError(res, outcome.error, outcome.extra, renderError);
      return undefined;
    case 'bytes':
      return writeBytes(res, outcome.status, outcome.headers, outcome.body);
    case 'stream':
      if (outcome.pump) return writePumped(res, outcome.pump, outcome.format, outcome.extra, renderError);
      return writeStream(res, outcome.items, outcome.format, outcome.extra, renderError);
  }
}

/** Resolves once the client drained what was written, or left. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

async function writeBytes(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: AsyncIterable<Uint8Array>): Promise<void> {
  res.writeHead(status, headers);
  try {
    for await (const chunk of body) {
      // A client that leaves closes instead of draining; leaving the loop drops the upstream body.
      if (res.destroyed) return;
      if (!res.write(chunk)) await drained(res);
    }
    res.end();
  } catch {
    // Headers are out: the only honest signal left is a cut connection (the client sees a short body).
    res.destroy();
  }
}

async function writeStream(
  res: ServerResponse,
  items: AsyncIterable<readonly unknown[]>,
  format: StreamFormat<unknown>,
  extra: ErrorExtra | undefined,
  renderError?: ErrorRenderer,
): Promise<void> {
  const encoding = format.encoding ?? 'utf8';
  try {
    for await (const batch of items) {
      if (res.destroyed) return;
      let out = '';
      for (const item of batch) out += format.encode(item);
      if (!out) continue;
      streamHead(res, format);
      if (!res.write(out, encoding)) await drained(res);
    }
    await endStream(res, format);
  } catch (err) {
    failStream(res, err, format, extra, renderError);
  }
}

/**
 * A stream pushed as text (pipeline/relay.ts): written as each upstream read arrives, ended as
 * writeStream ends one. A promise chain, not an async function: a held stream would keep the
 * function's suspended frame for its whole life.
 */
function writePumped(
  res: ServerResponse,
  pump: TextPump,
  format: StreamFormat<unknown>,
  extra: ErrorExtra | undefined,
  renderError?: ErrorRenderer,
): Promise<void> {
  let pumping: Promise<void>;
  try {
    pumping = pump(new AnswerSink(res, format));
  } catch (err) {
    pumping = Promise.reject(err);
  }
  return pumping.then(() => endStream(res, format)).catch((err: unknown) => failStream(res, err, format, extra, renderError));
}

/** The answer as a pushed stream's sink. A class: one object kept per held stream, not an object, two closures and their context. */
class AnswerSink implements TextSink {
  readonly #res: ServerResponse;
  readonly #format: StreamFormat<unknown>;

  constructor(res: ServerResponse, format: StreamFormat<unknown>) {
    this.#res = res;
    this.#format = format;
  }

  write(text: string, bytes?: 'latin1'): boolean {
    const res = this.#res;
    // A client gone: its text is dropped (the pump ends on the abort that follows).
    if (res.destroyed) return true;
    streamHead(res, this.#format);
    return res.write(text, bytes ?? this.#format.encoding ?? 'utf8');
  }

  drained(): Promise<void> {
    return drained(this.#res);
  }
}

/**
 * A stream's headers go out with its first bytes: a stream that fails before it produced anything
 * is answered with a plain error status instead of a 200 carrying only an error event.
 */
function streamHead(res: ServerResponse, format: StreamFormat<unknown>): void {
  if (!res.headersSent) res.writeHead(200, format.headers ?? SSE_HEADERS);
}

/** A stream that ran to its end: headers (if nothing was written), the closing marker, the end. */
async function endStream(res: ServerResponse, format: StreamFormat<unknown>): Promise<void> {
  if (res.destroyed) return;
  streamHead(res, format);
  const encoding = format.encoding ?? 'utf8';
  // HTTP/1.1: the closing marker and the chunked terminator in one socket write instead of two
  // (one write of about 17 per held chat stream).
  if (format.done && isHttp1(res)) {
    res.end(format.done, encoding);
    return;
  }
  // end() without a chunk: an HTTP/2 answer's last write and an end(chunk, encoding) written
  // together can reach the wire mangled (binary framings show it).
  if (format.done && !res.write(format.done, encoding)) await drained(res);
  res.end();
}

const isHttp1 = (res: ServerResponse): boolean => (res.req as ServerResponse['req'] | undefined)?.httpVersionMajor === 1;

/** A stream that failed: a plain error answer if nothing was sent yet, else its in-band error event. */
function failStream(res: ServerResponse, err: unknown, format: StreamFormat<unknown>, extra: ErrorExtra | undefined, renderError?: ErrorRenderer): void {
  if (res.destroyed) return;
  const e = toGatewayError(err);
  if (!res.headersSent) {
    sendError(res, e, extra, renderError);
    return;
  }
  noteError(res, errorCode(e));
  res.write(format.errorEvent(e), format.encoding ?? 'utf8');
  res.end();
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** `length`: the text's UTF-8 length if already counted (only when it is of this very text). */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers?: Record<string, string | string[]>, length?: SizedText): void {
  const bytes = length !== undefined && length.text === text ? length.bytes : Buffer.byteLength(text);
  writeContentHead(res, status, 'application/json', bytes, headers);
  res.end(text);
}

/**
 * Renders an error in a provider's native shape (for the compatibility prefixes), with any headers
 * it needs; `requestId` (the answer's x-request-id) goes where that shape has a place for one.
 */
export type ErrorRenderer = (err: GatewayError, requestId?: string) => { status: number; body: unknown; headers?: Record<string, string> };

export function sendError(
  res: ServerResponse,
  err: unknown,
  extra?: { model_requested?: string; request_type?: string },
  render?: ErrorRenderer,
): GatewayError {
  const e = toGatewayError(err);
  noteError(res, errorCode(e));
  if (res.headersSent) {
    // A stream already reported the error in-band; cut only an answer left half-written.
    if (!res.writableEnded) res.destroy();
    return e;
  }
  // 499 is our internal marker for a client that left; nobody is there to read it.
  if (e.status === 499) {
    res.destroy();
    return e;
  }
  const headers: Record<string, string> = {};
  stopReading(res, headers);
  if (e.retryAfter !== undefined) headers['retry-after'] = String(Math.ceil(e.retryAfter));
  // The id the server put on the answer (server.ts), so a client's error names its log record.
  const id = answerRequestId(res);
  if (render) {
    const native = render(e, id);
    sendJson(res, native.status, native.body, { ...headers, ...native.headers });
  } else {
    sendJson(res, e.status, e.toBody(extra, id), headers);
  }
  return e;
}

/** What the access line names a failure by: the error's code, else its type. */
const errorCode = (e: GatewayError): string => e.code ?? e.type;

/**
 * An error answered before the request body was all received (a 413, an early 401) does not read
 * the rest: HTTP/1.1 closes the connection after the answer (node would otherwise drain it to
 * reuse the connection, however large); HTTP/2 ends just that stream with RST_STREAM(CANCEL) once
 * the answer is out, which tells the client to stop sending (node puts no NO_ERROR reset on the
 * wire for a stream it has finished answering, so clients would wait forever).
 */
function stopReading(res: ServerResponse, headers: Record<string, string>): void {
  const req = res.req as ServerResponse['req'] | undefined;
  if (!req) return;
  if (req.httpVersionMajor === 1) {
    if (!req.complete) {
      headers.connection = 'close';
      lingerOnClose(req.socket);
    }
    return;
  }
  // `remoteClose`: the client ended its side, whether or not the handler read the body.
  const stream = (res as unknown as { stream?: Http2Stream }).stream;
  if (!stream || stream.destroyed || stream.state.remoteClose) return;
  // The stream's own 'finish' (answer handed to the session); the compat response's comes only after close.
  stream.once('finish', () => stream.close(constants.NGHTTP2_CANCEL));
}

/** How long, and how much, a closing HTTP/1.1 connection still reads (and drops) of an unwanted body. */
export const LINGER_MS = 2000;
export const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Closing a socket with unread bytes makes the kernel send a reset, and a client still uploading
 * then sees "connection reset" instead of the 413 it was sent. So, as nginx's lingering close does,
 * the socket half-closes (the answer and FIN go out) and drops what still arrives for a bounded time
 * and amount, then closes. node calls destroySoon once the answer is finished on a closing connection.
 */
function lingerOnClose(socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  socket.destroySoon = function linger(this: Socket): Socket {
    if (this.writable) this.end();
    let seen = 0;
    const close = () => this.destroy();
    const timer = setTimeout(close, LINGER_MS).unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', close);
    this.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > LINGER_BYTES) close();
    });
    this.resume();
    return this;
  };
}
