// The dashboard's share of the HTTP front, built once in gateway.ts: the page and its assets (served
// when the route table misses), the WebSocket tickets shared with /api/session/ws-ticket, and /ws.
import type { Server } from 'node:http';
import type { Snapshot } from '../config/snapshot.ts';
import { managementAuth } from '../api/auth.ts';
import { credentialKey } from '../api/credential-key.ts';
import { dashboardPages, type PagesHandler } from './assets.ts';
import type { EventHub } from '../logs/live-events.ts';
import { attachLive } from './live.ts';
import { TicketStore } from '../api/ws-tickets.ts';

export interface DashboardFront {
  pages: PagesHandler;
  tickets: TicketStore;
  /** Serves /ws on the server (its 'upgrade' event). */
  attach(server: Server): void;
}

export function dashboardFront(opts: { current: () => Snapshot; events: EventHub; dir?: string }): DashboardFront {
  const tickets = new TicketStore(() => credentialKey(opts.current()));
  return {
    pages: dashboardPages({ authEnabled: () => managementAuth(opts.current().governance.auth).enabled, ...(opts.dir !== undefined && { dir: opts.dir }) }),
    tickets,
    attach: (server) => void attachLive(server, { events: opts.events, tickets, current: opts.current }),
  };
}
