// GET /api/governance/usage: every budget and rate limit with its usage in the current window (read
// from the same counter store the pipeline admits against) and the records that use it, so the
// dashboard can draw usage bars against limits. The stored records carry no usage (it changes with
// every request and lives in the counters), hence a read of its own.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { Budget, RateLimit } from '../schema/governance.ts';
import { budgetLimit, rateLimits, type AppliedLimit } from '../governance/limits.ts';
import { limitWindow, type CounterStore } from '../governance/counters/store.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { reply } from './http.ts';
import type { BudgetUsage, LimitUser, RateLimitUsage, UsageAnswer } from './answers.ts';

type Field = 'budget_id' | 'rate_limit_id';
type Refs = { budget_id?: string; rate_limit_id?: string };

/** Records whose `field` names `id`. */
export function limitUsers(doc: GatewayConfig, field: Field, id: string): LimitUser[] {
  const g = doc.governance ?? {};
  const out: LimitUser[] = [];
  const uses = (x: Refs) => x[field] === id;
  for (const vk of g.virtual_keys ?? []) {
    if (uses(vk)) out.push({ kind: 'virtual_key', id: vk.id, name: vk.name });
    for (const pc of vk.provider_configs ?? []) if (uses(pc)) out.push({ kind: 'provider_config', id: vk.id, name: `${vk.name} / ${pc.provider}` });
  }
  for (const t of g.teams ?? []) if (uses(t)) out.push({ kind: 'team', id: t.id, name: t.name });
  for (const c of g.customers ?? []) if (uses(c)) out.push({ kind: 'customer', id: c.id, name: c.name });
  for (const mc of g.model_configs ?? []) if (uses(mc)) out.push({ kind: 'model_config', id: mc.id, name: mc.provider ? `${mc.provider}/${mc.model_name}` : mc.model_name });
  for (const p of g.providers ?? []) if (uses(p)) out.push({ kind: 'provider', id: p.name, name: p.name });
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function usageRouter(service: ConfigService, counters: CounterStore): Router {
  const router = Router();
  router
    .route('/')
    .get(async (_req: Request, res: Response) => {
      const doc = service.current().config;
      const budgets: Budget[] = doc.governance?.budgets ?? [];
      const limits: RateLimit[] = doc.governance?.rate_limits ?? [];
      const now = Date.now();
      const budgetLimits = budgets.map(budgetLimit);
      const rateLimitSets = limits.map(rateLimits);
      const all: AppliedLimit[] = [...budgetLimits, ...rateLimitSets.flat()];
      // One read for all (a single MGET on Redis); 503 when the store does not answer.
      const usage = all.length ? await counters.peek(all, now) : [];
      const byKey = new Map(all.map((l, i) => [l.key, usage[i]]));
      const window = (l: AppliedLimit) => limitWindow(l, now);
      const answer: UsageAnswer = {
        budgets: budgets.map((b, i): BudgetUsage => {
          const w = window(budgetLimits[i]);
          return { ...b, current_usage: byKey.get(budgetLimits[i].key) ?? 0, last_reset: iso(w.start), resets_at: iso(w.end), used_by: limitUsers(doc, 'budget_id', b.id) };
        }),
        rate_limits: limits.map((r, i) => {
          const view: RateLimitUsage = { ...r, used_by: limitUsers(doc, 'rate_limit_id', r.id) };
          for (const l of rateLimitSets[i]) {
            const prefix = l.kind === 'tokens' ? 'token' : 'request';
            const w = window(l);
            Object.assign(view, { [`${prefix}_current_usage`]: byKey.get(l.key) ?? 0, [`${prefix}_last_reset`]: iso(w.start), [`${prefix}_resets_at`]: iso(w.end) });
          }
          return view;
        }),
      };
      reply(res, 200, answer);
    })
    .all(methodNotAllowed);
  return router;
}
