// `GET /v1/realtime?model=<provider>/<model>` (and under the other OpenAI prefixes): the upgrade is
// a request through the pipeline like any other. The caller stages identify the virtual key (from
// x-bf-vk, a Bearer token, or the browser's `openai-insecure-api-key.<key>` subprotocol), the
// request stages plan the target (routing rules see request_type "realtime") and admit one session
// start against the rate limits and budgets; the execution connects the provider, completes the
// client's handshake and relays until the session ends. Refused before the handshake, the client
// gets the gateway's error object with its HTTP status; after it, an `error` event and a close code.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Snapshot } from '../config/snapshot.ts';
import type { Services } from '../services.ts';
import { RequestContext } from '../pipeline/context.ts';
import type { Execute } from '../pipeline/runner.ts';
import type { Target } from '../pipeline/target.ts';
import { pickKey } from '../pipeline/key-pool.ts';
import { GatewayError, requireOperation } from '../unified/errors.ts';
import { OPENAI_PREFIXES } from '../unified/operations.ts';
import { refuseUpgrade } from '../http/upgrades.ts';
import { log } from '../log.ts';
import { connectUpstream, upstreamRequest } from './upstream.ts';
import { relayLink, type UpstreamLink } from './link.ts';
import { geminiLink } from './gemini-link.ts';
import { wsPort } from './client-port.ts';
import { governSession, SessionRegistry } from './governed.ts';
import { SECRET_PREFIX, verifySecret, type SecretGrant } from './client-secret.ts';
import { DEFAULT_MAX_SESSIONS_PER_KEY, type SessionCap } from './session-cap.ts';
import type { RealtimeRegistry } from './registry.ts';

export { boundsOf, DEFAULT_BOUNDS } from './governed.ts';

/** Realtime paths: `realtime` below every OpenAI-format prefix (/v1, /openai/v1, ...). */
export const REALTIME_PATHS: readonly string[] = OPENAI_PREFIXES.map((p) => `${p}/realtime`);

const REQUEST_TYPE = 'realtime';
const SUBPROTOCOL_KEY = 'openai-insecure-api-key.';

/** The provider's handshake may take this long. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Largest provider event read (a provider sends whole responses' audio in deltas of a few KiB). */
const MAX_UPSTREAM_EVENT_BYTES = 64 * 1024 * 1024;

/** The subprotocols a client offered (`Sec-WebSocket-Protocol`, comma-separated). */
function offered(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  return (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * The headers the stages read: a key offered as a subprotocol (what a browser can send) becomes a
 * Bearer token when no other credential came, and the subprotocol header itself is dropped, so
 * the key is in no header anything could log.
 */
export function identityHeaders(req: IncomingMessage): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = { ...req.headers };
  delete headers['sec-websocket-protocol'];
  delete headers['sec-websocket-key'];
  const key = offered(req).find((p) => p.startsWith(SUBPROTOCOL_KEY))?.slice(SUBPROTOCOL_KEY.length);
  if (key && headers.authorization === undefined && headers['x-bf-vk'] === undefined) headers.authorization = `Bearer ${key}`;
  return headers;
}

export interface RealtimeFront {
  /** The upgrade handler of the realtime paths. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Stops taking sessions and ends the open ones between turns, all of them by `graceMs`. */
  drain(graceMs: number): Promise<void>;
  readonly size: number;
}

export function realtimeFront(opts: { current: () => Snapshot; services: Services; cap: SessionCap; /** Lists the sessions for /api/realtime/sessions. */ registry?: RealtimeRegistry }): RealtimeFront {
  const { services } = opts;
  const registry = new SessionRegistry();
  let wss: Promise<WebSocketServer> | undefined;
  const load = (): Promise<WebSocketServer> =>
    (wss ??= import('ws').then(({ WebSocketServer }) => {
      const s = new WebSocketServer({
        noServer: true,
        perMessageDeflate: false,
        clientTracking: false,
        // The hard ceiling `ws` enforces (close 1009 without an event); the session refuses an event
        // over max_event_bytes itself, with an error event first, below this.
        maxPayload: 256 * 1024 * 1024,
        // The browser's WebSocket offers `realtime` (and the key): the handshake must select it.
        handleProtocols: (protocols: Set<string>) => (protocols.has('realtime') ? 'realtime' : false),
      });
      s.on('error', (err: Error) => log.debug('realtime socket server error', { error: err.message }));
      return s;
    }));

  const handle = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const snapshot = opts.current();
    const extra = { request_type: REQUEST_TYPE };
    const refuse = (err: GatewayError): void => refuseUpgrade(socket, err.status === 499 ? 400 : err.status, err.toBody(extra), err.retryAfter !== undefined ? { 'retry-after': String(err.retryAfter) } : {});
    if (registry.draining) {
      refuse(new GatewayError(503, 'the gateway is shutting down: connect again to reach another replica', { type: 'api_error', code: 'gateway_shutdown', retryAfter: 1 }));
      return;
    }
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const headers = identityHeaders(req);
    // A client secret (POST /v1/realtime/client_secrets) stands for its virtual key, model and settings.
    let grant: SecretGrant | undefined;
    const bearer = /^bearer (.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
    if (bearer?.startsWith(SECRET_PREFIX)) {
      try {
        grant = verifySecret(snapshot.governance, bearer);
      } catch (err) {
        refuse(err as GatewayError);
        return;
      }
      delete headers.authorization;
      const asked = query.get('model');
      if (asked !== null && asked !== grant.model) {
        refuse(new GatewayError(403, `the client secret is for model '${grant.model}', not '${asked.slice(0, 200)}'`, { type: 'permission_error', code: 'model_not_allowed', param: 'model' }));
        return;
      }
      query.set('model', grant.model);
    }
    const controller = new AbortController();
    const onGone = (): void => controller.abort();
    socket.once('close', onGone);
    const ctx = new RequestContext({
      services,
      snapshot,
      operation: 'realtime',
      headers,
      query: () => query,
      signal: controller.signal,
      http: { req },
      ...(grant && { caller: { principal: grant.vk, admitted: false } }),
    });
    ctx.requestType = REQUEST_TYPE;
    ctx.errorExtra = extra;
    let upgraded = false;
    const accept = async (c: RequestContext): Promise<Execute> => {
      const model = query.get('model');
      if (!model) throw new GatewayError(400, 'model is required: connect to /v1/realtime?model=<provider>/<model>', { param: 'model', code: 'missing_model' });
      c.scope = { kind: 'model', model, fallbacks: undefined, body: { model } };
      c.request = { model };
      c.access.model = model;
      return async (run) => {
        const release = opts.cap.acquire(run.vk, run.snapshot.config.websocket?.max_connections_per_user ?? DEFAULT_MAX_SESSIONS_PER_KEY);
        try {
          const link = await connectFirst(run);
          if (socket.destroyed) {
            link.close(1000, 'the client went away');
            throw new GatewayError(499, 'the client went away before the session opened', { type: 'client_closed' });
          }
          let client: WebSocket;
          try {
            client = await completeHandshake(await load(), req, socket, head);
          } catch (err) {
            link.close(1000, 'the client went away');
            throw err;
          }
          upgraded = true;
          socket.off('close', onGone);
          // The secret's settings configure the session before the client's first event.
          if (grant && Object.keys(grant.session).length > 0) {
            const update = { type: 'session.update', session: { type: 'realtime', ...grant.session } };
            link.send(JSON.stringify(update), update);
          }
          return await relay(run, client, link);
        } finally {
          release();
        }
      };
    };
    void services.pipeline.run(ctx, accept).then(
      (outcome) => {
        socket.off('close', onGone);
        if (!upgraded && outcome.kind === 'error') refuse(outcome.error);
        else if (!upgraded) refuse(new GatewayError(500, 'the realtime session did not start', { type: 'internal_error' }));
      },
      (err: unknown) => {
        log.error('realtime upgrade failed', { error: (err as Error)?.stack ?? String(err) });
        if (!upgraded) socket.destroy();
      },
    );
  };

  /** The first target whose provider accepts the session; a refusal that is the caller's (4xx) is not retried elsewhere. */
  const connectFirst = async (ctx: RequestContext): Promise<UpstreamLink> => {
    let last: GatewayError | undefined;
    for (let i = 0; i < ctx.targets.length; i++) {
      const target: Target = ctx.targets[i];
      ctx.provider = target.provider.name;
      ctx.model = target.model;
      ctx.fallbackIndex = i;
      ctx.access.provider = target.provider.name;
      requireOperation(target.provider, 'realtime');
      const key = pickKey(target);
      ctx.keyId = key?.id;
      const request = upstreamRequest(target.provider, target.model, key);
      try {
        const connected = await connectUpstream(target.provider, request, { timeoutMs: CONNECT_TIMEOUT_MS, maxPayload: MAX_UPSTREAM_EVENT_BYTES, signal: ctx.signal });
        return request.protocol === 'gemini' ? geminiLink(connected, target.model) : relayLink(connected);
      } catch (err) {
        if (!(err instanceof GatewayError) || err.status < 500) throw err;
        last = err;
      }
    }
    throw last ?? new GatewayError(502, 'no provider could open the realtime session', { type: 'upstream_error' });
  };

  const relay = (ctx: RequestContext, client: WebSocket, link: UpstreamLink) => governSession(ctx, registry, wsPort(client), link, { ...(opts.registry && { listing: opts.registry }) });


  return {
    handle,
    drain: (graceMs) => registry.drain(graceMs),
    get size() {
      return registry.sessions.size;
    },
  };
}

/**
 * The client's handshake, completed. `ws` answers a malformed one (a bad Sec-WebSocket-Key, say)
 * itself and never calls back: the socket's close says so here.
 */
export function completeHandshake(server: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const gone = (): void => reject(new GatewayError(499, 'the client went away during the handshake', { type: 'client_closed' }));
    socket.once('close', gone);
    server.handleUpgrade(req, socket, head, (ws) => {
      socket.off('close', gone);
      resolve(ws);
    });
  });
}
