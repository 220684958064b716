// The management API (/api/*) as an express app. Only /api requests reach it (http/server.ts hands
// them over before its own route table), so the inference hot path stays on bare node:http.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigService } from '../config/service.ts';
import { sendError, toGatewayError } from '../http/respond.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { authenticate, bearerToken, managementAuth, parseBasic, presentedKey, principalFor, SessionStore, sessionTokenOf } from './auth.ts';
import { credentialKey } from './credential-key.ts';
import { handleCors } from '../http/cors.ts';
import { unsafeJson } from '../schema/names.ts';
import { checkJsonBody, checkLocalOnly, checkOrigin } from './guards.ts';
import { LoginThrottle } from './login-throttle.ts';
import { sessionRouter, unauthorized } from './session.ts';
import { routingRulesRouter } from './routing-rules.ts';
import { governanceRouter } from './governance.ts';
import { allKeysRouter, providersRouter } from './providers.ts';
import { pluginsRouter } from './plugins.ts';
import { StoreTimeoutError } from '../store-guard.ts';
import { configRouter } from './config.ts';
import { realtimeRouter } from './realtime.ts';
import { refuseManagedWrites } from './managed.ts';
import { logsRouter, type LogsApiSource } from './logs.ts';
import { cacheProblem, cacheRouter } from './cache.ts';
import type { CacheRuntime } from '../cache/runtime.ts';
import { mcpLogsRouter, mcpReconnect, mcpRouter } from './mcp.ts';
import type { McpManager } from '../mcp/manager.ts';
import { webhooksRouter } from './webhooks.ts';
import type { Dispatcher } from '../webhooks/dispatcher.ts';
import { usageRouter } from './usage.ts';
import type { CounterStore } from '../governance/counters/store.ts';
import type { SessionRevocations } from '../state/session-revocations.ts';
import { dashboardRouter, type DashboardApi } from './dashboard.ts';
import { skillsRouter } from './skills.ts';
import type { SkillStore } from '../skills/store.ts';
import type { AuditLog } from '../audit/log.ts';
import type { ManagementKeys } from '../audit/keys.ts';
import { scoped, setPrincipal } from './scopes.ts';
import { actorOf, auditWrites } from './audit-trail.ts';
import { auditLogsRouter } from './audit-logs.ts';
import { managementKeysRouter } from './management-keys.ts';
import { playgroundRouter } from './playground.ts';

/** Paths that answer without credentials: one says whether auth is on, the other is how to get in. */
const OPEN_PATHS = new Set(['/api/session/is-auth-enabled', '/api/session/login']);

const BODY_LIMIT = '10mb';
export const WWW_AUTHENTICATE = 'Basic realm="skybridge"';

/** Why request logging does not run here, or does not reach its store right now (the logging plugin's status). */
function loggingProblem(logs: LogsApiSource | undefined): string | undefined {
  if (!logs) return 'no request-log store is open on this gateway (see its start-up log): nothing is logged';
  const silent = logs.store.unavailable?.();
  return silent && `${silent}: records wait in the writer's queue and are dropped when it is full`;
}

/** The audit log and the management keys (both in the logs store: absent without one). */
export interface ApiAccounting {
  audit?: AuditLog;
  keys?: ManagementKeys;
}

export function createApiHandler(service: ConfigService, logs?: LogsApiSource, webhooks?: Dispatcher, mcp?: McpManager, cache?: CacheRuntime, counters?: CounterStore, dashboard?: DashboardApi, throttle = new LoginThrottle(), revocations?: SessionRevocations, skills?: SkillStore, accounting: ApiAccounting = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const app = createApiApp(service, logs, webhooks, mcp, cache, counters, dashboard, throttle, revocations, skills, accounting);
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

/** The express app: its route table is what test/unit/api-scopes.test.ts walks. */
export function createApiApp(service: ConfigService, logs?: LogsApiSource, webhooks?: Dispatcher, mcp?: McpManager, cache?: CacheRuntime, counters?: CounterStore, dashboard?: DashboardApi, throttle = new LoginThrottle(), revocations?: SessionRevocations, skills?: SkillStore, accounting: ApiAccounting = {}): express.Express {
  const { audit, keys } = accounting;
  // Signed under a key from the shared configuration: a session works on every replica; a logout
  // is written to the shared revocation list (Redis) every replica checks.
  const sessions = new SessionStore(() => credentialKey(service.current()), undefined, revocations);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next: NextFunction) => {
    // The HTTP front answers CORS first; this covers the app when mounted on its own.
    if (handleCors(req, res, service.current().config.client?.allowed_origins)) return;
    guarded(req, () => checkOrigin(req, service.current().config.client?.allowed_origins));
    next();
  });
  app.use(requireAuth(service, sessions, throttle, keys, audit));
  // Every write that reaches a route is recorded once answered (api/audit-trail.ts).
  if (audit) app.use(auditWrites(audit, service));
  // Reconnecting changes no configuration: allowed also when Kubernetes owns the document.
  if (mcp) app.use('/api/mcp/client', scoped({ area: 'mcp' }, express.Router({ caseSensitive: true }).post('/:id/reconnect', mcpReconnect(mcp, service))));
  // Kubernetes owns the document (--kube-namespace): writes answer 409 naming what to edit instead.
  app.use(refuseManagedWrites(service));
  // Bodies are JSON and say so (text/plain and forms are what a browser sends cross-site unasked).
  app.use((req: Request, _res: Response, next: NextFunction) => {
    guarded(req, () => checkJsonBody(req));
    next();
  });
  app.use(express.json({ limit: BODY_LIMIT, type: () => true }));
  // No `__proto__` key and no absurd nesting reach a handler (a copy by assignment would pollute).
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const problem = unsafeJson(req.body);
    if (problem) throw new GatewayError(400, `invalid request body: ${problem.path}: ${problem.message}`, { param: problem.path, code: 'invalid_field' });
    next();
  });

  // Every router is mounted through scoped(): the scope its routes need is declared here, once.
  const api = express.Router({ caseSensitive: true });
  api.use(
    '/session',
    scoped(
      // A WebSocket ticket opens the dashboard's live events, request logs among them.
      { need: { access: 'authenticated' }, paths: { '/login': { access: 'public' }, '/is-auth-enabled': { access: 'public' }, '/ws-ticket': { area: 'logs', access: 'read' } }, selfAudited: 'all' },
      sessionRouter(service, sessions, throttle, dashboard?.tickets, audit),
    ),
  );
  api.use('/dashboard', scoped({ need: { access: 'authenticated' } }, dashboardRouter(service, dashboard)));
  // Testing or validating a rule reads the configuration; it changes nothing.
  const rules = scoped({ area: 'routing', reads: ['POST /test', 'POST /validate'] }, routingRulesRouter(service));
  api.use('/routing/rules', rules);
  // Deprecated location, identical behaviour.
  api.use('/governance/routing-rules', rules);
  if (counters) api.use('/governance/usage', scoped({ area: 'governance' }, usageRouter(service, counters)));
  api.use('/governance', scoped({ area: 'governance' }, governanceRouter(service)));
  // Running a request as a virtual key spends what the key may spend: governance's write scope.
  api.use('/playground', scoped({ area: 'governance' }, playgroundRouter(service, dashboard?.playground)));
  api.use('/providers', scoped({ area: 'providers' }, providersRouter(service)));
  api.use('/keys', scoped({ area: 'providers' }, allKeysRouter(service)));
  // Logging is built, but runs only where a request-log store could be opened.
  api.use('/plugins', scoped({ area: 'config' }, pluginsRouter(service, (name) => (name === 'logging' ? loggingProblem(logs) : name === 'semantic_cache' ? cacheProblem(service, cache) : undefined))));
  api.use('/cache', scoped({ area: 'cache' }, cacheRouter(service, cache)));
  api.use('/logs', scoped({ area: 'logs' }, logsRouter(logs)));
  // Realtime sessions end up in the request logs: who may read those may see them live.
  api.use('/realtime', scoped({ area: 'logs' }, realtimeRouter(dashboard?.realtime)));
  if (mcp) {
    api.use('/mcp', scoped({ area: 'mcp' }, mcpRouter(service, mcp)));
    api.use('/mcp-logs', scoped({ area: 'mcp' }, mcpLogsRouter(mcp)));
  }
  api.use('/webhooks', scoped({ area: 'webhooks' }, webhooksRouter(service, webhooks)));
  // The skills repository lives in the logs store: without one its routes answer 503 naming it.
  api.use('/skills', scoped({ area: 'skills' }, skillsRouter(service, skills)));
  // The audit log and the management keys live there too.
  api.use('/audit-logs', scoped({ area: 'audit' }, auditLogsRouter(audit)));
  api.use('/management-keys', scoped({ need: { access: 'admin' }, selfAudited: 'success' }, managementKeysRouter(keys, audit)));
  api.use('/', scoped({ area: 'config', paths: { '/version': { access: 'authenticated' }, '/models': { area: 'providers', access: 'read' } } }, configRouter(service)));
  app.use('/api', api);

  app.use((req: Request) => {
    throw new GatewayError(404, `no route for ${req.method} ${req.path}`, { type: 'not_found_error' });
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = fromExpressError(err);
    if (e.status >= 500) log.error('management API error', { method: req.method, path: req.path, error: (err as Error)?.stack ?? String(err) });
    // Not for the dashboard's scripts (X-Requested-With): a Basic challenge would pop the browser's own
    // password dialog over the dashboard's login form.
    if (e.status === 401 && req.headers['x-requested-with'] !== 'XMLHttpRequest') res.setHeader('www-authenticate', WWW_AUTHENTICATE);
    sendError(res, e);
  });

  return app;
}

/** Runs a check; when it refuses, the unread body is drained so the connection stays usable. */
function guarded(req: Request, check: () => void): void {
  try {
    check();
  } catch (err) {
    req.resume();
    throw err;
  }
}

/**
 * Nothing under /api answers without credentials once auth_config.is_enabled is true; without it,
 * only local clients are answered. Failed credentials (Basic, API keys, session tokens as Bearer) are
 * throttled per client address.
 */
function requireAuth(service: ConfigService, sessions: SessionStore, throttle: LoginThrottle, keys: ManagementKeys | undefined, audit: AuditLog | undefined) {
  const failed = (req: Request, client: string, username: string, scheme: 'basic' | 'api_key'): void => {
    throttle.fail(client, username, scheme);
    // A wrong password or key is a failed login: recorded with the name tried, never the secret.
    void audit?.record({ actor: { ...actorOf(req), type: 'anonymous', ...(username && { name: username }) }, action: 'login_failed', resource: 'session', method: req.method, path: req.path, status_code: 401, outcome: 'denied', details: { scheme } });
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const auth = managementAuth(service.current().governance.auth);
    if (!auth.enabled) {
      guarded(req, () => checkLocalOnly(req));
      setPrincipal(req, { kind: 'local', name: 'loopback (auth off)' });
      return next();
    }
    const client = req.socket.remoteAddress ?? 'unknown';
    const basic = parseBasic(req.headers.authorization);
    // Secrets a client types or scripts are guesses to count; the dashboard's session cookie is not
    // (an expired one would lock its user out, and a page elsewhere cannot set it).
    const presented = basic !== undefined || bearerToken(req.headers.authorization) !== undefined || req.headers['x-api-key'] !== undefined;
    if (presented) guarded(req, () => throttle.check(client));
    const open = OPEN_PATHS.has(req.path.replace(/\/+$/, ''));
    const credential = authenticate(req.headers, auth, sessions);
    if (credential !== undefined) setPrincipal(req, principalFor(credential, req.headers, auth, sessions));
    if (open) return next();
    if (credential === 'session') {
      // Signed tokens are valid on every replica; a logout on another one is in the shared list.
      const token = sessionTokenOf(req.headers, auth);
      return void (token === undefined ? Promise.resolve(true) : sessions.stillValid(token)).then((ok) => {
        if (ok) return next();
        req.resume();
        next(unauthorized('this session was logged out: log in again'));
      }, next);
    }
    if (credential !== undefined) {
      // A management credential that works ends the address's count (an admin is already in).
      if (presented) throttle.succeed(client);
      return next();
    }
    const key = basic === undefined ? presentedKey(req.headers) : undefined;
    const refuse = (): void => {
      if (presented) failed(req, client, basic?.username ?? '', basic ? 'basic' : 'api_key');
      req.resume();
      next(unauthorized('authentication required: Basic auth with the admin credentials, or a management API key or session token as Bearer (or x-api-key), or the session cookie of POST /api/session/login'));
    };
    // An issued management key (audit/keys.ts): its scopes are checked by each route's guard.
    if (keys && key !== undefined) {
      return void keys.lookupFresh(key).then((k) => {
        if (!k) return refuse();
        throttle.succeed(client);
        setPrincipal(req, { kind: 'management_key', id: k.id, name: k.name, scopes: k.scopes });
        next();
      }, next);
    }
    refuse();
  };
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
  // A store past its deadline (the logs' search, a cache clear): the client may retry, it is not a bug.
  if (err instanceof StoreTimeoutError) return new GatewayError(503, `${err.message}; retry shortly`, { type: 'service_unavailable', code: 'store_unavailable', retryAfter: 1 });
  return toGatewayError(err);
}
