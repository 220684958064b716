// Budget and rate-limit headroom per virtual key and per team, as gauges read at scrape time: the
// served configuration's limits and the counter store's usage in their current windows (Redis when
// replicas share counters, so every replica reports the same numbers). Nothing is done per request.
// Bounded: the first MAX_SPENDERS virtual keys and teams with a limit of their own, in config order.
import { Gauge } from 'prom-client';
import type { Snapshot } from '../config/snapshot.ts';
import { MAX_SPENDERS, type Metrics } from '../metrics/metrics.ts';
import type { CounterStore } from './counters/store.ts';
import { budgetLimit, rateLimits, type AppliedLimit } from './limits.ts';
import { log } from '../log.ts';

/** One scrape's reads serve every gauge of it. */
const FRESH_MS = 500;

export type LimitLevel = 'virtual_key' | 'team';

export interface Headroom {
  level: LimitLevel;
  id: string;
  limit: AppliedLimit;
  used: number;
}

/** The limits attached to virtual keys and teams themselves (not their provider configs), bounded per level. */
export function ownedLimits(snapshot: Snapshot): { level: LimitLevel; id: string; limit: AppliedLimit }[] {
  const g = snapshot.config.governance ?? {};
  const rt = snapshot.governance;
  const out: { level: LimitLevel; id: string; limit: AppliedLimit }[] = [];
  const add = (level: LimitLevel, owners: readonly { id: string; budget_id?: string; rate_limit_id?: string }[]) => {
    let n = 0;
    for (const o of owners) {
      const b = o.budget_id ? rt.budgets.get(o.budget_id) : undefined;
      const r = o.rate_limit_id ? rt.rateLimits.get(o.rate_limit_id) : undefined;
      if (!b && !r) continue;
      if (n++ >= MAX_SPENDERS) break;
      if (b) out.push({ level, id: o.id, limit: budgetLimit(b) });
      if (r) for (const l of rateLimits(r)) out.push({ level, id: o.id, limit: l });
    }
  };
  add('virtual_key', g.virtual_keys ?? []);
  add('team', g.teams ?? []);
  return out;
}

/** Usage of each owned limit in its current window; the store's last seen values when it cannot answer. */
export async function headroom(snapshot: Snapshot, counters: CounterStore, now = Date.now()): Promise<Headroom[]> {
  const owned = ownedLimits(snapshot);
  if (owned.length === 0) return [];
  let used: number[];
  try {
    used = await counters.peek(owned.map((o) => o.limit), now);
  } catch (err) {
    log.debug('limit metrics: the counter store did not answer; last seen usage reported', { error: (err as Error).message });
    used = owned.map((o) => counters.cached(o.limit.key) ?? 0);
  }
  return owned.map((o, i) => ({ ...o, used: used[i] ?? 0 }));
}

const remaining = (h: Headroom): number => Math.max(0, h.limit.max - h.used);
const ratio = (h: Headroom): number => (h.limit.max > 0 ? remaining(h) / h.limit.max : 0);

export function limitMetrics(metrics: Metrics, current: () => Snapshot, counters: CounterStore): void {
  let last: { at: number; rows: Promise<Headroom[]> } | undefined;
  const rows = () => {
    if (!last || Date.now() - last.at > FRESH_MS) last = { at: Date.now(), rows: headroom(current(), counters).catch(() => []) };
    return last.rows;
  };
  const gauge = (name: string, help: string, kinds: 'budget' | 'rate', value: (h: Headroom) => number) => {
    const labelNames: string[] = kinds === 'budget' ? ['level', 'id'] : ['level', 'id', 'unit'];
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [metrics.registry],
      async collect() {
        // A key or limit removed from the configuration leaves no stale series behind.
        this.reset();
        for (const h of await rows()) {
          const isBudget = h.limit.kind === 'budget';
          if (kinds === 'budget' && isBudget) this.labels(h.level, h.id).set(value(h));
          if (kinds === 'rate' && !isBudget) this.labels(h.level, h.id, h.limit.kind).set(value(h));
        }
      },
    });
  };
  gauge('skybridge_budget_remaining_usd', 'Budget left (USD) in the current window, per virtual key or team (level, id) with a budget of its own.', 'budget', remaining);
  gauge('skybridge_budget_remaining_ratio', 'Budget left as a fraction of the budget (0 to 1), per virtual key or team.', 'budget', ratio);
  gauge('skybridge_rate_limit_remaining', 'Rate-limit headroom in the current window, per virtual key or team, by unit (tokens or requests).', 'rate', remaining);
  gauge('skybridge_rate_limit_remaining_ratio', 'Rate-limit headroom as a fraction of the limit (0 to 1), per virtual key or team, by unit.', 'rate', ratio);
}
