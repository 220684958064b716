// HTTP/2 over cleartext (h2c, prior knowledge) on the same port as HTTP/1.1. The AWS SDK's Bedrock
// Runtime client speaks only HTTP/2, so without this an application pointed at
// `http://gateway/bedrock` (an in-cluster Service, say) could not connect at all. Each new
// connection's first bytes decide: the HTTP/2 preface (`PRI * HTTP/2.0`) goes to an HTTP/2
// session, anything else to the unchanged node:http server.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { constants, createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { DEFAULT_LIMITS, type ListenerLimits } from './limits.ts';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';

const PREFACE = 'PRI ';

/**
 * Serves h2c on `server` with the same request listener. Handlers receive node's HTTP/2
 * compatibility objects (`Http2ServerRequest`/`Response`), which offer what they use of
 * IncomingMessage/ServerResponse: headers, url, method, body events, writeHead/write/end, drain,
 * close. Pseudo-headers are moved out of `req.headers` (`:authority` becomes `host`) so code that
 * forwards headers sees HTTP/1-style ones.
 *
 * The listener's limits hold here too: header block size, streams per session, and the time a
 * stream may take to deliver its body (node:http's requestTimeout has no HTTP/2 counterpart).
 */
export function serveH2c(server: Server, onRequest: (req: IncomingMessage, res: ServerResponse) => void, bounds: Partial<ListenerLimits> = {}): void {
  const limits = { ...DEFAULT_LIMITS, ...bounds };
  const sessions = new Set<ServerHttp2Session>();
  const h2 = createHttp2Server(
    {
      maxSendHeaderBlockLength: limits.maxHeaderBytes,
      settings: { maxConcurrentStreams: limits.h2MaxStreams, maxHeaderListSize: limits.maxHeaderBytes },
    },
    (req: Http2ServerRequest, res: Http2ServerResponse) => {
      // A filtered copy shadows the getter: method and url still read the pseudo-headers inside.
      const headers: Record<string, string | string[] | undefined> = {};
      for (const [name, value] of Object.entries(req.headers)) if (!name.startsWith(':')) headers[name] = value;
      headers.host ??= req.headers[':authority'];
      Object.defineProperty(req, 'headers', { value: headers, enumerable: true });
      bodyDeadline(res, limits.requestTimeoutMs);
      onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    },
  );
  // Errors of one session or stream concern that client only: logged, never thrown.
  h2.on('sessionError', (err: Error) => log.debug('http/2 session error', { error: err.message }));
  h2.on('streamError', (err: Error) => log.debug('http/2 stream error', { error: err.message }));
  h2.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.on('error', (err: Error) => log.debug('http/2 session error', { error: err.message }));
    session.once('close', () => sessions.delete(session));
    // Like HTTP/1 keep-alive: a session idle for the timeout closes, but a slow answer is never cut.
    let open = 0;
    session.on('stream', (stream) => {
      open++;
      stream.on('error', (err: Error) => log.debug('http/2 stream error', { error: err.message }));
      stream.once('close', () => open--);
    });
    session.setTimeout(limits.keepAliveMs, () => {
      if (open === 0) session.close();
    });
  });

  const [http1] = server.listeners('connection') as ((socket: Socket) => void)[];
  if (!http1) return;
  server.removeListener('connection', http1);
  server.on('connection', (socket: Socket) => {
    // Until a protocol takes the socket, a reset (or any error) is this connection's end, not the process's.
    socket.on('error', () => socket.destroy());
    // A connection that never sends a byte is not kept forever: it is late with its headers.
    const silent = () => socket.destroy();
    socket.setTimeout(limits.headersTimeoutMs);
    socket.once('timeout', silent);
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.off('timeout', silent);
      socket.pause();
      if (first.subarray(0, PREFACE.length).toString('latin1') === PREFACE) {
        h2.emit('connection', replay(socket, first));
        return;
      }
      socket.unshift(first);
      http1.call(server, socket);
      socket.resume();
    });
  });

  // Graceful shutdown closes idle keep-alive connections; HTTP/2 sessions close once their
  // streams are done.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const s of sessions) s.close();
  };
}

/**
 * A stream whose client is still sending its body when the request timeout passes is answered 408
 * (or reset, if its answer has begun) — the HTTP/2 counterpart of node:http's requestTimeout.
 * `remoteClose` says whether the client ended its side, whether or not the handler read the body.
 */
function bodyDeadline(res: Http2ServerResponse, timeoutMs: number): void {
  const stream = res.stream;
  const timer = setTimeout(() => {
    if (stream.destroyed || stream.state.remoteClose) return;
    if (res.headersSent) {
      stream.close(constants.NGHTTP2_CANCEL);
      return;
    }
    sendError(res as unknown as ServerResponse, new GatewayError(408, `request body not received within ${timeoutMs / 1000} s`, { type: 'request_timeout' }));
  }, timeoutMs);
  stream.once('close', () => clearTimeout(timer));
}

/**
 * The socket as a stream that first yields the bytes already read. The HTTP/2 session reads a
 * socket's native handle directly, so bytes put back with unshift would never reach it; a plain
 * Duplex makes it read through JavaScript instead.
 */
function replay(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, encoding, cb) => void socket.write(chunk, encoding, cb),
    final: (cb) => {
      socket.end();
      cb();
    },
    destroy: (err, cb) => {
      socket.destroy(err ?? undefined);
      cb(err);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.once('end', () => stream.push(null));
  socket.once('close', () => stream.destroy());
  socket.on('error', (err) => stream.destroy(err));
  return stream;
}
