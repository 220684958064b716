// With --admin-port the management surface (/api, /metrics, the dashboard and its /ws socket) moves
// to a listener of its own, so whatever exposes the inference port (a Service, an ingress) exposes
// nothing else. Splitting the route table up front keeps the inference hot path as it was: the
// moved paths are ordinary table entries (or the misses the server already special-cases).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiHandler, Methods, Routes } from './server.ts';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';

/** Routes the admin listener serves besides /api and the dashboard. */
const ADMIN_ROUTES = ['/metrics', '/health', '/ready'] as const;
/** Routes that leave the inference listener (the dashboard's socket is an upgrade of /ws). */
const MOVED_ROUTES = ['/metrics', '/ws'] as const;

function movedError(method: string | undefined, path: string): GatewayError {
  return new GatewayError(404, `${method ?? 'GET'} ${path} is not served on this port: the management API (/api), /metrics and the dashboard are on the gateway's admin port (--admin-port)`, {
    type: 'not_found_error',
    code: 'admin_port_only',
  });
}

/** Answers a management path on the inference listener. */
export const servedOnAdminPort: ApiHandler = (req: IncomingMessage, res: ServerResponse) => {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  sendError(res, movedError(req.method, q < 0 ? raw : raw.slice(0, q)));
};

const moved: Methods = {
  GET: (ex) => void sendError(ex.res, movedError(ex.req.method, ex.path)),
  POST: (ex) => void sendError(ex.res, movedError(ex.req.method, ex.path)),
};

/** The inference listener's table (management routes answer 404 naming the admin port) and the admin listener's. */
export function splitRoutes(routes: Routes): { inference: Routes; admin: Routes } {
  const inference: Routes = { ...routes };
  for (const path of MOVED_ROUTES) inference[path] = moved;
  const admin: Routes = {};
  for (const path of ADMIN_ROUTES) {
    const methods = routes[path];
    if (methods) admin[path] = methods;
  }
  return { inference, admin };
}
