// Who may use /api: Basic auth with the admin credentials, a management API key (Bearer or
// x-api-key), or a session token from POST /api/session/login (as Bearer, or the dashboard's cookie). Every comparison is constant-time
// over SHA-256 digests, so neither a secret's length nor how much of a guess matches shows in timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { SignedTokens, type KeySource } from './signed-token.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthConfig } from '../schema/governance.ts';
import type { Snapshot } from '../config/snapshot.ts';
import { log } from '../log.ts';
import { GatewayError } from '../unified/errors.ts';
import type { SessionRevocations } from '../state/session-revocations.ts';
import type { Principal } from './scopes.ts';

function sessionsUnavailable(what: string, cause: unknown): GatewayError {
  return new GatewayError(503, `${what}: Redis does not answer (${cause instanceof Error ? cause.message : String(cause)}); retry shortly`, {
    type: 'api_error',
    code: 'session_store_unavailable',
    retryAfter: 1,
  });
}

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

/**
 * Dashboard sessions: signed tokens (signed-token.ts), so any replica accepts a session another
 * opened; a logout spends the token here and, with Redis, writes it to the revocation list every
 * replica checks on use (`stillValid`), so it ends everywhere (the cookie is cleared too).
 */
export class SessionStore {
  readonly ttlMs: number;
  readonly #tokens: SignedTokens;
  readonly #revocations: SessionRevocations | undefined;

  /** Without a key source no session is ever valid (a route that takes no sessions). */
  constructor(key: KeySource = () => undefined, ttlMs = SESSION_TTL_MS, revocations?: SessionRevocations) {
    this.ttlMs = ttlMs;
    this.#tokens = new SignedTokens('session', ttlMs, key);
    this.#revocations = revocations;
  }

  /**
   * Ends a session on every replica: spent here at once, then written to the shared list. Rejects
   * (a 503 naming Redis) when the shared list cannot be written: the session then still works on
   * the other replicas until it expires, and the caller must hear that.
   */
  async revokeEverywhere(token: string, now = Date.now()): Promise<void> {
    const opened = this.#tokens.open(token, now);
    if (!opened) return;
    this.#tokens.spend(token, now);
    if (!this.#revocations) return;
    try {
      await this.#revocations.revoke(opened.nonce, opened.expiresAt);
    } catch (err) {
      throw sessionsUnavailable('the session was ended on this replica but could not be revoked on the others', err);
    }
  }

  /** A locally valid token not revoked on another replica (the shared list is asked; 503 when it cannot be). */
  async stillValid(token: string, now = Date.now()): Promise<boolean> {
    const opened = this.#tokens.open(token, now);
    if (!opened) return false;
    if (!this.#revocations) return true;
    let revoked: boolean;
    try {
      revoked = await this.#revocations.isRevoked(opened.nonce);
    } catch (err) {
      throw sessionsUnavailable('session tokens cannot be checked against logouts on other replicas right now; Basic auth and management API keys still work', err);
    }
    if (revoked) this.#tokens.spend(token, now);
    return !revoked;
  }

  /** Undefined when the configuration has no admin credentials to sign with. */
  issue(now = Date.now()): { token: string; expiresAt: number } | undefined {
    return this.#tokens.issue(now);
  }

  valid(token: string, now = Date.now()): boolean {
    return this.#tokens.valid(token, now);
  }

  revoke(token: string, now = Date.now()): boolean {
    return this.#tokens.spend(token, now);
  }

  /** A valid token's id in audit records: a digest of its nonce (the token itself never leaves). */
  sessionId(token: string, now = Date.now()): string | undefined {
    const opened = this.#tokens.open(token, now);
    return opened && createHash('sha256').update(`session:${opened.nonce}`).digest('hex').slice(0, 16);
  }
}

export type Credential = 'basic' | 'api_key' | 'session';

/** The dashboard's session cookie (POST /api/session/login sets it: HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'skybridge_session';

/** The session cookie's value from a Cookie header, or undefined. */
export function sessionCookie(cookieHeader: string | string[] | undefined): string | undefined {
  const value = Array.isArray(cookieHeader) ? cookieHeader.join('; ') : cookieHeader;
  if (!value) return undefined;
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const token = part.slice(eq + 1).trim();
    if (token) return token;
  }
  return undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The session token a request presents (Bearer that is not an API key, else the cookie), if any. */
export function sessionTokenOf(headers: IncomingHttpHeaders, auth: ManagementAuth): string | undefined {
  const authorization = header(headers, 'authorization');
  if (parseBasic(authorization)) return undefined;
  const bearer = bearerToken(authorization);
  if (bearer !== undefined) return matchesAny(bearer, auth.apiKeys) ? undefined : bearer;
  if (header(headers, 'x-api-key') !== undefined) return undefined;
  return sessionCookie(headers.cookie);
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
  if (apiKey !== undefined) return matchesAny(apiKey, auth.apiKeys) ? 'api_key' : undefined;
  // Last: a credential the client named explicitly wins over the browser's cookie.
  const cookie = sessionCookie(headers.cookie);
  if (cookie !== undefined && sessions.valid(cookie, now)) return 'session';
  return undefined;
}

/** A config.json API key's id in audit records: a digest of the key, never the key. */
export const configKeyId = (key: string): string => `config-key-${createHash('sha256').update(`config-key:${key}`).digest('hex').slice(0, 12)}`;

/** The secret an API key credential presents (Bearer or x-api-key), if any. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  return bearerToken(header(headers, 'authorization')) ?? header(headers, 'x-api-key');
}

/** Who a credential `authenticate` accepted is, for scope checks and audit records (all scopes). */
export function principalFor(credential: Credential, headers: IncomingHttpHeaders, auth: ManagementAuth, sessions: SessionStore): Principal {
  if (credential === 'basic') return { kind: 'admin', name: parseBasic(header(headers, 'authorization'))?.username ?? 'admin' };
  if (credential === 'api_key') {
    const key = presentedKey(headers);
    return { kind: 'api_key', ...(key !== undefined && { id: configKeyId(key) }), name: 'config.json api key' };
  }
  const token = sessionTokenOf(headers, auth);
  const session = token === undefined ? undefined : sessions.sessionId(token);
  return { kind: 'session', ...(auth.username !== undefined && { name: auth.username }), ...(session !== undefined && { session }) };
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
