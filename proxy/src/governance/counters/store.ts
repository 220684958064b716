// The counters behind budgets and rate limits: one interface, two stores (memory for a single
// process, Redis for replicas that share limits). Usage lives in fixed windows (windows.ts).
//
// Semantics both stores keep:
// - admit() is one atomic step over all limits. It passes when every limit's usage in its current
//   window is below its max; only then is every request limit incremented by 1 (a rejected request
//   consumes nothing). Budget and token limits are only checked: their usage arrives with record().
// - record() adds cost (USD) to budgets and tokens to token limits after the answer, in the window
//   current at that time. Over-spend is therefore bounded by what is in flight, not prevented.
// - cached(key) answers synchronously with the last usage this process saw for a key (0 once that
//   window has ended), for the routing rules' capacity variables.
import { GatewayError } from '../../unified/errors.ts';
import { windowAt, type Window } from './windows.ts';

export type LimitKind = 'budget' | 'tokens' | 'requests';

export interface Limit {
  /** 'budget:<id>', 'tokens:<id>' or 'requests:<id>'. Two limits with the same key share a counter. */
  key: string;
  max: number;
  /** '30s', '5m', '1h', '1d', '1w', '1M', '1Y'. */
  duration: string;
  calendarAligned?: boolean;
  /** Defaults to the key's prefix (`requests:` -> requests, `tokens:` -> tokens, else budget). */
  kind?: LimitKind;
}

export type AdmitResult =
  /** usage[i]: limit i's usage after this admission (request limits include this request). */
  | { ok: true; usage: number[] }
  /** index: the first limit that was full; usage is unchanged; retryAfterMs: until its window ends. */
  | { ok: false; index: number; usage: number[]; retryAfterMs: number };

export interface UsageAdd {
  limit: Limit;
  /** USD for budgets (fractions kept), tokens for token limits (rounded to an integer). */
  amount: number;
}

export interface CounterStore {
  admit(limits: readonly Limit[], nowMs: number): Promise<AdmitResult>;
  record(adds: readonly UsageAdd[], nowMs: number): Promise<void>;
  peek(limits: readonly Limit[], nowMs: number): Promise<number[]>;
  cached(key: string): number | undefined;
  close(): Promise<void>;
}

/** The store (Redis) cannot be reached. A 503 the pipeline can send as it is. */
export class CounterStoreUnavailableError extends GatewayError {
  constructor(cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(503, `budgets and rate limits cannot be checked right now because Redis does not answer (counter store unavailable: ${why}); retry shortly`, {
      type: 'api_error',
      code: 'counter_store_unavailable',
      retryAfter: 1,
    });
  }
}

export function kindOf(limit: Limit): LimitKind {
  if (limit.kind) return limit.kind;
  if (limit.key.startsWith('requests:')) return 'requests';
  if (limit.key.startsWith('tokens:')) return 'tokens';
  return 'budget';
}

export function limitWindow(limit: Limit, nowMs: number): Window {
  return windowAt(limit.duration, limit.calendarAligned ?? false, nowMs);
}

/** The amount record() adds: budgets keep fractions, counts are whole. 0 means nothing to add. */
export function addAmount(add: UsageAdd): number {
  const a = add.amount;
  if (!Number.isFinite(a) || a <= 0) return 0;
  return kindOf(add.limit) === 'budget' ? a : Math.round(a);
}

/**
 * Last usage seen per limit key, bounded: the oldest entries go first when full. A value whose
 * window has ended reads as 0, since a new window starts empty.
 */
export class UsageCache {
  readonly #entries = new Map<string, { value: number; start: number; end: number }>();
  readonly #max: number;

  constructor(max = 100_000) {
    this.#max = max;
  }

  set(key: string, value: number, w: Window): void {
    const e = this.#entries.get(key);
    if (e) {
      // An answer about an older window (a slow reply overtaken by a newer one) must not win.
      if (w.start < e.start) return;
      e.value = value;
      e.start = w.start;
      e.end = w.end;
      return;
    }
    if (this.#entries.size >= this.#max) this.#evict();
    this.#entries.set(key, { value, start: w.start, end: w.end });
  }

  get(key: string, nowMs = Date.now()): number | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    return nowMs >= e.end ? 0 : e.value;
  }

  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    const now = Date.now();
    for (const [k, e] of this.#entries) if (e.end <= now) this.#entries.delete(k);
    // Still full of live windows: drop the oldest tenth rather than one per insert.
    if (this.#entries.size >= this.#max) {
      let drop = Math.max(1, Math.floor(this.#max / 10));
      for (const k of this.#entries.keys()) {
        this.#entries.delete(k);
        if (--drop === 0) break;
      }
    }
  }
}
