// The management API (/api/*) as an express app. Only /api requests reach it (http/server.ts hands
// them over before its own route table), so the inference hot path stays on bare node:http.
import { createHash } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigService } from '../config/service.ts';
import type { Snapshot } from '../config/snapshot.ts';
import { sendError, toGatewayError } from '../http/respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { authenticate, managementAuth, SessionStore } from './auth.ts';
import { sessionRouter, unauthorized } from './session.ts';
import { routingRulesRouter } from './routing-rules.ts';
import { governanceRouter } from './governance.ts';
import { allKeysRouter, providersRouter } from './providers.ts';
import { pluginsRouter } from './plugins.ts';
import { configRouter } from './config.ts';
import { refuseManagedWrites } from './managed.ts';

/** Paths that answer without credentials: one says whether auth is on, the other is how to get in. */
const OPEN_PATHS = new Set(['/api/session/is-auth-enabled', '/api/session/login']);

const BODY_LIMIT = '10mb';
export const WWW_AUTHENTICATE = 'Basic realm="skybridge"';

export function createApiHandler(service: ConfigService): (req: IncomingMessage, res: ServerResponse) => void {
  const sessions = new SessionStore();
  warnIfOpen(service.current());

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');

  app.use(requireAuth(service, sessions));
  // Kubernetes owns the document (--kube-namespace): writes answer 409 naming what to edit instead.
  app.use(refuseManagedWrites(service));
  // Every body is JSON, whatever content-type the client sent.
  app.use(express.json({ limit: BODY_LIMIT, type: () => true }));

  const api = express.Router({ caseSensitive: true });
  api.use('/session', sessionRouter(service, sessions));
  const rules = routingRulesRouter(service);
  api.use('/routing/rules', rules);
  // Deprecated location, identical behaviour.
  api.use('/governance/routing-rules', rules);
  api.use('/governance', governanceRouter(service));
  api.use('/providers', providersRouter(service));
  api.use('/keys', allKeysRouter(service));
  api.use('/plugins', pluginsRouter(service));
  api.use('/', configRouter(service));
  app.use('/api', api);

  app.use((req: Request) => {
    throw new GatewayError(404, `no route for ${req.method} ${req.path}`, { type: 'not_found_error' });
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = fromExpressError(err);
    if (e.status >= 500) log.error('management API error', { method: req.method, path: req.path, error: (err as Error)?.stack ?? String(err) });
    if (e.status === 401) res.setHeader('www-authenticate', WWW_AUTHENTICATE);
    sendError(res, e);
  });

  return (req, res) => {
    // express rebuilds req/res on node:http's prototypes; HTTP/2 compatibility objects (h2c) would
    // crash it, and no management client needs HTTP/2.
    if (req.httpVersionMajor >= 2) {
      req.resume();
      sendError(res, new GatewayError(505, 'the management API (/api) is served over HTTP/1.1 only', { type: 'unsupported_protocol' }));
      return;
    }
    app(req as Request, res as Response);
  };
}

/** Nothing under /api answers without credentials once auth_config.is_enabled is true. */
function requireAuth(service: ConfigService, sessions: SessionStore) {
  let seen: Snapshot | undefined;
  let credentials = '';
  return (req: Request, res: Response, next: NextFunction): void => {
    const snap = service.current();
    const auth = managementAuth(snap.governance.auth);
    if (snap !== seen) {
      // New admin credentials end every session opened with the old ones.
      const fingerprint = createHash('sha256').update(`${auth.username ?? ''}\u0000${auth.password ?? ''}`).digest('hex');
      if (seen && fingerprint !== credentials) sessions.clear();
      seen = snap;
      credentials = fingerprint;
    }
    if (!auth.enabled || OPEN_PATHS.has(req.path.replace(/\/+$/, ''))) return next();
    if (authenticate(req.headers, auth, sessions) !== undefined) return next();
    req.resume();
    throw unauthorized('authentication required: Basic auth with the admin credentials, or a management API key or session token as Bearer (or x-api-key)');
  };
}

function warnIfOpen(snap: Snapshot): void {
  const auth = managementAuth(snap.governance.auth);
  if (!auth.enabled) {
    log.warn('the management API (/api) is open to anyone who can reach this port: set governance.auth_config.is_enabled with admin credentials or api_keys');
  } else if ((auth.username === undefined || auth.password === undefined) && auth.apiKeys.length === 0) {
    log.warn('management API auth is enabled but no admin_username/admin_password or api_keys are set: nothing can use /api');
  }
}

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
}

/** body-parser's errors (malformed JSON, too large) as the gateway error object. */
function fromExpressError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = (err ?? {}) as HttpishError;
  const status = e.status ?? e.statusCode;
  if (e.type === 'entity.parse.failed') return new GatewayError(400, `the request body is not valid JSON: ${e.message ?? ''}`, { param: null, code: 'invalid_json' });
  if (e.type === 'entity.too.large') return new GatewayError(413, `the request body is larger than ${BODY_LIMIT}`);
  // Other client errors of express and body-parser (an undecodable path, an unsupported charset).
  if (typeof status === 'number' && status >= 400 && status < 500) return new GatewayError(status, e.message ?? 'bad request');
  return toGatewayError(err);
}
