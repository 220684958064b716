// The audit records /api writes itself: every write that reached a route (refused, failed or done),
// once its answer is sent, with who, from where, what and the request body, secrets masked.
// Logins, logouts and management key issuance record their own, more precise, entries.
import type { NextFunction, Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import type { AuditLog } from '../audit/log.ts';
import type { AuditActor, AuditEntry } from '../audit/store.ts';
import type { ConfigService } from '../config/service.ts';
import { maskTree } from './mask.ts';
import { needOf, principalOf } from './scopes.ts';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A last path segment that names what was done rather than what to: `POST /webhooks/x/rotate-secret` is `rotate`. */
const VERBS: Readonly<Record<string, string>> = { 'rotate-secret': 'rotate', redeliver: 'redeliver', test: 'test', reconnect: 'reconnect', draft: 'update' };
const BY_METHOD: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Who made a request, from where (the principal auth found, the socket's address, the user agent). */
export function actorOf(req: IncomingMessage): AuditActor {
  const p = principalOf(req);
  const ua = header(req, 'user-agent');
  const address = req.socket.remoteAddress;
  return {
    type: p?.kind ?? 'anonymous',
    ...(p?.id !== undefined && { id: p.id }),
    ...(p?.name !== undefined && { name: p.name }),
    ...(p?.session !== undefined && { session_id: p.session }),
    ...(address !== undefined && { remote_address: address }),
    ...(ua !== undefined && { user_agent: ua }),
  };
}

/** The outcome an answer's status means for the record. */
export const outcomeOf = (status: number): AuditEntry['outcome'] => (status < 400 ? 'success' : status === 401 || status === 403 ? 'denied' : 'failure');

/** Resource, its id and the action, from the route the request matched (or its path when none did). */
export function describe(req: Request, base: string): { resource: string; resource_id?: string; action: string } {
  const routePath = typeof (req.route as { path?: unknown } | undefined)?.path === 'string' ? (req.route as { path: string }).path : undefined;
  const pathname = req.originalUrl.split('?')[0];
  const rest = routePath ?? pathname.slice(base.length);
  const segments = rest.split('/').filter(Boolean);
  const literal = routePath ? segments.filter((s) => !s.startsWith(':') && !s.startsWith('*')) : segments;
  const last = literal.at(-1);
  const verb = last !== undefined && routePath && segments.at(-1) === last && segments.length > 1 ? VERBS[last] : undefined;
  if (verb) literal.pop();
  const params = routePath ? Object.values(req.params as Record<string, unknown>).map((v) => (Array.isArray(v) ? v.join('/') : String(v))) : [];
  const resource = [base.replace(/^\/api\/?/, ''), ...literal].filter(Boolean).join('/') || 'api';
  return { resource, ...(params.length > 0 && { resource_id: params.join('/') }), action: verb ?? BY_METHOD[req.method] ?? req.method.toLowerCase() };
}

/** Records every /api write once answered; reads (and writes that only read, as a rule test) are not. */
export function auditWrites(audit: AuditLog, service: ConfigService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READS.has(req.method)) return next();
    const before = service.current().hash;
    res.once('finish', () => {
      const matched = needOf(req);
      if (!matched || matched.selfAudited || ('area' in matched.need && matched.need.access === 'read')) return;
      const after = service.current().hash;
      const { resource, resource_id, action } = describe(req, matched.base);
      const body: unknown = req.body;
      void audit.record({
        actor: actorOf(req),
        action,
        resource,
        ...(resource_id !== undefined && { resource_id }),
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status_code: res.statusCode,
        outcome: outcomeOf(res.statusCode),
        details: {
          ...(body !== undefined && body !== null && (typeof body !== 'object' || Object.keys(body).length > 0) && { request: maskTree(body) }),
          ...(after !== before && { config_hash: { before, after } }),
        },
      });
    });
    next();
  };
}
