// Who may use /api: Basic auth with the admin credentials, a management API key (Bearer or
// x-api-key), or a session token from POST /api/session/login. Every comparison is constant-time
// over SHA-256 digests, so neither a secret's length nor how much of a guess matches shows in timing.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthConfig } from '../config/governance-schema.ts';
import type { Snapshot } from '../config/snapshot.ts';
import { log } from '../log.ts';

export interface ManagementAuth {
  enabled: boolean;
  username?: string;
  password?: string;
  apiKeys: readonly string[];
}

/** From the live auth_config (env.VAR references already resolved). */
export function managementAuth(cfg: AuthConfig | undefined): ManagementAuth {
  return {
    enabled: cfg?.is_enabled === true,
    ...(cfg?.admin_username !== undefined && { username: cfg.admin_username }),
    ...(cfg?.admin_password !== undefined && { password: cfg.admin_password }),
    apiKeys: cfg?.api_keys ?? [],
  };
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Compares against every candidate (no early exit), so the position of a match does not show. */
export function matchesAny(presented: string, candidates: readonly string[]): boolean {
  const d = digest(presented);
  let hit = false;
  for (const c of candidates) hit = timingSafeEqual(d, digest(c)) || hit;
  return hit;
}

export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header || !/^bearer /i.test(header)) return undefined;
  const token = header.slice(7).trim();
  return token || undefined;
}

/** Both parts are always compared: a right username with a wrong password takes as long as neither. */
export function checkAdmin(auth: ManagementAuth, username: string, password: string): boolean {
  if (auth.username === undefined || auth.password === undefined) return false;
  const user = safeEqual(username, auth.username);
  const pass = safeEqual(password, auth.password);
  return user && pass;
}

export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** Session tokens of this process, kept as digests with their expiry. */
export class SessionStore {
  readonly ttlMs: number;
  #sessions = new Map<string, number>();

  constructor(ttlMs = SESSION_TTL_MS) {
    this.ttlMs = ttlMs;
  }

  issue(now = Date.now()): { token: string; expiresAt: number } {
    this.#purge(now);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + this.ttlMs;
    this.#sessions.set(digest(token).toString('base64'), expiresAt);
    return { token, expiresAt };
  }

  /** Looked up by digest: the map lookup reveals nothing about how close a guess came. */
  valid(token: string, now = Date.now()): boolean {
    const key = digest(token).toString('base64');
    const expires = this.#sessions.get(key);
    if (expires === undefined) return false;
    if (expires <= now) {
      this.#sessions.delete(key);
      return false;
    }
    return true;
  }

  revoke(token: string): boolean {
    return this.#sessions.delete(digest(token).toString('base64'));
  }

  /** Drops every session (the admin credentials changed). */
  clear(): void {
    this.#sessions.clear();
  }

  #purge(now: number): void {
    for (const [k, exp] of this.#sessions) if (exp <= now) this.#sessions.delete(k);
  }
}

export type Credential = 'basic' | 'api_key' | 'session';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The scheme that admitted the request, or undefined when none did. */
export function authenticate(headers: IncomingHttpHeaders, auth: ManagementAuth, sessions: SessionStore, now = Date.now()): Credential | undefined {
  const authorization = header(headers, 'authorization');
  const basic = parseBasic(authorization);
  if (basic) return checkAdmin(auth, basic.username, basic.password) ? 'basic' : undefined;
  const bearer = bearerToken(authorization);
  if (bearer !== undefined) {
    if (matchesAny(bearer, auth.apiKeys)) return 'api_key';
    return sessions.valid(bearer, now) ? 'session' : undefined;
  }
  const apiKey = header(headers, 'x-api-key');
  if (apiKey !== undefined && matchesAny(apiKey, auth.apiKeys)) return 'api_key';
  return undefined;
}

/** Said once at start: how /api is protected (or that nothing can use it). */
export function warnIfOpen(snap: Snapshot): void {
  const auth = managementAuth(snap.governance.auth);
  if (!auth.enabled) {
    log.warn('management API auth is off: /api answers only loopback clients; set governance.auth_config.is_enabled with admin credentials or api_keys to use it from other hosts');
  } else if ((auth.username === undefined || auth.password === undefined) && auth.apiKeys.length === 0) {
    log.warn('management API auth is enabled but no admin_username/admin_password or api_keys are set: nothing can use /api');
  }
}
