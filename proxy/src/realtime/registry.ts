// The realtime sessions of this replica, for GET /api/realtime/sessions and the dashboard's live
// events: each open session (who, which model, since when, turns, tokens and cost so far) and the
// last ones that ended (with why, and the id of their request log record). A session's id is its
// request id, which is also its log record's id. A Responses API WebSocket connection is listed the
// same way: each response is a turn with its own log record, and the view links the latest one.
// Nothing is kept but these small views.

/** One session as GET /api/realtime/sessions and the `realtime` live event show it (api/answers.ts re-exports it). */
export interface RealtimeSessionView {
  /** The session's request id: also its log record's id (a Responses WebSocket connection's own id: it has no record of its own). */
  id: string;
  state: 'open' | 'ended';
  virtual_key_id?: string;
  virtual_key_name?: string;
  team_id?: string;
  /** As the provider was asked (without the provider prefix); a Responses WebSocket connection's latest response's, empty before its first. */
  model: string;
  provider: string;
  /**
   * How the client is connected: a realtime WebSocket upgrade, a WebRTC call (POST /v1/realtime/calls),
   * or the Responses API's WebSocket mode on /v1/responses (its turns are the responses answered).
   */
  transport: 'websocket' | 'webrtc' | 'responses_ws';
  started_at: string;
  ended_at?: string;
  /** Why it ended: client, upstream, idle, max_duration, budget, bad_frame, backpressure, shutdown. */
  end_reason?: string;
  turns: number;
  total_tokens: number;
  /** USD so far, at the built-in or overridden price. */
  cost: number;
  /** A turn had no known price: `cost` is not the whole cost. */
  cost_incomplete?: boolean;
  /** The request log record (`GET /api/logs/{id}`), written when the session ends (a Responses WebSocket connection: its latest response's); absent when request logging is off. */
  log_id?: string;
}

/** What the registry says when a session opens, finishes a turn, or ends. */
export type SessionChange = (event: 'opened' | 'turn' | 'ended', session: RealtimeSessionView) => void;

/** Ended sessions kept for the page's "recently ended" list. */
export const ENDED_KEPT = 50;

export interface SessionStart {
  id: string;
  model: string;
  provider: string;
  transport: RealtimeSessionView['transport'];
  virtualKey?: { id: string; name: string; teamId?: string };
  /** Whether its log record will be written (request logging on). */
  logged: boolean;
}

export interface SessionSums {
  turns: number;
  totalTokens: number;
  cost: number;
  unpriced: boolean;
}

/** Who answered a turn, when each turn is a request of its own (a Responses WebSocket connection's responses). */
export interface TurnAnswer {
  model: string;
  provider: string;
  /** The turn's log record, when request logging keeps one. */
  logId?: string;
}

export interface OpenSession {
  /** A turn was charged: the sums so far (and who answered it, when that can change from turn to turn). */
  turn(sums: SessionSums, answer?: TurnAnswer): void;
  end(reason: string, sums: SessionSums): void;
}

export class RealtimeRegistry {
  readonly #open = new Map<string, RealtimeSessionView>();
  #ended: RealtimeSessionView[] = [];
  #onChange: SessionChange | undefined;

  constructor(onChange?: SessionChange) {
    this.#onChange = onChange;
  }

  open(s: SessionStart): OpenSession {
    const view: RealtimeSessionView = {
      id: s.id,
      state: 'open',
      model: s.model,
      provider: s.provider,
      transport: s.transport,
      started_at: new Date().toISOString(),
      turns: 0,
      total_tokens: 0,
      cost: 0,
      ...(s.virtualKey && { virtual_key_id: s.virtualKey.id, virtual_key_name: s.virtualKey.name, ...(s.virtualKey.teamId !== undefined && { team_id: s.virtualKey.teamId }) }),
      ...(s.logged && { log_id: s.id }),
    };
    this.#open.set(s.id, view);
    this.#onChange?.('opened', { ...view });
    const apply = (sums: SessionSums) => {
      view.turns = sums.turns;
      view.total_tokens = sums.totalTokens;
      view.cost = sums.cost;
      if (sums.unpriced) view.cost_incomplete = true;
    };
    let ended = false;
    return {
      turn: (sums, answer) => {
        if (ended) return;
        apply(sums);
        if (answer) {
          view.model = answer.model;
          view.provider = answer.provider;
          if (answer.logId !== undefined) view.log_id = answer.logId;
        }
        this.#onChange?.('turn', { ...view });
      },
      end: (reason, sums) => {
        if (ended) return;
        ended = true;
        apply(sums);
        this.#open.delete(s.id);
        view.state = 'ended';
        view.ended_at = new Date().toISOString();
        view.end_reason = reason;
        this.#ended = [view, ...this.#ended].slice(0, ENDED_KEPT);
        this.#onChange?.('ended', { ...view });
      },
    };
  }

  /** How many sessions are open now. */
  get openCount(): number {
    return this.#open.size;
  }

  /** Open sessions, oldest first, then the ended ones, most recent first. */
  list(): { open: RealtimeSessionView[]; ended: RealtimeSessionView[] } {
    return { open: [...this.#open.values()].map((v) => ({ ...v })), ended: this.#ended.map((v) => ({ ...v })) };
  }
}
