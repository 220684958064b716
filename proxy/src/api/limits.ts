// Budgets and rate limits are records of their own (referenced by `budget_id`, `rate_limit_id`),
// but the reference gateway's bodies also carry them inline: `budget: {max_limit, reset_duration}`
// on a virtual key, team, customer, model config or virtual-key provider config. An inline object
// updates the budget the record already points at, or creates one and points at it; `null` detaches.
import { randomUUID } from 'node:crypto';
import type { GatewayConfig } from '../schema/gateway.ts';
import { BudgetSchema, RateLimitSchema, type Budget, type RateLimit } from '../schema/governance.ts';
import type { FieldError } from '../schema/validate.ts';
import { checkSchema, invalidFields } from './errors.ts';
import { governanceOf, type WriteContext } from './write.ts';
import { without } from './http.ts';

/** Fields of the reference gateway's answers that are never stored. */
export const LIMIT_RESPONSE_ONLY = ['config_hash', 'created_at', 'updated_at'] as const;

const SUB_DAY = /^[0-9]+(s|m|h)$/;

/** Rules of a budget the schema cannot say. */
export function budgetErrors(b: Budget): FieldError[] {
  if (b.calendar_aligned && SUB_DAY.test(b.reset_duration)) {
    return [{ path: 'calendar_aligned', message: `calendar alignment needs a reset_duration in days, weeks, months or years (not '${b.reset_duration}')` }];
  }
  return [];
}

type Limited = Record<string, unknown> & { budget_id?: unknown; rate_limit_id?: unknown };

/** Replaces `record.budget` / `record.rate_limit` (inline objects) by ids of stored records. */
export function applyInlineLimits(record: Limited, draft: GatewayConfig, ctx: WriteContext, bodyPrefix: string, what: string): void {
  inline(record, 'budget', draft, ctx, bodyPrefix, what);
  inline(record, 'rate_limit', draft, ctx, bodyPrefix, what);
}

function inline(record: Limited, field: 'budget' | 'rate_limit', draft: GatewayConfig, ctx: WriteContext, bodyPrefix: string, what: string): void {
  if (!(field in record)) return;
  const value = record[field];
  delete record[field];
  const idField = field === 'budget' ? 'budget_id' : 'rate_limit_id';
  const at = bodyPrefix ? `${bodyPrefix}.${field}` : field;
  if (value === null) {
    delete record[idField];
    return;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidFields(what, [{ path: at, message: 'must be an object (or null to detach)' }]);
  const g = governanceOf(draft);
  const list = (field === 'budget' ? (g.budgets ??= []) : (g.rate_limits ??= [])) as (Budget | RateLimit)[];
  const given = without(value as Record<string, unknown>, LIMIT_RESPONSE_ONLY);
  const currentId = typeof given.id === 'string' ? given.id : typeof record[idField] === 'string' ? (record[idField] as string) : undefined;
  const index = currentId === undefined ? -1 : list.findIndex((x) => x.id === currentId);
  const merged = index >= 0 ? { ...list[index], ...given, id: list[index].id } : { ...given, id: currentId ?? randomUUID() };
  const checked = field === 'budget' ? checkSchema(BudgetSchema, merged, what, at) : checkSchema(RateLimitSchema, merged, what, at);
  if (field === 'budget') {
    const errors = budgetErrors(checked as Budget);
    if (errors.length) throw invalidFields(what, errors.map((e) => ({ path: `${at}.${e.path}`, message: e.message })));
  }
  const position = index >= 0 ? index : list.length;
  list[position] = checked;
  ctx.alias(`governance.${field === 'budget' ? 'budgets' : 'rate_limits'}[${position}]`, at);
  record[idField] = checked.id;
}

/** A record's budget and rate limit as objects, for answers (the reference gateway shows them so). */
export function expandLimits(record: Record<string, unknown>, doc: GatewayConfig): Record<string, unknown> {
  const g = doc.governance ?? {};
  const budget = typeof record.budget_id === 'string' ? g.budgets?.find((b) => b.id === record.budget_id) : undefined;
  const rateLimit = typeof record.rate_limit_id === 'string' ? g.rate_limits?.find((r) => r.id === record.rate_limit_id) : undefined;
  return { ...(budget && { budget }), ...(rateLimit && { rate_limit: rateLimit }) };
}
