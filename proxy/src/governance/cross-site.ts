// A web page can make a visitor's browser send requests to any address, a developer's localhost
// gateway included, without asking (a "simple" cross-site request: a form post, or fetch with a
// text/plain body, needs no CORS preflight). Reading the answer is blocked, but the provider keys are
// spent all the same. So a request that spends keys without a virtual key is refused when a browser
// says it comes from another site (a foreign Origin, Sec-Fetch-Site: cross-site) or when its body is
// one only such a request would send (text/plain, a url-encoded form). SDK clients send no Origin and
// JSON; pages on the configured `client.allowed_origins`, and any caller with a virtual key (which a
// foreign page does not know), are not affected.
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../unified/errors.ts';

/** Bodies a browser sends cross-site without a preflight, which no gateway client needs (multipart is left to the Origin check: SDKs upload files with it). */
const SIMPLE_BODY_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function listed(allowedOrigins: readonly string[] | undefined, origin: string): boolean {
  if (!allowedOrigins) return false;
  return allowedOrigins.some((entry) => {
    if (entry === '*') return true;
    try {
      return new URL(entry).origin === origin;
    } catch {
      return false;
    }
  });
}

/** The request's own origin: its Origin names the gateway's host (a page the gateway served). */
function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host.toLowerCase() === host.trim().toLowerCase();
  } catch {
    return false; // `null` (sandboxed frames, file:) is never the gateway's own page
  }
}

const HINT = 'send a virtual key (x-bf-vk or Authorization: Bearer), or list the page\'s origin in client.allowed_origins';
const refuse = (param: string, why: string) =>
  new GatewayError(403, `cross-site request refused: ${why}; a web page must not spend this gateway's provider keys: ${HINT}`, { type: 'permission_error', code: 'cross_site_request', param });

/**
 * Refuses a request that writes (not GET/HEAD) without a virtual key when it comes from a page on
 * another site, or carries a body only a cross-site page would send: 403 naming the header.
 */
export function checkCrossSite(headers: IncomingHttpHeaders, method: string | undefined, allowedOrigins: readonly string[] | undefined): void {
  if (SAFE_METHODS.has(method ?? 'GET')) return;
  const origin = one(headers, 'origin');
  if (origin !== undefined && listed(allowedOrigins, origin)) return;
  if (origin !== undefined && !sameOrigin(origin, one(headers, 'host') ?? one(headers, ':authority'))) throw refuse('origin', `it comes from a page on ${origin} (Origin) and carries no virtual key`);
  if (one(headers, 'sec-fetch-site') === 'cross-site') throw refuse('sec-fetch-site', 'the browser marks it Sec-Fetch-Site: cross-site and it carries no virtual key');
  const raw = one(headers, 'content-type');
  // What SDKs send, checked without the split, trim and lower-casing (strings and an array per request).
  if (raw === undefined || raw === 'application/json') return;
  const type = raw.split(';')[0].trim().toLowerCase();
  if (SIMPLE_BODY_TYPES.has(type)) {
    throw refuse('content-type', `its body is ${type}, what a page posts cross-site without asking, and it carries no virtual key (send JSON as application/json)`);
  }
}
