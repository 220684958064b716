// HTTP/2 over cleartext (h2c, prior knowledge) on the same port as HTTP/1.1. The AWS SDK's Bedrock
// Runtime client speaks only HTTP/2, so without this an application pointed at
// `http://gateway/bedrock` (an in-cluster Service, say) could not connect at all. Every connection
// starts on node:http, whose parser reads the socket natively; a connection whose first bytes are the
// HTTP/2 preface (`PRI * HTTP/2.0…`) is one node:http's parser stops at and reports as a client
// error, and is handed from there to an HTTP/2 session. (Looking at each connection's first bytes in
// JavaScript before node:http took it cost every HTTP/1 connection a read through JavaScript, a
// timer and listeners: about 7 % of a new connection's instructions for a GET /health.)
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { constants, createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { DEFAULT_LIMITS, type ListenerLimits } from './limits.ts';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';

/** The client's connection preface (RFC 9113 section 3.4); node:http's parser stops right after it. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** The client error node:http reports for it (llhttp's pause on the preface). */
const PREFACE_ERROR = 'HPE_PAUSED_H2_UPGRADE';

/** What node:http's client error carries for a parse error. */
interface ParseError extends Error {
  code?: string;
  /** The read the parser stopped in. */
  rawPacket?: Buffer;
  /** How far into it the parser got. */
  bytesParsed?: number;
}

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

  server.on('clientError', (err: ParseError, socket: Socket) => {
    if (err.code === PREFACE_ERROR && prefaceFirst(socket, err) && detachHttp1(socket)) {
      taken.add(socket);
      // The parser stopped right after the preface: the rest of its read is the session's.
      h2.emit('connection', replay(socket, Buffer.concat([PREFACE, err.rawPacket!.subarray(err.bytesParsed)])));
      return;
    }
    // node:http's own answer to a bad request needs no listener; with this one it would get none.
    if (server.listenerCount('clientError') === 1) socket.destroy();
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

/** Connections handed to HTTP/2 from node:http's client error: other client-error listeners leave them alone. */
const taken = new WeakSet<Socket>();

/** Whether serveH2c took this connection from the client error being emitted (it is an HTTP/2 session now). */
export function takenForH2c(socket: Socket): boolean {
  return taken.has(socket);
}

/** Prior knowledge: the preface ended at the connection's 24th byte (a preface after HTTP/1 requests is not one). */
function prefaceFirst(socket: Socket, err: ParseError): boolean {
  return err.rawPacket !== undefined && err.bytesParsed !== undefined && socket.bytesRead - err.rawPacket.length + err.bytesParsed === PREFACE.length;
}

/** The parts of node:http's parser (_http_common.js) a connection is taken back from. */
interface Http1Parser {
  _consumed?: boolean;
  unconsume(): void;
  remove(): void;
  socket: Socket | null;
}

/** node:http's listeners on a connection it serves (_http_server.js's connectionListenerInternal). */
const HTTP1_LISTENERS = new Set(['bound socketOnData', 'bound socketOnEnd', 'bound socketOnClose', 'bound socketOnDrain', 'socketOnTimeout', 'onSocketResume', 'onSocketPause']);

/**
 * Takes a connection back from node:http as node does for an upgrade (onParserExecuteCommon): its
 * parser off the socket's handle and out of the server's connection list (whose header and request
 * timeouts would otherwise fire on a live session), and node:http's listeners removed. False when
 * this node keeps its parser otherwise: the connection is then refused as before.
 */
function detachHttp1(socket: Socket): boolean {
  const held = socket as Socket & { parser?: Http1Parser | null };
  const parser = held.parser;
  if (!parser || typeof parser.unconsume !== 'function' || typeof parser.remove !== 'function') return false;
  if (parser._consumed) parser.unconsume();
  parser._consumed = false;
  parser.remove();
  parser.socket = null;
  held.parser = null;
  for (const event of ['data', 'end', 'close', 'drain', 'timeout', 'resume', 'pause'] as const) {
    for (const fn of socket.listeners(event) as ((...args: unknown[]) => void)[]) if (HTTP1_LISTENERS.has(fn.name)) socket.removeListener(event, fn);
  }
  return true;
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
