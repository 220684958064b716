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

/**
 * Resource, its ids and the action, from the path below the router's mount: the segments that are
 * the matched route's parameters are the ids, the others name the resource (`/api/providers/openai/keys/k1`
 * is `providers/keys`, ids `openai/k1`); a last segment that is a verb is the action.
 */
export function describe(req: Request, base: string): { resource: string; resource_id?: string; action: string } {
  const pathname = req.originalUrl.split('?')[0];
  const segments = pathname
    .slice(base.length)
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const params = new Set(Object.values((req.params ?? {}) as Record<string, unknown>).flatMap((v) => (Array.isArray(v) ? v.map(String) : [String(v)])));
  const ids = segments.filter((s) => params.has(s));
  const literal = segments.filter((s) => !params.has(s));
  const last = segments.at(-1);
  const verb = last !== undefined && !params.has(last) && ids.length > 0 ? VERBS[last] : undefined;
  if (verb) literal.pop();
  const resource = [base.replace(/^\/api\/?/, ''), ...literal].filter(Boolean).join('/') || 'api';
  return { resource, ...(ids.length > 0 && { resource_id: ids.join('/') }), action: verb ?? BY_METHOD[req.method] ?? req.method.toLowerCase() };
}

/** Records every /api write once answered; reads (and writes that only read, as a rule test) are not. */
export function auditWrites(audit: AuditLog, service: ConfigService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READS.has(req.method)) return next();
    const before = service.current().hash;
    res.once('finish', () => {
      const matched = needOf(req);
      if (!matched || ('area' in matched.need && matched.need.access === 'read')) return;
      // Routes that record their own entries: always (logins), or when they succeed (key issuance).
      if (matched.selfAudited === 'all' || (matched.selfAudited === 'success' && res.statusCode < 400)) return;
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
