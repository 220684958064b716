// Shapes of the governance answers (/api/governance/*) the pages read, and small pure helpers
// shared by the virtual key, team, budget and model pages.
import { ApiError, get } from '../../lib/api.ts';

export interface Budget {
  id: string;
  max_limit: number;
  reset_duration: string;
  calendar_aligned?: boolean;
}

export interface RateLimit {
  id: string;
  token_max_limit?: number;
  token_reset_duration?: string;
  request_max_limit?: number;
  request_reset_duration?: string;
}

/** Who uses a budget or rate limit (GET /api/governance/usage). */
export interface LimitUser {
  kind: 'virtual_key' | 'provider_config' | 'team' | 'customer' | 'model_config' | 'provider';
  id: string;
  name: string;
}

export interface BudgetUsage extends Budget {
  current_usage: number;
  last_reset: string;
  resets_at: string;
  used_by: LimitUser[];
}

export interface RateLimitUsage extends RateLimit {
  token_current_usage?: number;
  token_resets_at?: string;
  request_current_usage?: number;
  request_resets_at?: string;
  used_by: LimitUser[];
}

export interface UsageAnswer {
  budgets: BudgetUsage[];
  rate_limits: RateLimitUsage[];
}

export interface UsageIndex {
  budgets: Map<string, BudgetUsage>;
  rateLimits: Map<string, RateLimitUsage>;
}

export async function loadUsage(): Promise<UsageIndex> {
  const u = await get<UsageAnswer>('/api/governance/usage');
  return { budgets: new Map(u.budgets.map((b) => [b.id, b])), rateLimits: new Map(u.rate_limits.map((r) => [r.id, r])) };
}

/** A record that can carry a budget and a rate limit (answers expand them inline). */
export interface Limited {
  budget_id?: string;
  rate_limit_id?: string;
  budget?: Budget;
  rate_limit?: RateLimit;
}

export interface ProviderConfig extends Limited {
  provider: string;
  allowed_models?: string[];
  key_ids?: string[];
  weight?: number | null;
}

export interface VirtualKey extends Limited {
  id: string;
  name: string;
  description?: string;
  value: string;
  is_active?: boolean;
  team_id?: string;
  customer_id?: string;
  provider_configs?: ProviderConfig[];
  managed_by?: string;
  source?: string;
}

export interface Team extends Limited {
  id: string;
  name: string;
  customer_id?: string;
  managed_by?: string;
  source?: string;
}

export interface Customer extends Limited {
  id: string;
  name: string;
  managed_by?: string;
  source?: string;
}

export interface ModelConfig extends Limited {
  id: string;
  model_name: string;
  provider?: string;
  managed_by?: string;
  source?: string;
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
