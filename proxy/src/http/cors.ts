// CORS for browser clients, from `client.allowed_origins` (exact origins, or `*` for any). An allowed
// origin gets `access-control-allow-origin` on every answer and a 204 to its preflight; any other
// origin gets no CORS headers (its preflight a 403), so the browser keeps the answer from the page.
// Credentials are never allowed cross-origin: keys travel in headers the page sets itself, and a
// browser's ambient credentials (cookies, cached Basic auth) must not ride along.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError } from './respond.ts';
import { GatewayError } from '../unified/errors.ts';

export const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
export const CORS_MAX_AGE_SECONDS = 600;
/** Headers a preflight may ask for when it does not list any (the ones clients of this gateway send). */
const DEFAULT_ALLOWED_HEADERS = 'authorization, content-type, x-api-key, x-bf-vk, anthropic-version, anthropic-beta, x-goog-api-key';
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

export interface CorsPolicy {
  any: boolean;
  origins: ReadonlySet<string>;
}

const policies = new WeakMap<readonly string[], CorsPolicy>();

/** The policy of a configured list (computed once per list: config snapshots are immutable). */
export function corsPolicy(allowed: readonly string[] | undefined): CorsPolicy | undefined {
  if (!allowed || allowed.length === 0) return undefined;
  let p = policies.get(allowed);
  if (!p) {
    const origins = new Set<string>();
    for (const entry of allowed) {
      if (entry === '*') continue;
      try {
        origins.add(new URL(entry).origin);
      } catch {
        // refused by config validation; never matches
      }
    }
    p = { any: allowed.includes('*'), origins };
    policies.set(allowed, p);
  }
  return p;
}

export function originAllowed(policy: CorsPolicy | undefined, origin: string): boolean {
  if (!policy) return false;
  return policy.any || policy.origins.has(origin);
}

const handled = new WeakSet<ServerResponse>();

function addVary(res: ServerResponse, field: string): void {
  const current = res.getHeader('vary');
  const list = current === undefined ? [] : String(current).split(',').map((s) => s.trim().toLowerCase());
  if (!list.includes(field) && !list.includes('*')) res.setHeader('vary', current === undefined ? field : `${String(current)}, ${field}`);
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * Adds the CORS headers an allowed origin gets and answers preflights. Returns true when the
 * request has been answered (a preflight). Idempotent per response.
 */
export function handleCors(req: IncomingMessage, res: ServerResponse, allowedOrigins: readonly string[] | undefined): boolean {
  const origin = header(req, 'origin');
  if (origin === undefined || handled.has(res)) return false;
  handled.add(res);
  const policy = corsPolicy(allowedOrigins);
  const preflight = req.method === 'OPTIONS' && header(req, 'access-control-request-method') !== undefined;
  // The answer depends on Origin whenever a policy exists, allowed or not: caches must keep them apart.
  if (policy) addVary(res, 'origin');
  if (!originAllowed(policy, origin)) {
    if (!preflight) return false;
    req.resume();
    const why = policy ? `origin ${origin} is not in client.allowed_origins` : 'cross-origin requests are not allowed: list the origin in client.allowed_origins';
    sendError(res, new GatewayError(403, why, { type: 'permission_error', code: 'origin_not_allowed' }));
    return true;
  }
  res.setHeader('access-control-allow-origin', policy!.any ? '*' : origin);
  if (!preflight) {
    res.setHeader('access-control-expose-headers', '*');
    return false;
  }
  req.resume();
  const asked = header(req, 'access-control-request-headers');
  res.setHeader('access-control-allow-methods', CORS_METHODS);
  res.setHeader('access-control-allow-headers', asked !== undefined && HEADER_LIST.test(asked.trim()) ? asked.trim() : DEFAULT_ALLOWED_HEADERS);
  res.setHeader('access-control-max-age', String(CORS_MAX_AGE_SECONDS));
  addVary(res, 'access-control-request-method');
  addVary(res, 'access-control-request-headers');
  res.statusCode = 204;
  res.end();
  return true;
}
