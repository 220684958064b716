// The HTTP front: node:http (no framework on the hot path), an exact-match route table (then a few
// patterns), and one
// AbortSignal per request that fires when the client goes away mid-answer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SnapshotHolder } from '../config/source.ts';
import type { Exchange } from './exchange.ts';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { serveH2c } from './h2c.ts';

const KEEP_ALIVE_MS = 65_000;

export type Handler = (ex: Exchange) => Promise<void> | void;
export type Methods = Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE', Handler>>;
export type Routes = Record<string, Methods>;
/** Routes with variable segments (a Gemini model name may itself contain `/`); captures become `params`. */
export type PatternRoutes = [RegExp, Methods][];

/** Handles every request under /api (the management API) instead of the route table. */
export type ApiHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createGatewayServer(holder: SnapshotHolder, routes: Routes, patterns: PatternRoutes = [], api?: ApiHandler): Server {
  const table = new Map(Object.entries(routes));
  const match = (path: string): [Methods | undefined, string[]] => {
    const exact = table.get(path);
    if (exact) return [exact, []];
    for (const [re, methods] of patterns) {
      const m = re.exec(path);
      if (m) return [methods, m.slice(1).map((v) => decodeURIComponent(v))];
    }
    return [undefined, []];
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    let path = q < 0 ? raw : raw.slice(0, q);
    if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '');
    if (api && (path === '/api' || path.startsWith('/api/'))) {
      api(req, res);
      return;
    }
    const [byMethod, params] = match(path);
    const handler = byMethod?.[req.method as keyof typeof byMethod];
    if (!handler) {
      const err = byMethod
        ? new GatewayError(405, `method ${req.method} is not allowed on ${path}`, { type: 'method_not_allowed' })
        : new GatewayError(404, `no route for ${req.method} ${path}`, { type: 'not_found_error' });
      req.resume();
      sendError(res, err);
      return;
    }
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const ex: Exchange = {
      req,
      res,
      path,
      params,
      query: () => new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)),
      snapshot: holder.current(),
      signal: controller.signal,
      started,
    };
    Promise.resolve()
      .then(() => handler(ex))
      .catch((err: unknown) => {
        log.error('unhandled error in handler', { path, error: (err as Error)?.stack ?? String(err) });
        sendError(res, err);
      });
  };
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, onRequest);
  // The same routes over HTTP/2 cleartext, for clients that speak only HTTP/2 (the AWS SDK).
  serveH2c(server, onRequest, KEEP_ALIVE_MS);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (socket.writable && err.code !== 'ECONNRESET') socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return server;
}

export function listen(server: Server, port: number, host: string): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve({ port: typeof addr === 'object' && addr ? addr.port : port });
    });
  });
}

export type { IncomingMessage, ServerResponse };
