// `GET /ws`: the dashboard's live socket (the log tail and notifications of this replica). The
// upgrade is checked before the `ws` package is even loaded: a cross-site Origin gets 403, a
// missing or spent ticket 401 (with management auth off: loopback clients addressing a local name
// only, no ticket). Connected sockets are pinged, dropped when they stop answering or fall behind
// (a capped send buffer), and capped in number; nothing a client sends is acted upon.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Snapshot } from '../config/snapshot.ts';
import { managementAuth } from '../api/auth.ts';
import { checkLocalOnly } from '../api/guards.ts';
import { corsPolicy } from '../http/cors.ts';
import { log } from '../log.ts';
import { refuseUpgrade, upgradeRoutes } from '../http/upgrades.ts';
import type { EventHub } from '../logs/live-events.ts';
import type { TicketStore } from '../api/ws-tickets.ts';

export const LIVE_PATH = '/ws';

export interface LiveOptions {
  events: EventHub;
  tickets: TicketStore;
  current: () => Snapshot;
  /** Open dashboard sockets at most (default 64); more are refused with 503. */
  maxConnections?: number;
  /** A socket whose unsent data passes this is dropped (default 1 MiB): a slow client must not hold memory. */
  maxBufferedBytes?: number;
  /** Ping interval; a socket that did not answer the previous ping is dropped (default 30 s). */
  heartbeatMs?: number;
}

const DEFAULTS = { maxConnections: 64, maxBufferedBytes: 1024 * 1024, heartbeatMs: 30_000 };
/** The dashboard sends nothing that matters; a large frame is refused by the parser itself. */
const MAX_PAYLOAD = 4096;

function ticketOf(url: string | undefined): string | null {
  const raw = url ?? '';
  const q = raw.indexOf('?');
  return q < 0 ? null : new URLSearchParams(raw.slice(q + 1)).get('ticket');
}

function refuse(socket: Duplex, status: number, message: string, code: string): void {
  refuseUpgrade(socket, status, { is_bifrost_error: true, status_code: status, error: { message, type: status === 403 ? 'permission_error' : status === 401 ? 'authentication_error' : 'api_error', code } });
}

/** Same host as the Host header, or listed in client.allowed_origins by name (a `*` there does not open the socket to every site). */
function originOk(req: IncomingMessage, snap: Snapshot): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true; // not a browser: the ticket (or loopback) decides
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false; // `null` (sandboxed frames, file:) is never this site
  }
  if (parsed.host.toLowerCase() === (req.headers.host ?? '').trim().toLowerCase()) return true;
  return corsPolicy(snap.config.client?.allowed_origins)?.origins.has(parsed.origin) ?? false;
}

/** Why the handshake is refused, or undefined when it may proceed. Spends the ticket. */
function admission(req: IncomingMessage, opts: LiveOptions, open: number, max: number): [number, string, string] | undefined {
  const snap = opts.current();
  if (!originOk(req, snap)) return [403, `cross-origin WebSocket from ${String(req.headers.origin).slice(0, 200)} refused: list the origin in client.allowed_origins to allow it`, 'origin_not_allowed'];
  if (managementAuth(snap.governance.auth).enabled) {
    const ticket = ticketOf(req.url);
    if (!ticket || !opts.tickets.consume(ticket)) return [401, 'a WebSocket ticket is required: POST /api/session/ws-ticket, then connect to /ws?ticket=<ticket> within 30 s (each ticket opens one socket)', 'invalid_ticket'];
  } else {
    try {
      checkLocalOnly(req);
    } catch (err) {
      return [401, (err as Error).message, 'auth_required_for_remote'];
    }
  }
  if (open >= max) return [503, `too many dashboard sockets are open on this gateway (${max})`, 'too_many_connections'];
  return undefined;
}

/** Serves /ws on `server` (HTTP/1.1 upgrades; h2c connections never reach the 'upgrade' event). */
export function attachLive(server: Server, opts: LiveOptions): { close(): void; readonly size: number } {
  const max = opts.maxConnections ?? DEFAULTS.maxConnections;
  const maxBuffered = opts.maxBufferedBytes ?? DEFAULTS.maxBufferedBytes;
  const heartbeatMs = opts.heartbeatMs ?? DEFAULTS.heartbeatMs;
  const sockets = new Set<WebSocket>();
  /** Handshakes admitted and still loading `ws`: they count against the cap too. */
  let pending = 0;
  let wss: Promise<WebSocketServer> | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const alive = new WeakMap<WebSocket, boolean>();

  const load = (): Promise<WebSocketServer> =>
    (wss ??= import('ws').then(({ WebSocketServer }) => {
      const s = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD, perMessageDeflate: false, clientTracking: false });
      s.on('error', (err: Error) => log.debug('dashboard socket server error', { error: err.message }));
      return s;
    }));

  const beat = (): void => {
    for (const ws of sockets) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  };

  const connected = (ws: WebSocket): void => {
    sockets.add(ws);
    alive.set(ws, true);
    heartbeat ??= setInterval(beat, heartbeatMs).unref();
    const off = opts.events.subscribe((frame) => {
      if (ws.readyState !== 1) return;
      if (ws.bufferedAmount > maxBuffered) {
        log.info('dashboard socket dropped: it does not read its events', { buffered_bytes: ws.bufferedAmount });
        ws.terminate();
        return;
      }
      ws.send(frame);
    });
    ws.on('pong', () => alive.set(ws, true));
    // Malformed frames (bad opcode, unmasked, oversized) end that socket with a close code, never the process.
    ws.on('error', (err: Error) => log.debug('dashboard socket error', { error: err.message }));
    ws.on('message', () => alive.set(ws, true));
    ws.once('close', () => {
      off();
      sockets.delete(ws);
      if (sockets.size === 0 && heartbeat) {
        clearInterval(heartbeat);
        heartbeat = undefined;
      }
    });
  };

  upgradeRoutes(server).add([LIVE_PATH], (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refused = admission(req, opts, sockets.size + pending, max);
    if (refused) {
      refuse(socket, ...refused);
      return;
    }
    pending++;
    load().then(
      (s) => {
        pending--;
        if (socket.destroyed) return;
        s.handleUpgrade(req, socket, head, connected);
      },
      (err: unknown) => {
        pending--;
        log.error('the WebSocket library could not be loaded', { error: (err as Error).message });
        refuse(socket, 503, 'live updates are unavailable on this gateway', 'live_unavailable');
      },
    );
  });

  const closeAll = (): void => {
    for (const ws of sockets) ws.close(1001, 'the gateway is shutting down');
  };
  // Graceful shutdown closes idle connections, then waits for the rest: a dashboard socket never
  // goes idle, so it is told the gateway is going away instead of holding the drain open.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    closeAll();
  };
  return {
    close: closeAll,
    get size() {
      return sockets.size;
    },
  };
}
