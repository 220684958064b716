import type { ServerResponse } from 'node:http';
import { constants, type Http2Stream } from 'node:http2';
import { GatewayError } from '../unified/errors.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

export function sendJsonText(res: ServerResponse, status: number, text: string, headers?: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(500, `internal error: ${(err as Error)?.message ?? String(err)}`, { type: 'internal_error' });
}

/** Renders an error in a provider's native shape (for the compatibility prefixes), with any headers it needs. */
export type ErrorRenderer = (err: GatewayError) => { status: number; body: unknown; headers?: Record<string, string> };

export function sendError(
  res: ServerResponse,
  err: unknown,
  extra?: { model_requested?: string; request_type?: string },
  render?: ErrorRenderer,
): GatewayError {
  const e = toGatewayError(err);
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
  if (render) {
    const native = render(e);
    sendJson(res, native.status, native.body, { ...headers, ...native.headers });
  } else {
    sendJson(res, e.status, e.toBody(extra), headers);
  }
  return e;
}

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
    if (!req.complete) headers.connection = 'close';
    return;
  }
  // `remoteClose`: the client ended its side, whether or not the handler read the body.
  const stream = (res as unknown as { stream?: Http2Stream }).stream;
  if (!stream || stream.destroyed || stream.state.remoteClose) return;
  // The stream's own 'finish' (answer handed to the session); the compat response's comes only after close.
  stream.once('finish', () => stream.close(constants.NGHTTP2_CANCEL));
}
