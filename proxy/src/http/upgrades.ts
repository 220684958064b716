// The WebSocket upgrades a listener serves, by path: the dashboard's /ws, the realtime and Responses
// sockets. One 'upgrade' listener per server dispatches to the handler whose path matches; any
// other Upgrade request is answered 400, and one a handler does not claim (shouldUpgradeCallback)
// is served as a plain request by the route table instead.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface UpgradeRoutes {
  /** Serves WebSocket upgrades of `paths` (exact, query ignored). */
  add(paths: readonly string[], handle: UpgradeHandler): void;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** An HTTP answer written on a socket whose upgrade is refused (the handshake never completes). */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nconnection: close\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  let path = q < 0 ? raw : raw.slice(0, q);
  while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path;
}

const isWebSocket = (req: IncomingMessage): boolean => /\bwebsocket\b/i.test(req.headers.upgrade ?? '');

/** The upgrade table of `server` (created on first use; one per server). */
export function upgradeRoutes(server: Server): UpgradeRoutes {
  const known = tables.get(server);
  if (known) return known;
  const table = new Map<string, UpgradeHandler>();
  const handlerOf = (req: IncomingMessage): UpgradeHandler | undefined => (isWebSocket(req) ? table.get(pathOf(req.url)) : undefined);
  (server as Server & { shouldUpgradeCallback?: (req: IncomingMessage) => boolean }).shouldUpgradeCallback = (req) => handlerOf(req) !== undefined;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until a handler takes the socket, a reset is this connection's end, not the process's.
    socket.on('error', () => socket.destroy());
    const handle = handlerOf(req);
    if (!handle) {
      refuseUpgrade(socket, 400, { is_bifrost_error: true, status_code: 400, error: { message: `no WebSocket is served on ${pathOf(req.url).slice(0, 200)}`, type: 'invalid_request_error', code: 'unsupported_upgrade' } });
      return;
    }
    handle(req, socket, head);
  });
  const routes: UpgradeRoutes = {
    add(paths, handle) {
      for (const p of paths) table.set(p, handle);
    },
  };
  tables.set(server, routes);
  return routes;
}

const tables = new WeakMap<Server, UpgradeRoutes>();
