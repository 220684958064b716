// A realtime session run under governance, whatever carries it (a WebSocket, a WebRTC call): each
// turn charged to the key's limits and budgets as it finishes (a spent one ends the session), each
// turn a child log record, the session's own record written when it ends, the metrics of active
// sessions, events and end reasons, and the session's model held to the one admitted. The
// sessions a front runs are kept in a SessionRegistry, which SIGTERM drains between turns.
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { TurnTotals } from '../pipeline/turns.ts';
import { GatewayError } from '../unified/errors.ts';
import type { WebsocketConfig } from '../schema/gateway.ts';
import { loggingEnabled } from '../logs/stage.ts';
import type { ClientPort } from './client-port.ts';
import type { UpstreamLink } from './link.ts';
import { errorEvent, type ClientEvent } from './protocol.ts';
import { RealtimeSession, type SessionBounds, type SessionEnd, type SessionHooks } from './session.ts';
import { chargeTurn } from './meter.ts';
import { sessionMetadata, turnRecord } from './log-records.ts';
import type { RealtimeRegistry, SessionStart, SessionSums } from './registry.ts';

export const DEFAULT_BOUNDS: SessionBounds = { idleMs: 300_000, maxMs: 3_600_000, maxEventBytes: 4 * 1024 * 1024, maxBufferedBytes: 4 * 1024 * 1024, backpressureMs: 10_000 };

export function boundsOf(cfg: WebsocketConfig | undefined): SessionBounds {
  return {
    idleMs: cfg?.idle_timeout_seconds !== undefined ? cfg.idle_timeout_seconds * 1000 : DEFAULT_BOUNDS.idleMs,
    maxMs: cfg?.max_session_seconds !== undefined ? cfg.max_session_seconds * 1000 : DEFAULT_BOUNDS.maxMs,
    maxEventBytes: cfg?.max_event_bytes ?? DEFAULT_BOUNDS.maxEventBytes,
    maxBufferedBytes: cfg?.max_buffered_bytes ?? DEFAULT_BOUNDS.maxBufferedBytes,
    backpressureMs: cfg?.backpressure_timeout_seconds !== undefined ? cfg.backpressure_timeout_seconds * 1000 : DEFAULT_BOUNDS.backpressureMs,
  };
}

/** The open sessions of one front, and whether it is draining. */
export class SessionRegistry {
  readonly sessions = new Set<RealtimeSession>();
  draining = false;

  /** Stops taking sessions and ends the open ones between turns, all of them by `graceMs`. */
  drain(graceMs: number): Promise<void> {
    this.draining = true;
    if (this.sessions.size === 0) return Promise.resolve();
    const all = [...this.sessions].map((s) => s.done);
    for (const s of this.sessions) s.drain();
    // What is still in flight near the end of the grace period is cut, so the listener can close in time.
    const cut = setTimeout(() => {
      for (const s of this.sessions) s.cut();
    }, Math.max(0, graceMs - 500)).unref();
    return Promise.allSettled(all).then(() => clearTimeout(cut));
  }
}

const MODEL_KEY = Buffer.from('"model"');
const BACKSLASH = 0x5c;

/**
 * Whether modelScreen must read a client event (its bytes valid JSON): a `session.update` that may
 * name a model. With no backslash in it, every key of a JSON text is spelled out as its own bytes,
 * so one without the bytes `"model"` names no model anywhere and passes the screen untouched (the
 * bench's session.update, and most clients' changes of voice or instructions).
 */
export function modelScreened(type: string, data: Buffer): boolean {
  return type === 'session.update' && (data.includes(MODEL_KEY) || data.includes(BACKSLASH));
}

/**
 * The session's model is the one it was admitted for: a `session.update` naming another is refused
 * with an error event (the session goes on), and one naming the admitted model by the gateway's
 * `provider/model` goes to the provider with the provider's own name for it.
 */
export function modelScreen(ctx: RequestContext): (event: ClientEvent) => { refuse: string } | { relay: ClientEvent } | undefined {
  return (event) => {
    if (event.type !== 'session.update') return undefined;
    const session = event.session as Record<string, unknown> | undefined;
    if (typeof session !== 'object' || session === null || session.model === undefined) return undefined;
    const requested = ctx.scope.kind === 'model' ? ctx.scope.model : undefined;
    if (session.model === ctx.model) return undefined;
    if (session.model === requested) return { relay: { ...event, session: { ...session, model: ctx.model } } };
    const asked = typeof session.model === 'string' ? `'${session.model.slice(0, 200)}'` : 'a model that is not a string';
    const message = `this session is for '${requested ?? ctx.model}': a session.update cannot change it to ${asked} (open a new session for another model)`;
    return { refuse: errorEvent('invalid_request_error', 'model_not_allowed', message, 'session.model', typeof event.event_id === 'string' ? event.event_id : undefined) };
  };
}

export interface GovernOptions {
  /** Lists the session for /api/realtime/sessions and the dashboard while it runs. */
  listing?: RealtimeRegistry;
  /** How the client is connected, as the listing shows it (default: a WebSocket). */
  transport?: SessionStart['transport'];
  /** Called with the session once it exists (a WebRTC call wires its media to it). */
  started?(session: RealtimeSession): void;
  /** Facts the session's log record keeps besides the common ones. */
  metadata?(): Record<string, string>;
}

/** Runs one session to its end; answers the outcome the session's log record is written from. */
export async function governSession(ctx: RequestContext, registry: SessionRegistry, client: ClientPort, link: UpstreamLink, opts: GovernOptions = {}): Promise<Outcome> {
  const metrics = ctx.services.metrics;
  const provider = ctx.provider;
  ctx.turns = new TurnTotals();
  // Each turn is a child record of the session's, when request logging is on.
  const logged = ctx.services.logs !== undefined && loggingEnabled(ctx.snapshot);
  const vk = ctx.vk?.record;
  const listed = opts.listing?.open({ id: ctx.id, model: ctx.model ?? '', provider, transport: opts.transport ?? 'websocket', logged, ...(vk && { virtualKey: { id: vk.id, name: vk.name, ...(vk.team_id !== undefined && { teamId: vk.team_id }) } }) });
  const sums = (): SessionSums => ({ turns: ctx.turns?.turns ?? 0, totalTokens: ctx.turns?.totalTokens ?? 0, cost: ctx.turns?.cost ?? 0, unpriced: ctx.turns?.unpriced ?? false });
  const clientEvents = metrics.realtimeEventCount('client', provider);
  const serverEvents = metrics.realtimeEventCount('server', provider);
  const hooks: SessionHooks = {
    onTurn: async (turn) => {
      const spent = turn.usage ? await chargeTurn(ctx, turn.usage) : undefined;
      listed?.turn(sums());
      if (logged) ctx.services.logs?.enqueue(turnRecord(ctx, turn));
      if (!spent) return undefined;
      return spent.kind === 'budget' ? `budget '${spent.id}' is exhausted (limit $${spent.max} per ${spent.duration}): the session is closed` : `rate limit '${spent.id}' is reached (${spent.max} tokens per ${spent.duration}): the session is closed`;
    },
    onEvent: (direction) => (direction === 'client' ? clientEvents : serverEvents).inc(),
    screen: modelScreen(ctx),
    screens: modelScreened,
  };
  const session = new RealtimeSession(client, link, boundsOf(ctx.snapshot.config.websocket), hooks);
  registry.sessions.add(session);
  metrics.realtimeSessions.inc({ provider });
  opts.started?.(session);
  if (registry.draining) session.drain();
  let end: SessionEnd;
  try {
    end = await session.done;
  } finally {
    registry.sessions.delete(session);
    metrics.realtimeSessions.dec({ provider });
  }
  listed?.end(end.reason, sums());
  metrics.realtimeClosed.inc({ reason: end.reason });
  ctx.firstChunkAt = session.tracker.firstAudioAt;
  ctx.logMetadata = { ...sessionMetadata(end, session, ctx.turns), ...opts.metadata?.() };
  const failed = endError(end, provider);
  return failed ? { kind: 'error', error: failed } : { kind: 'json', status: 200, value: { reason: end.reason, code: end.code } };
}

/** A session that ended badly as the error its log record names; undefined for an ordinary end. */
export function endError(end: SessionEnd, provider: string): GatewayError | undefined {
  switch (end.reason) {
    case 'budget':
      return new GatewayError(402, end.message, { type: 'budget_exceeded', code: 'budget_exceeded' });
    case 'bad_frame':
      return new GatewayError(400, end.message, { code: 'invalid_realtime_event' });
    case 'backpressure':
      return new GatewayError(408, end.message, { type: 'request_timeout', code: 'client_not_reading' });
    case 'upstream':
      return end.code === 1000 ? undefined : new GatewayError(502, `the provider ended the session with close code ${end.code}: ${end.message}`, { type: 'upstream_error', code: 'upstream_closed', provider, upstream: true });
    default:
      return undefined;
  }
}
