// The HTTP front: node:http (no framework on the hot path), an exact-match route table (then a few
// patterns), and one abort per request that fires when the client goes away mid-answer (its
// AbortSignal made only when something reads it).
// Nothing a client sends may end the process: path decoding is total, a handler that throws (sync
// or async) answers 500, and every request, response and socket has an 'error' listener.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import type { SnapshotHolder } from '../config/source.ts';
import type { Exchange } from './exchange.ts';
import type { Services } from '../services.ts';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { serveH2c, takenForH2c } from './h2c.ts';
import { handleCors } from './cors.ts';
import { logAccess } from './access-log.ts';
import { DEFAULT_LIMITS, type ListenerLimits } from './limits.ts';
import { REQUEST_ID_HEADER, requestIdFrom } from '../request-id.ts';
import { RequestAbort } from '../pipeline/client-gone.ts';
import { AnswerResponse } from './answer-response.ts';

export type Handler = (ex: Exchange) => Promise<void> | void;
export type Methods = Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE', Handler>>;
export type Routes = Record<string, Methods>;
/** Routes with variable segments (a Gemini model name may itself contain `/`); captures become `params`. */
export type PatternRoutes = [RegExp, Methods][];

/** Handles every request under /api (the management API) instead of the route table. */
export type ApiHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A capture's percent-escapes decoded; a malformed one (`%`, `%zz`, a broken UTF-8 sequence) is the client's mistake. */
function decodeParam(value: string, path: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new GatewayError(400, `malformed percent-encoding in path '${path}'`, { param: 'path' });
  }
}

export function createGatewayServer(
  holder: SnapshotHolder,
  services: Services,
  routes: Routes,
  patterns: PatternRoutes = [],
  api?: ApiHandler,
  limits: ListenerLimits = DEFAULT_LIMITS,
  /** The dashboard's page and assets (`/`, `/index.html`, `/assets/*`), asked only when the route table has no such path. */
  pages?: ApiHandler,
  /** Serve HTTPS with this certificate (http/tls.ts) instead of plain HTTP and h2c. */
  tls?: SecureContextOptions,
): Server {
  // An exact route's answer is made once, here: a request to it allocates no tuple and no captures.
  const table = new Map(Object.entries(routes).map(([path, methods]): [string, Matched] => [path, [methods, NO_PARAMS]]));
  const match = (path: string): Matched => {
    const exact = table.get(path);
    if (exact) return exact;
    for (const [re, methods] of patterns) {
      const m = re.exec(path);
      if (m) return [methods, m.slice(1).map((v) => (v === undefined ? v : decodeParam(v, path)))];
    }
    return NO_MATCH;
  };
  /** Runs the route's handler; answers the abort the closing answer fires (undefined: nothing to abort). */
  const route = (req: IncomingMessage, res: ServerResponse, path: string, raw: string, q: number, started: number, access: Exchange['access'], requestId: string): RequestAbort | undefined => {
    const [byMethod, params] = match(path);
    const handler = byMethod?.[req.method as keyof typeof byMethod];
    if (!handler) {
      if (!byMethod && pages && (path === '/' || path === '/index.html' || path.startsWith('/assets/'))) {
        pages(req, res);
        return undefined;
      }
      const err = byMethod
        ? new GatewayError(405, `method ${req.method} is not allowed on ${path}`, { type: 'method_not_allowed' })
        : new GatewayError(404, `no route for ${req.method} ${path}`, { type: 'not_found_error' });
      sendError(res, err);
      return undefined;
    }
    // The emitter the upstream call listens on; the AbortSignal only when read (pipeline/client-gone.ts).
    const abort = new RequestAbort();
    const ex: Exchange = {
      req,
      res,
      path,
      params,
      query: q < 0 ? NO_QUERY : () => new URLSearchParams(raw.slice(q + 1)),
      snapshot: holder.current(),
      abort,
      started,
      access,
      requestId,
      services,
    };
    // Called directly (a sync throw is caught by onRequest): no promise wraps a handler that answers without one.
    const running = handler(ex);
    if (running) running.catch((err: unknown) => failed(res, path, err));
    return abort;
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    let path = q < 0 ? raw : raw.slice(0, q);
    if (path.length > 1 && path.endsWith('/')) path = trimSlashes(path);
    // Without these, an 'error' on either (a write after end, a reset mid-body) would be uncaught.
    req.on('error', ignoreStreamError);
    res.on('error', ignoreStreamError);
    const access: Exchange['access'] = {};
    // Answered on every route (errors, streams, 404s and /api too), before any handler: an HTTP/1.1
    // answer puts it in the head its writeHead is given (answer-response.ts); HTTP/2's takes setHeader.
    const requestId = requestIdFrom(req.headers[REQUEST_ID_HEADER]);
    if (res instanceof AnswerResponse) res.requestId = requestId;
    else res.setHeader(REQUEST_ID_HEADER, requestId);
    const inFlight = services.metrics.inFlight;
    inFlight.inc();
    // One listener for the answer's end: a client gone mid-answer aborts the handler's work. 'close'
    // comes once: `on` spares the wrapper `once` makes per request.
    let abort: RequestAbort | undefined;
    res.on('close', () => {
      if (abort && !res.writableFinished) abort.abort();
      inFlight.dec();
      logAccess(req, res, path, started, access, requestId);
    });
    try {
      // CORS (client.allowed_origins) for every route, /api included; a preflight is answered here.
      if (req.headers.origin !== undefined && handleCors(req, res, holder.current().config.client?.allowed_origins)) return;
      if (api && (path === '/api' || path.startsWith('/api/'))) {
        // express gives the answer a prototype of its own (not AnswerResponse's writeHead): set now.
        res.setHeader(REQUEST_ID_HEADER, requestId);
        api(req, res);
      } else abort = route(req, res, path, raw, q, started, access, requestId);
    } catch (err) {
      failed(res, path, err);
    }
  };
  const options = {
    ServerResponse: AnswerResponse,
    keepAliveTimeout: limits.keepAliveMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    // How often node looks for connections past those timeouts: often enough to keep them close.
    connectionsCheckingInterval: Math.min(5000, Math.max(250, Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
  };
  // https.Server is an http.Server over TLS sockets: the same events, timeouts and connection
  // tracking (drain, closeIdleConnections). HTTP/2 is served on the cleartext listener only (h2c);
  // over TLS the listener offers HTTP/1.1 by ALPN.
  const server: Server = tls ? (createHttpsServer({ ...options, ...tls, ALPNProtocols: ['http/1.1'] }, onRequest) as unknown as Server) : createServer(options, onRequest);
  // The same routes over HTTP/2 cleartext, for clients that speak only HTTP/2 (the AWS SDK).
  if (!tls) serveH2c(server, onRequest, limits);
  // A failed handshake (a client that does not trust the certificate, a port scan) concerns that connection only.
  else server.on('tlsClientError', (err: Error) => log.debug('TLS handshake failed', { error: err.message }));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // The HTTP/2 preface: the connection is an h2c session now (http/h2c.ts).
    if (takenForH2c(socket as Socket)) return;
    // An answer already under way (node keeps it on the socket) must not get a second status line.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!socket.writable || err.code === 'ECONNRESET' || answering) {
      socket.destroy();
      return;
    }
    // node names these; anything else is a malformed request.
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });
  return server;
}

/** A route's handlers by method and the captures of its pattern (none for an exact path). */
type Matched = readonly [Methods | undefined, string[]];
/** Shared by every request without captures: nothing writes to a request's params. */
const NO_PARAMS: string[] = [];
const NO_MATCH: Matched = [undefined, NO_PARAMS];
/** The query of a URL without one: empty, a new object per call as the parsed one is. */
const NO_QUERY = (): URLSearchParams => new URLSearchParams();

/** The last-resort answer: a handler threw (a bug); the client gets a 500 with the error object, the log the stack. */
function failed(res: ServerResponse, path: string, err: unknown): void {
  if (!(err instanceof GatewayError) || err.status >= 500) log.error('unhandled error in handler', { path, error: (err as Error)?.stack ?? String(err) });
  try {
    sendError(res, err);
  } catch (sendErr) {
    // Writing the answer itself failed (a half-written response): the connection is beyond saving.
    log.error('could not answer an error', { path, error: String(sendErr) });
    res.destroy();
  }
}

function ignoreStreamError(err: Error): void {
  log.debug('request stream error', { error: err.message });
}

/** Drops trailing slashes without a regex over a client-chosen string. */
function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(0, end);
}

/**
 * Connections the kernel holds for the gateway before it accepts them (capped by the kernel's
 * net.core.somaxconn). node's default, 511, overflows when thousands of streams open within a
 * second while the event loop is busy: the kernel then drops SYNs, and the client retries only
 * after a second, a stall before the first byte.
 */
export const LISTEN_BACKLOG = 4096;

export function listen(server: Server, port: number, host: string): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve({ port: typeof addr === 'object' && addr ? addr.port : port });
    });
  });
}

export type { IncomingMessage, ServerResponse };
