// /api/session/login, /logout, /is-auth-enabled: session tokens for the dashboard-style flow
// (username and password once, then `Authorization: Bearer <token>`). Tokens live in this
// process's memory and expire; a restart or a change of the admin credentials ends them all.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import { GatewayError } from '../unified/errors.ts';
import { authenticate, bearerToken, checkAdmin, managementAuth, parseBasic, type SessionStore } from './auth.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { invalidFields, objectBody } from './errors.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';

export const unauthorized = (message: string): GatewayError => new GatewayError(401, message, { type: 'authentication_error', code: 'unauthorized' });

const notEnabled = () => new GatewayError(403, 'authentication is not enabled (auth_config.is_enabled)', { type: 'permission_error', code: 'auth_not_enabled' });

export function sessionRouter(service: ConfigService, sessions: SessionStore, throttle: LoginThrottle): Router {
  const router = Router();
  const auth = () => managementAuth(service.current().governance.auth);

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
        throw unauthorized('invalid username or password');
      }
      throttle.succeed(client);
      const { token, expiresAt } = sessions.issue();
      reply(res, 200, { message: 'Login successful', token, expires_at: new Date(expiresAt).toISOString() });
    })
    .all(methodNotAllowed);

  router
    .route('/logout')
    .post((req: Request, res: Response) => {
      if (!auth().enabled) throw notEnabled();
      const token = bearerToken(req.headers.authorization);
      if (token !== undefined) sessions.revoke(token);
      reply(res, 200, { message: 'Logout successful' });
    })
    .all(methodNotAllowed);

  router
    .route('/is-auth-enabled')
    .get((req: Request, res: Response) => {
      const a = auth();
      const valid = a.enabled && authenticate(req.headers, a, sessions) !== undefined;
      // Answering whether a password is right is a login attempt too (the throttle already let it through).
      const basic = a.enabled ? parseBasic(req.headers.authorization) : undefined;
      if (basic && !valid) throttle.fail(req.socket.remoteAddress ?? 'unknown', basic.username, 'basic');
      reply(res, 200, { is_auth_enabled: a.enabled, has_valid_token: valid });
    })
    .all(methodNotAllowed);

  return router;
}
