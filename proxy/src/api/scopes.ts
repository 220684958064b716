// What each /api route needs, and who is asking. Every router is mounted through `scoped()`, which
// declares the area (and, per path, anything else) its routes need; the guard it puts in front
// refuses a caller without the scope (403 naming it) before any handler runs. A route mounted
// without it has no declaration: test/unit/api-scopes.test.ts walks the route table and fails.
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../unified/errors.ts';
import type { ManagementArea, ManagementScope } from '../schema/management.ts';

/** Who is calling /api. `scopes` undefined: everything (the admin, sessions, config.json keys, loopback with auth off). */
export interface Principal {
  kind: 'local' | 'admin' | 'session' | 'api_key' | 'management_key';
  scopes?: readonly ManagementScope[];
  id?: string;
  name?: string;
  session?: string;
}

/**
 * What a route needs: a scope of an area (read or write), `admin` (every scope: managing the keys
 * themselves), `authenticated` (any caller that got in), or `public` (the login itself).
 */
export type Need = { area: ManagementArea; access: 'read' | 'write' } | { access: 'admin' | 'authenticated' | 'public' };

export interface ScopeDeclaration {
  /** The area of the router's routes: GET and HEAD read, other methods write. */
  area?: ManagementArea;
  /** For routers outside the areas (session, management keys, the dashboard summary). */
  need?: Need;
  /** `METHOD /path` (relative to the mount) of writes by method that only read (a rule test). */
  reads?: readonly string[];
  /** Paths (relative, exact or a prefix ending in `/`) that need something else than the router's. */
  paths?: Readonly<Record<string, Need>>;
  /** These routes write their own audit records: the generic one is skipped always (logins), or when they succeed (key issuance). */
  selfAudited?: 'all' | 'success';
}

/** Marks a router mounted through `scoped()`, with its declaration (read by the route walk test). */
export const SCOPE = Symbol('skybridge.api.scope');

const principals = new WeakMap<IncomingMessage, Principal>();
const needs = new WeakMap<IncomingMessage, Matched>();

/** The need a route's guard applied, and where its router is mounted (`/api/governance`). */
export interface Matched {
  need: Need;
  selfAudited: ScopeDeclaration['selfAudited'];
  base: string;
}

export const setPrincipal = (req: IncomingMessage, p: Principal): void => void principals.set(req, p);
export const principalOf = (req: IncomingMessage): Principal | undefined => principals.get(req);
/** The need the route's guard applied (undefined: the request matched no scoped router). */
export const needOf = (req: IncomingMessage): Matched | undefined => needs.get(req);

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The need of one request to a router with this declaration (`path` relative to its mount). */
export function needFor(decl: ScopeDeclaration, method: string, path: string): Need | undefined {
  const clean = path.replace(/\/+$/, '') || '/';
  for (const [p, need] of Object.entries(decl.paths ?? {})) {
    if (p.endsWith('/') ? clean.startsWith(p) || `${clean}/` === p : clean === p) return need;
  }
  if (decl.area) {
    const read = READ_METHODS.has(method) || (decl.reads ?? []).includes(`${method} ${clean}`);
    return { area: decl.area, access: read ? 'read' : 'write' };
  }
  return decl.need;
}

/** The scope that grants a need, as the 403 names it. */
export function scopeName(need: Need): string {
  return 'area' in need ? `${need.area}:${need.access}` : need.access;
}

/** Whether a caller's scopes grant a need (undefined scopes grant everything). */
export function grants(scopes: readonly ManagementScope[] | undefined, need: Need): boolean {
  if (scopes === undefined || scopes.includes('admin')) return true;
  if (need.access === 'public' || need.access === 'authenticated') return true;
  if (need.access === 'admin' || !('area' in need)) return false;
  if (need.access === 'read' && scopes.includes('read_only')) return true;
  if (scopes.includes(`${need.area}:write`)) return true;
  return need.access === 'read' && scopes.includes(`${need.area}:read`);
}

/** `router` behind a guard that enforces the declaration; the result carries it for the route walk. */
export function scoped(decl: ScopeDeclaration, router: Router): Router {
  const outer = Router({ caseSensitive: true });
  outer.use((req: Request, _res: Response, next: NextFunction) => {
    const need = needFor(decl, req.method, req.path);
    if (!need) throw new GatewayError(500, `no scope is declared for ${req.method} ${req.originalUrl.split('?')[0]}`, { code: 'undeclared_scope' });
    needs.set(req, { need, selfAudited: decl.selfAudited, base: req.baseUrl });
    const who = principalOf(req);
    if (need.access !== 'public' && !grants(who?.scopes, need)) {
      req.resume();
      const missing = scopeName(need);
      throw new GatewayError(403, `this management key (${who?.name ?? who?.id ?? 'unknown'}) lacks the scope '${missing}' that ${req.method} ${req.originalUrl.split('?')[0]} needs${'area' in need && need.access === 'read' ? ` (or '${need.area}:write', or 'read_only')` : ''}`, {
        type: 'permission_error',
        code: 'missing_scope',
        param: missing,
      });
    }
    next();
  });
  outer.use(router);
  Object.defineProperty(outer, SCOPE, { value: decl });
  return outer;
}
