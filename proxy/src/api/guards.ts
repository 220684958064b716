// What /api checks before authentication: who may reach it without credentials (loopback only),
// whether a browser page on another site is behind the request (Origin), and that a write is JSON
// (a browser sends text/plain and form bodies cross-site without asking; JSON needs a preflight).
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../unified/errors.ts';
import { corsPolicy, originAllowed } from '../http/cors.ts';

export const AUTH_HINT = 'set governance.auth_config.is_enabled: true with admin_username/admin_password or api_keys to use /api from other hosts';

/** 127.0.0.0/8, ::1 and their IPv4-mapped form. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || (isIP(a) === 4 && a.startsWith('127.'));
}

/** The host part of a Host header (`[::1]:8080` → `::1`, `localhost:8080` → `localhost`). */
export function hostOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') < 0 ? undefined : h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return (colon < 0 ? h : h.slice(0, colon)).replace(/\.$/, '');
}

/**
 * A Host a local client uses: an IP literal, localhost, or this machine's name. A browser tricked
 * by DNS rebinding sends the attacker's host name instead, so an open /api refuses it.
 */
export function isLocalHostName(hostHeader: string | undefined): boolean {
  if (!hostHeader) return true; // HTTP/1.0 clients send none; the loopback check already passed
  const h = hostOf(hostHeader);
  return isIP(h) !== 0 || h === 'localhost' || h.endsWith('.localhost') || h === hostname().toLowerCase();
}

/** Without management auth: loopback clients addressing the gateway by a local name, else 401. */
export function checkLocalOnly(req: IncomingMessage): void {
  if (!isLoopback(req.socket.remoteAddress)) {
    throw new GatewayError(401, `the management API answers only local clients while authentication is off: ${AUTH_HINT}`, { type: 'authentication_error', code: 'auth_required_for_remote' });
  }
  if (!isLocalHostName(req.headers.host)) {
    throw new GatewayError(401, `the management API answers only requests addressed to localhost or an IP address while authentication is off (Host '${hostOf(req.headers.host ?? '')}'): ${AUTH_HINT}`, { type: 'authentication_error', code: 'auth_required_for_remote' });
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A page of the gateway's own host (the dashboard) is always answered. Otherwise, with
 * `client.allowed_origins`, an Origin not in the list is refused on every /api request; without
 * it, a write from a page on another host (Origin's host differs from Host) is refused.
 */
export function checkOrigin(req: IncomingMessage, allowedOrigins: readonly string[] | undefined): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    originHost = undefined; // `null` (sandboxed pages, file:) is never the same site
  }
  // Listing other origins must not lock the dashboard out of its own gateway.
  if (originHost !== undefined && originHost === (req.headers.host ?? '').trim().toLowerCase()) return;
  const policy = corsPolicy(allowedOrigins);
  if (policy) {
    if (!originAllowed(policy, origin)) throw new GatewayError(403, `origin ${origin} is not in client.allowed_origins`, { type: 'permission_error', code: 'origin_not_allowed' });
    return;
  }
  if (SAFE_METHODS.has(req.method ?? 'GET')) return;
  throw new GatewayError(403, `cross-origin write from ${origin} refused: list the origin in client.allowed_origins to allow it`, { type: 'permission_error', code: 'origin_not_allowed' });
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
}

/** A body on /api is JSON and says so: `content-type: application/json` (parameters allowed), else 415. */
export function checkJsonBody(req: IncomingMessage): void {
  if (!hasBody(req)) return;
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/json') return;
  throw new GatewayError(415, `the request body must be JSON sent with content-type: application/json (got ${type ? `'${type}'` : 'no content-type'})`, {
    type: 'invalid_request_error',
    code: 'unsupported_media_type',
    param: null,
  });
}
