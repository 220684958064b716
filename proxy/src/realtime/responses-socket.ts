// The Responses API's WebSocket mode on /v1/responses (and the other OpenAI prefixes): a client sends
// `response.create` events (a Responses request without `stream`) and gets each response's stream
// events as JSON frames. Every response.create runs through the gateway's normal responses pipeline
// (execute(): identify, plan, limits, the response cache, logging, metrics), so it is governed,
// cached and logged as the same request over HTTP would be. Responses run one at a time per socket,
// in the order asked. The caller is identified at the upgrade too, so a bad key gets its 401
// before any socket opens. Each connection is listed with the realtime sessions (registry.ts) while
// open and once ended: its turns are the responses answered, with their tokens and cost.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { Snapshot } from '../config/snapshot.ts';
import type { Services } from '../services.ts';
import { startExecution } from '../operations/execute.ts';
import { identifyCaller } from '../governance/auth.ts';
import { answerCost } from '../governance/cost.ts';
import type { VirtualKeyRuntime } from '../config/governance-runtime.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { TurnTotals } from '../pipeline/turns.ts';
import { loggingEnabled } from '../logs/stage.ts';
import { newRequestId } from '../request-id.ts';
import { GatewayError } from '../unified/errors.ts';
import { toGatewayError } from '../pipeline/outcome.ts';
import { OPENAI_PREFIXES } from '../unified/operations.ts';
import { refuseUpgrade } from '../http/upgrades.ts';
import { log } from '../log.ts';
import { boundsOf, completeHandshake, identityHeaders } from './front.ts';
import { CLOSE } from './session.ts';
import { DEFAULT_MAX_SESSIONS_PER_KEY, type SessionCap } from './session-cap.ts';
import type { OpenSession, RealtimeRegistry, SessionSums, TurnAnswer } from './registry.ts';

export const RESPONSES_SOCKET_PATHS: readonly string[] = OPENAI_PREFIXES.map((p) => `${p}/responses`);

const REQUEST_TYPE = 'responses_websocket';

/** The error event of the Responses stream (the SDK reads `message`, or `error.message`). */
function errorEvent(err: GatewayError, seq: number): string {
  const code = err.code ?? err.type;
  return JSON.stringify({ type: 'error', sequence_number: seq, status: err.status, code, message: err.message, param: err.param ?? null, error: { type: err.type, code, message: err.message, param: err.param ?? null } });
}

/** What a client frame asks for: a request to run, or why it ends the socket. */
export function readResponsesFrame(data: Buffer, isBinary: boolean, maxBytes: number): { request: Record<string, unknown> } | { error: GatewayError; close: number } {
  const bad = (message: string, code: string, close: number, param?: string) => ({ error: new GatewayError(400, message, { code, ...(param !== undefined && { param }) }), close });
  if (isBinary) return bad('binary frames are not part of the Responses WebSocket protocol: send each event as a JSON text frame', 'binary_frame', CLOSE.unsupportedData);
  if (data.length > maxBytes) return bad(`an event of ${data.length} bytes is over this gateway's limit of ${maxBytes} bytes (websocket.max_event_bytes)`, 'event_too_large', CLOSE.tooBig);
  let event: unknown;
  try {
    event = JSON.parse(data.toString('utf8'));
  } catch {
    return bad('the frame is not JSON: each event is a JSON object in a text frame', 'invalid_json', CLOSE.invalidPayload);
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event) || typeof (event as { type?: unknown }).type !== 'string') return bad('an event must be a JSON object with a string `type`', 'invalid_event', CLOSE.invalidPayload, 'type');
  const { type, stream: _stream, ...request } = event as Record<string, unknown>;
  if (type !== 'response.create') return bad(`unknown event type '${String(type).slice(0, 100)}': this gateway serves response.create`, 'unknown_event', CLOSE.policy, 'type');
  return { request };
}

/** A response counted as a turn of its connection: answered (not an error), with its usage and the cost charged (a cache hit spends nothing). */
export function countResponse(totals: TurnTotals, ctx: RequestContext, outcome: Outcome, logged: boolean): TurnAnswer | undefined {
  if (outcome.kind === 'error') return undefined;
  totals.add(ctx.usage, ctx.savedCost !== undefined ? 0 : ctx.usage && answerCost(ctx));
  return { model: ctx.model ?? '', provider: ctx.provider, ...(logged && { logId: ctx.id }) };
}

const sumsOf = (t: TurnTotals): SessionSums => ({ turns: t.turns, totalTokens: t.totalTokens, cost: t.cost, unpriced: t.unpriced });

export interface ResponsesSockets {
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  drain(graceMs: number): Promise<void>;
}

export function responsesSockets(opts: { current: () => Snapshot; services: Services; cap: SessionCap; /** Lists the connections for /api/realtime/sessions. */ registry?: RealtimeRegistry }): ResponsesSockets {
  const open = new Set<{ drain(): void; cut(): void; done: Promise<void> }>();
  let draining = false;
  let wss: Promise<WebSocketServer> | undefined;
  const load = (): Promise<WebSocketServer> =>
    (wss ??= import('ws').then(({ WebSocketServer }) => {
      const s = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false, maxPayload: 256 * 1024 * 1024 });
      s.on('error', (err: Error) => log.debug('responses socket server error', { error: err.message }));
      return s;
    }));

  const handle = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const snapshot = opts.current();
    const extra = { request_type: REQUEST_TYPE };
    const refuse = (err: GatewayError): void => refuseUpgrade(socket, err.status, err.toBody(extra), err.retryAfter !== undefined ? { 'retry-after': String(err.retryAfter) } : {});
    if (draining) {
      refuse(new GatewayError(503, 'the gateway is shutting down: connect again to reach another replica', { type: 'api_error', code: 'gateway_shutdown', retryAfter: 1 }));
      return;
    }
    const headers = identityHeaders(req);
    let release: () => void;
    let vk: VirtualKeyRuntime | undefined;
    try {
      // Each response is identified again by the pipeline; this answers a bad key before the handshake.
      vk = identifyCaller(snapshot.governance, headers);
      release = opts.cap.acquire(vk, snapshot.config.websocket?.max_connections_per_user ?? DEFAULT_MAX_SESSIONS_PER_KEY);
    } catch (err) {
      refuse(err instanceof GatewayError ? err : new GatewayError(500, 'internal error', { type: 'internal_error' }));
      return;
    }
    void load().then(
      (server) => {
        if (socket.destroyed) {
          release();
          return;
        }
        completeHandshake(server, req, socket, head).then(
          (ws) => serve(ws, headers, release, vk),
          () => release(),
        );
      },
      (err: unknown) => {
        release();
        log.error('the WebSocket library could not be loaded', { error: (err as Error).message });
        refuse(new GatewayError(503, 'WebSocket sessions are unavailable on this gateway', { type: 'api_error' }));
      },
    );
  };

  const serve = (ws: WebSocket, headers: IncomingHttpHeaders, release: () => void, vk: VirtualKeyRuntime | undefined): void => {
    const bounds = boundsOf(opts.current().config.websocket);
    const totals = new TurnTotals();
    const key = vk?.record;
    const listed: OpenSession | undefined = opts.registry?.open({
      id: newRequestId(),
      model: '',
      provider: '',
      transport: 'responses_ws',
      // Each response links its own record, once there is one.
      logged: false,
      ...(key && { virtualKey: { id: key.id, name: key.name, ...(key.team_id !== undefined && { teamId: key.team_id }) } }),
    });
    /** Why the gateway ended the socket, as the listing names it; a close it did not start is the client's. */
    let why = 'client';
    const queue: Record<string, unknown>[] = [];
    const controller = new AbortController();
    let running = false;
    /** The pump while it runs: the listing ends once the response in flight is counted. */
    let pumping: Promise<void> = Promise.resolve();
    let closed = false;
    let seq = 0;
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const end = (code: number, reason: string, cause: string, event?: string): void => {
      if (closed) return;
      closed = true;
      why = cause;
      clearTimeout(idle);
      clearTimeout(max);
      controller.abort();
      if (ws.readyState === 1) {
        if (event) ws.send(event);
        ws.close(code, reason.slice(0, 120));
        setTimeout(() => ws.terminate(), 2000).unref();
      }
    };
    const idle = setTimeout(() => end(CLOSE.normal, 'idle', 'idle', errorEvent(new GatewayError(408, `no event either way for ${bounds.idleMs / 1000} s: the socket is closed`, { code: 'session_idle_timeout' }), seq++)), bounds.idleMs);
    const max = setTimeout(() => end(CLOSE.normal, 'maximum length', 'max_duration', errorEvent(new GatewayError(408, `the socket reached this gateway's maximum session length (${bounds.maxMs / 1000} s)`, { code: 'session_expired' }), seq++)), bounds.maxMs);
    const session = {
      done,
      drain: () => {
        if (!running) end(CLOSE.goingAway, 'the gateway is shutting down: reconnect to continue', 'shutdown');
      },
      cut: () => end(CLOSE.goingAway, 'the gateway is shutting down: reconnect to continue', 'shutdown'),
    };
    open.add(session);
    ws.on('error', () => undefined);
    ws.once('close', () => {
      closed = true;
      clearTimeout(idle);
      clearTimeout(max);
      controller.abort();
      open.delete(session);
      release();
      void pumping.then(() => listed?.end(why, sumsOf(totals)));
      resolve();
    });

    /** Waits while the client has more than the bound unsent; false when it stays behind too long. */
    const writable = async (): Promise<boolean> => {
      const since = performance.now();
      while (ws.bufferedAmount > bounds.maxBufferedBytes) {
        if (closed) return false;
        if (performance.now() - since > bounds.backpressureMs) return false;
        await new Promise((r) => setTimeout(r, 25));
      }
      return !closed;
    };

    const run = async (request: Record<string, unknown>): Promise<void> => {
      const snapshot = opts.current();
      const { context, outcome: pending } = startExecution(opts.services, snapshot, { operation: 'responses', body: { ...request, stream: true }, headers, signal: controller.signal });
      const outcome = await pending;
      try {
        await relay(outcome);
      } finally {
        // Counted once the answer (and its after hooks: usage, cost, the log record) is done.
        const answer = countResponse(totals, context, outcome, opts.services.logs !== undefined && loggingEnabled(snapshot));
        if (answer) listed?.turn(sumsOf(totals), answer);
      }
    };

    const relay = async (outcome: Outcome): Promise<void> => {
      if (outcome.kind === 'error') {
        if (!closed) ws.send(errorEvent(outcome.error, seq++));
        return;
      }
      if (outcome.kind !== 'stream') {
        // A JSON answer (a provider without streaming): its events are the final one.
        if (!closed && outcome.kind === 'json') ws.send(JSON.stringify({ type: 'response.completed', sequence_number: seq++, response: outcome.value }));
        return;
      }
      const items = outcome.items[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await items.next();
          if (next.done) break;
          for (const item of next.value) {
            if (closed) return;
            ws.send(JSON.stringify(item));
            idle.refresh();
          }
          if (!(await writable())) {
            if (!closed) {
              ws.terminate();
              end(CLOSE.policy, 'the client did not read its events', 'backpressure');
            }
            return;
          }
        }
      } catch (err) {
        if (!closed) ws.send(errorEvent(toGatewayError(err), seq++));
      } finally {
        // A stream left early must still run its after hooks (usage charged, the log record).
        await items.return?.();
      }
    };

    const pump = async (): Promise<void> => {
      if (running) return;
      running = true;
      try {
        for (let request = queue.shift(); request && !closed; request = queue.shift()) await run(request);
      } catch (err) {
        log.error('responses socket failed', { error: (err as Error)?.stack ?? String(err) });
        end(CLOSE.internal, 'internal error', 'internal');
      } finally {
        running = false;
        if (draining && !closed) end(CLOSE.goingAway, 'the gateway is shutting down: reconnect to continue', 'shutdown');
      }
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (closed) return;
      idle.refresh();
      const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      const read = readResponsesFrame(buf, isBinary, bounds.maxEventBytes);
      if ('error' in read) {
        end(read.close, read.error.message.slice(0, 120), 'bad_frame', errorEvent(read.error, seq++));
        return;
      }
      queue.push(read.request);
      if (!running) pumping = pump();
    });
    if (draining) session.drain();
  };

  return {
    handle,
    drain: (graceMs) => {
      draining = true;
      if (open.size === 0) return Promise.resolve();
      const all = [...open].map((s) => s.done);
      for (const s of open) s.drain();
      const cut = setTimeout(() => {
        for (const s of open) s.cut();
      }, Math.max(0, graceMs - 500)).unref();
      return Promise.allSettled(all).then(() => clearTimeout(cut));
    },
  };
}
