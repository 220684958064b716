// A resource's own budget and rate limit written inline (`spec.budget`, `spec.rateLimit`), rendered
// as governance budget and rate limit `<prefix>-<name>` that the resource then names by id. Shared by
// every kind that carries its own limits (VirtualKey, Team, Customer), checked with the proxy's schemas.
import { BudgetSchema, RateLimitSchema, validator, type FieldError } from '../../../proxy/src/contract.ts';
import type { Fragment } from './kinds.ts';

const checkBudget = validator(BudgetSchema);
const checkRateLimit = validator(RateLimitSchema);

export interface InlineLimits {
  fragments: Fragment[];
  /** `budget_id` / `rate_limit_id` to set on the resource for the inline ones. */
  ids: { budget_id?: string; rate_limit_id?: string };
  errors: FieldError[];
}

/**
 * @param spec   the CR spec (its `budget`, `rateLimit`, `budget_id`, `rate_limit_id`)
 * @param limitId the id the inline limits are rendered under (`vk-checkout`, `team-payments`)
 * @param whose  in messages: "the key's", "the team's"
 */
export function inlineLimits(spec: Record<string, unknown>, limitId: string, whose: string): InlineLimits {
  const { budget, rateLimit } = spec;
  const out: InlineLimits = { fragments: [], ids: {}, errors: [] };
  if (budget !== undefined) {
    if (spec.budget_id !== undefined) out.errors.push({ path: 'budget_id', message: `cannot be combined with spec.budget (the inline budget is ${whose} budget)` });
    const b = isObject(budget) ? { ...budget, id: limitId } : budget;
    const checked = checkBudget(b);
    if (Array.isArray(checked)) out.errors.push(...prefixed('budget', checked));
    else out.fragments.push({ section: 'budgets', id: limitId, value: b as Record<string, unknown>, specPath: 'budget' });
    out.ids.budget_id = limitId;
  }
  if (rateLimit !== undefined) {
    if (spec.rate_limit_id !== undefined) out.errors.push({ path: 'rate_limit_id', message: `cannot be combined with spec.rateLimit (the inline rate limit is ${whose})` });
    const r = isObject(rateLimit) ? { ...rateLimit, id: limitId } : rateLimit;
    const checked = checkRateLimit(r);
    if (Array.isArray(checked)) out.errors.push(...prefixed('rateLimit', checked));
    else out.fragments.push({ section: 'rate_limits', id: limitId, value: r as Record<string, unknown>, specPath: 'rateLimit' });
    out.ids.rate_limit_id = limitId;
  }
  return out;
}

const prefixed = (prefix: string, errors: FieldError[]): FieldError[] =>
  errors.map((e) => ({ path: e.path === '(root)' ? prefix : `${prefix}.${e.path}`, message: e.message }));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
