// /api/session/login, /logout, /is-auth-enabled, /ws-ticket: session tokens for the dashboard-style
// flow (username and password once, then `Authorization: Bearer <token>`, or the HttpOnly cookie
// login sets, which the dashboard uses so no script ever holds the token). Tokens are signed
// (signed-token.ts), so every replica accepts them; a change of the credentials ends them all.
// Writes stay CSRF-safe with the cookie: SameSite=Strict, and /api refuses a cross-origin write and
// a body that is not JSON (guards.ts) before any handler runs.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { GatewayError } from '../unified/errors.ts';
import type { IncomingMessage } from 'node:http';
import { authenticate, bearerToken, checkAdmin, managementAuth, parseBasic, SESSION_COOKIE, sessionCookie, sessionTokenOf, type SessionStore } from './auth.ts';
import type { TicketStore } from './ws-tickets.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { invalidFields, objectBody } from './errors.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import type { AuditLog } from '../audit/log.ts';
import type { AuditEntry } from '../audit/store.ts';
import { actorOf } from './audit-trail.ts';

export const unauthorized = (message: string): GatewayError => new GatewayError(401, message, { type: 'authentication_error', code: 'unauthorized' });

const notEnabled = () => new GatewayError(403, 'authentication is not enabled (auth_config.is_enabled)', { type: 'permission_error', code: 'auth_not_enabled' });

/** Over TLS here, or behind a proxy that says the client used HTTPS: the cookie is then Secure. */
function secureRequest(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0].trim().toLowerCase();
  return first === 'https';
}

/** The Set-Cookie value carrying `token` for `maxAgeS` seconds (0 clears it). */
export function sessionCookieHeader(token: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function sessionRouter(service: ConfigService, sessions: SessionStore, throttle: LoginThrottle, tickets?: TicketStore, audit?: AuditLog): Router {
  const router = Router();
  const auth = () => managementAuth(service.current().governance.auth);
  // Logins, failed logins and logouts: who (the user name, the session's id), from where, never a secret.
  const record = (req: Request, action: 'login' | 'login_failed' | 'logout', outcome: AuditEntry['outcome'], status: number, actor: Partial<ReturnType<typeof actorOf>> = {}, details?: unknown) =>
    void audit?.record({ actor: { ...actorOf(req), ...actor }, action, resource: 'session', method: req.method, path: req.originalUrl.split('?')[0], status_code: status, outcome, ...(details !== undefined && { details }) });

  router
    .route('/login')
    .post((req: Request, res: Response) => {
      const a = auth();
      if (!a.enabled) throw notEnabled();
      const body = objectBody(req.body, 'login');
      const missing = (['username', 'password'] as const).filter((f) => typeof body[f] !== 'string');
      if (missing.length) throw invalidFields('login', missing.map((f) => ({ path: f, message: 'is required (a string)' })));
      const client = req.socket.remoteAddress ?? 'unknown';
      throttle.check(client);
      if (!checkAdmin(a, body.username as string, body.password as string)) {
        throttle.fail(client, body.username as string, 'session_login');
        record(req, 'login_failed', 'denied', 401, { type: 'anonymous', name: (body.username as string).slice(0, 128) }, { scheme: 'session_login' });
        throw unauthorized('invalid username or password');
      }
      throttle.succeed(client);
      const issued = sessions.issue();
      if (!issued) throw notEnabled(); // cannot happen: the credentials just matched, so there is a key
      const { token, expiresAt } = issued;
      const session = sessions.sessionId(token);
      record(req, 'login', 'success', 200, { type: 'session', name: body.username as string, ...(session !== undefined && { session_id: session }) }, { expires_at: new Date(expiresAt).toISOString() });
      res.setHeader('set-cookie', sessionCookieHeader(token, Math.floor(sessions.ttlMs / 1000), secureRequest(req)));
      reply(res, 200, { message: 'Login successful', token, expires_at: new Date(expiresAt).toISOString() });
    })
    .all(methodNotAllowed);

  router
    .route('/logout')
    .post(async (req: Request, res: Response) => {
      if (!auth().enabled) throw notEnabled();
      // The cookie goes whatever happens next: this browser is logged out either way.
      res.setHeader('set-cookie', sessionCookieHeader('', 0, secureRequest(req)));
      const token = bearerToken(req.headers.authorization);
      const cookie = sessionCookie(req.headers.cookie);
      // Named before the tokens are spent (a spent token has no session to name).
      const ended = [token, cookie].flatMap((t) => (t === undefined ? [] : (sessions.sessionId(t) ?? [])));
      if (token !== undefined) await sessions.revokeEverywhere(token);
      if (cookie !== undefined) await sessions.revokeEverywhere(cookie);
      record(req, 'logout', 'success', 200, {}, { sessions_ended: ended });
      reply(res, 200, { message: 'Logout successful' });
    })
    .all(methodNotAllowed);

  router
    .route('/is-auth-enabled')
    .get(async (req: Request, res: Response) => {
      const a = auth();
      const credential = a.enabled ? authenticate(req.headers, a, sessions) : undefined;
      // A session logged out on another replica is not valid here either.
      const session = credential === 'session' ? sessionTokenOf(req.headers, a) : undefined;
      const valid = credential !== undefined && (session === undefined || (await sessions.stillValid(session)));
      // Answering whether a password is right is a login attempt too (the throttle already let it through).
      const basic = a.enabled ? parseBasic(req.headers.authorization) : undefined;
      if (basic && !valid) {
        throttle.fail(req.socket.remoteAddress ?? 'unknown', basic.username, 'basic');
        record(req, 'login_failed', 'denied', 200, { type: 'anonymous', name: basic.username.slice(0, 128) }, { scheme: 'basic' });
      }
      reply(res, 200, { is_auth_enabled: a.enabled, has_valid_token: valid });
    })
    .all(methodNotAllowed);

  router
    .route('/ws-ticket')
    .post((_req: Request, res: Response) => {
      if (!auth().enabled) throw notEnabled();
      if (!tickets) throw new GatewayError(404, 'the dashboard is off on this gateway (--no-dashboard or SKYBRIDGE_DASHBOARD=off): there is no /ws to connect to', { type: 'not_found_error', code: 'dashboard_disabled' });
      const issued = tickets.issue();
      if (!issued) throw notEnabled(); // auth is on but holds no credential to sign with
      const { ticket, expiresAt } = issued;
      res.setHeader('cache-control', 'no-store');
      reply(res, 200, { ticket, expires_at: new Date(expiresAt).toISOString() });
    })
    .all(methodNotAllowed);

  return router;
}
