// The dashboard's live events of this replica: request logs as they are stored, and notifications
// (request errors, budget thresholds, webhook deliveries that gave up, MCP client state changes).
// Every emitter checks `listening` first, so a gateway with no dashboard socket open builds nothing:
// the cost on the request path is one property read.
import type { LogRecord } from './record.ts';
import { listEntry } from './sql-store.ts';
import type { RealtimeSessionView } from '../realtime/registry.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** The dashboard's live events: emitters check `listening` first. */
    events?: EventHub;
  }
}

export type NotificationKind = 'request_error' | 'budget_threshold' | 'webhook_failure' | 'mcp_client_state';

/** What a subscriber receives: one JSON text frame, serialized once for every socket. */
export type EventListener = (frame: string) => void;

/** Budget usage fractions that raise a notification when an increment crosses them. */
export const BUDGET_THRESHOLDS = [0.8, 1] as const;

/** The budget side of a charge (governance/stages.ts): a limit with its id, cap and window, and the amount added. */
export interface BudgetCharge {
  limit: { key: string; id: string; kind: string; max: number; duration: string };
  amount: number;
}

/** The counters' last seen usage of a limit key (the value record() just produced). */
export interface UsageReader {
  cached(key: string): number | undefined;
}

export interface WebhookGaveUp {
  webhook: string;
  delivery: string;
  event: string;
  attempts: number;
  error: string | undefined;
}

export interface McpClientView {
  id: string;
  name: string;
  state: string;
  lastError: string | undefined;
}

export class EventHub {
  readonly #listeners = new Set<EventListener>();
  /** MCP states seen, kept even with nobody listening (a few entries) so a change is told apart from a re-listing. */
  readonly #mcpStates = new Map<string, string>();

  /** True while at least one dashboard socket listens: emitters return at once otherwise. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Records the log writer just stored: a `log` event each, and `request_error` for server-side
   * failures. A child record (an agent request's turn) is part of its parent's request: the parent's
   * record alone is announced, so one client request is one event and at most one notification.
   */
  logsWritten(records: readonly LogRecord[]): void {
    if (!this.listening) return;
    const now = Date.now();
    for (const record of records) {
      if (record.parent_request_id !== undefined) continue;
      const entry = listEntry(record, now);
      this.#broadcast({ type: 'log', data: entry });
      if (isServerError(record)) {
        const details = record.error_details as { status?: unknown; message?: unknown } | undefined;
        const status = typeof details?.status === 'number' ? details.status : undefined;
        const message = typeof details?.message === 'string' ? details.message : 'the request failed';
        this.notify('request_error', `${record.object} request ${record.id} failed${status ? ` (${status})` : ''}: ${message}`, {
          log_id: record.id,
          ...(status !== undefined && { status }),
          ...(record.provider && { provider: record.provider }),
          ...(record.model && { model: record.model }),
          ...(record.virtual_key_id && { virtual_key_id: record.virtual_key_id }),
          error: record.error_details,
        });
      }
    }
  }

  /**
   * Called before a charge is recorded; the returned callback, run once it is, notifies the budgets
   * whose increment crossed 80 % or 100 % of their cap. Undefined (nothing to do) with nobody listening.
   * The crossing is judged on this increment alone (usage after it, minus it), so among replicas
   * sharing Redis counters exactly one sees each crossing.
   */
  budgetWatch(adds: readonly BudgetCharge[], counters: UsageReader): (() => void) | undefined {
    if (!this.listening) return undefined;
    const budgets = adds.filter((a) => a.limit.kind === 'budget' && a.amount > 0 && a.limit.max > 0);
    if (budgets.length === 0) return undefined;
    return () => {
      for (const { limit, amount } of budgets) {
        const after = counters.cached(limit.key);
        if (after === undefined) continue;
        const before = after - amount;
        for (const t of BUDGET_THRESHOLDS) {
          const line = limit.max * t;
          if (before < line && after >= line) {
            const percent = Math.round(t * 100);
            this.notify('budget_threshold', `budget '${limit.id}' reached ${percent}% of its $${limit.max} per ${limit.duration}`, {
              budget_id: limit.id,
              threshold_percent: percent,
              usage: after,
              max_limit: limit.max,
              reset_duration: limit.duration,
            });
          }
        }
      }
    };
  }

  /** A webhook delivery that used its last retry. */
  webhookGaveUp(d: WebhookGaveUp): void {
    if (!this.listening) return;
    this.notify('webhook_failure', `webhook '${d.webhook}' gave up on delivery ${d.delivery} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.error ? `: ${d.error}` : ''}`, {
      webhook: d.webhook,
      delivery_id: d.delivery,
      event: d.event,
      attempts: d.attempts,
      ...(d.error && { error: d.error }),
    });
  }

  /** An MCP client finished a connect or listing: a notification when its state differs from the last one seen. */
  mcpClientChanged(c: McpClientView): void {
    const previous = this.#mcpStates.get(c.id);
    if (previous === c.state) return;
    this.#mcpStates.set(c.id, c.state);
    if (!this.listening) return;
    this.notify('mcp_client_state', `MCP client '${c.name}' is ${c.state}${c.state === 'error' && c.lastError ? `: ${c.lastError}` : ''}`, {
      client_id: c.id,
      name: c.name,
      state: c.state,
      ...(previous !== undefined && { previous_state: previous }),
      ...(c.lastError && c.state === 'error' && { error: c.lastError }),
    });
  }

  /** A realtime session of this replica opened, finished a turn, or ended (the Realtime sessions page). */
  realtimeSession(event: 'opened' | 'turn' | 'ended', session: RealtimeSessionView): void {
    if (!this.listening) return;
    this.#broadcast({ type: 'realtime', event, data: session });
  }

  notify(kind: NotificationKind, message: string, data: Record<string, unknown>): void {
    if (!this.listening) return;
    this.#broadcast({ type: 'notification', kind, message, data, at: new Date().toISOString() });
  }

  #broadcast(event: Record<string, unknown>): void {
    const frame = JSON.stringify(event);
    for (const listener of this.#listeners) {
      try {
        listener(frame);
      } catch {
        // one broken socket must not keep the event from the others
      }
    }
  }
}

/** A failure on the gateway's or the provider's side (an error answered with 5xx, or one without a status), not a client's 4xx. */
function isServerError(record: LogRecord): boolean {
  if (record.status !== 'error' || record.error_details === undefined) return false;
  const status = (record.error_details as { status?: unknown } | null)?.status;
  return typeof status !== 'number' || status >= 500;
}
