// Small pure helpers shared by the virtual key, team, budget and model pages, and the usage they
// load (answer shapes of /api/governance/*: proxy/src/api/answers.ts).
import { ApiError, get } from '../../lib/api.ts';
import type { BudgetUsage, LimitUser, RateLimitUsage, UsageAnswer } from '../../../../proxy/src/api/answers.ts';

export interface UsageIndex {
  budgets: Map<string, BudgetUsage>;
  rateLimits: Map<string, RateLimitUsage>;
}

export async function loadUsage(): Promise<UsageIndex> {
  const u = await get<UsageAnswer>('/api/governance/usage');
  return { budgets: new Map(u.budgets.map((b) => [b.id, b])), rateLimits: new Map(u.rate_limits.map((r) => [r.id, r])) };
}

/** The gateway's message for one form field: when the error names it (or something inside it). */
export function fieldError(error: unknown, ...params: string[]): string | undefined {
  if (!(error instanceof ApiError) || !error.param) return undefined;
  const p = error.param;
  return params.some((want) => p === want || p.startsWith(`${want}.`) || p.startsWith(`${want}[`)) ? error.message : undefined;
}

/** `a, b , c` → ['a','b','c']. */
export const splitList = (s: string): string[] =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

export const LIMIT_USER_LABEL: Record<LimitUser['kind'], string> = {
  virtual_key: 'Virtual key',
  provider_config: 'Provider config',
  team: 'Team',
  customer: 'Customer',
  model_config: 'Model config',
  provider: 'Provider',
};

/** Hash link to where a limit user is edited. */
export function limitUserHref(u: LimitUser): string | undefined {
  switch (u.kind) {
    case 'virtual_key':
    case 'provider_config':
      return `#/virtual-keys/${encodeURIComponent(u.id)}`;
    case 'team':
      return `#/teams/${encodeURIComponent(u.id)}`;
    case 'customer':
      return `#/teams/customer/${encodeURIComponent(u.id)}`;
    case 'model_config':
      return `#/models/${encodeURIComponent(u.id)}`;
    case 'provider':
      return `#/providers/${encodeURIComponent(u.id)}`;
  }
}
