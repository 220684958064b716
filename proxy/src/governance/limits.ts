// Which budgets and rate limits apply to a request, and how full they are (the routing rules'
// capacity variables). Every level that applies must pass: virtual key, its provider config, team,
// customer, provider, and model configs.
import type { Budget, RateLimit } from '../schema/governance.ts';
import type { GovernanceRuntime, VirtualKeyRuntime } from '../config/governance-runtime.ts';
import type { Limit, LimitKind } from './counters/store.ts';

export interface AppliedLimit extends Limit {
  kind: LimitKind;
  /** The budget or rate-limit id, for error messages. */
  id: string;
}

export function budgetLimit(b: Budget): AppliedLimit {
  return { kind: 'budget', id: b.id, key: `budget:${b.id}`, max: b.max_limit, duration: b.reset_duration, calendarAligned: b.calendar_aligned ?? false };
}

export function rateLimits(r: RateLimit): AppliedLimit[] {
  const out: AppliedLimit[] = [];
  if (r.token_max_limit !== undefined && r.token_reset_duration) {
    out.push({ kind: 'tokens', id: r.id, key: `tokens:${r.id}`, max: r.token_max_limit, duration: r.token_reset_duration });
  }
  if (r.request_max_limit !== undefined && r.request_reset_duration) {
    out.push({ kind: 'requests', id: r.id, key: `requests:${r.id}`, max: r.request_max_limit, duration: r.request_reset_duration });
  }
  return out;
}

interface LevelRefs {
  budgetId?: string;
  rateLimitId?: string;
}

/** Levels most specific first, as the capacity variables read them. */
function capacityLevels(rt: GovernanceRuntime, vk: VirtualKeyRuntime | undefined, provider: string, model: string): LevelRefs[] {
  const levels: LevelRefs[] = [];
  for (const mc of rt.modelConfigs) if (mc.model_name === model && mc.provider === provider) levels.push({ budgetId: mc.budget_id, rateLimitId: mc.rate_limit_id });
  for (const mc of rt.modelConfigs) if (mc.model_name === model && mc.provider === undefined) levels.push({ budgetId: mc.budget_id, rateLimitId: mc.rate_limit_id });
  const p = rt.providerLimits.get(provider);
  if (p) levels.push({ budgetId: p.budget_id, rateLimitId: p.rate_limit_id });
  // A bare model has no provider yet: each of the key's provider configs could serve it.
  for (const g of vk?.grants ?? []) if (g.provider === provider || provider === '') levels.push({ budgetId: g.budgetId, rateLimitId: g.rateLimitId });
  return levels;
}

/** Per snapshot (the runtime is rebuilt with it): the limits of each key/provider/model seen. */
const memo = new WeakMap<GovernanceRuntime, Map<string, readonly AppliedLimit[]>>();
const MEMO_MAX = 10_000;

/** Every limit that a request to provider/model with this key must pass, deduplicated by key. */
export function applicableLimits(rt: GovernanceRuntime, vk: VirtualKeyRuntime | undefined, provider: string, model: string): readonly AppliedLimit[] {
  if (!rt.hasLimits) return [];
  let byKey = memo.get(rt);
  if (!byKey) memo.set(rt, (byKey = new Map()));
  const id = `${vk?.record.id ?? ''}\u0000${provider}\u0000${model}`;
  let limits = byKey.get(id);
  if (!limits) {
    // Model names come from requests: bound the memo.
    if (byKey.size >= MEMO_MAX) byKey.clear();
    byKey.set(id, (limits = collectLimits(rt, vk, provider, model)));
  }
  return limits;
}

function collectLimits(rt: GovernanceRuntime, vk: VirtualKeyRuntime | undefined, provider: string, model: string): AppliedLimit[] {
  const levels = capacityLevels(rt, vk, provider, model);
  if (vk) {
    levels.push({ budgetId: vk.record.budget_id, rateLimitId: vk.record.rate_limit_id });
    if (vk.team) levels.push({ budgetId: vk.team.budget_id, rateLimitId: vk.team.rate_limit_id });
    if (vk.customer) levels.push({ budgetId: vk.customer.budget_id, rateLimitId: vk.customer.rate_limit_id });
  }
  const out = new Map<string, AppliedLimit>();
  for (const l of levels) {
    const b = l.budgetId ? rt.budgets.get(l.budgetId) : undefined;
    if (b) out.set(`budget:${b.id}`, budgetLimit(b));
    const r = l.rateLimitId ? rt.rateLimits.get(l.rateLimitId) : undefined;
    if (r) for (const lim of rateLimits(r)) out.set(lim.key, lim);
  }
  return [...out.values()];
}

export interface Capacity {
  budget_used: number;
  tokens_used: number;
  request: number;
}

/**
 * Percent used of the limits configured for provider/model (0 with none; over 100 = exhausted).
 * When several levels apply the highest percentage wins. Reads the last usage the counter store saw.
 */
export function capacityOf(
  rt: GovernanceRuntime,
  vk: VirtualKeyRuntime | undefined,
  provider: string,
  model: string,
  usage: (key: string) => number | undefined,
): Capacity {
  const cap: Capacity = { budget_used: 0, tokens_used: 0, request: 0 };
  if (!rt.hasLimits) return cap;
  const field: Record<LimitKind, keyof Capacity> = { budget: 'budget_used', tokens: 'tokens_used', requests: 'request' };
  for (const l of capacityLevels(rt, vk, provider, model)) {
    const limits: AppliedLimit[] = [];
    const b = l.budgetId ? rt.budgets.get(l.budgetId) : undefined;
    if (b) limits.push(budgetLimit(b));
    const r = l.rateLimitId ? rt.rateLimits.get(l.rateLimitId) : undefined;
    if (r) limits.push(...rateLimits(r));
    for (const lim of limits) {
      const pct = lim.max > 0 ? ((usage(lim.key) ?? 0) / lim.max) * 100 : 100;
      const f = field[lim.kind];
      if (pct > cap[f]) cap[f] = pct;
    }
  }
  return cap;
}
