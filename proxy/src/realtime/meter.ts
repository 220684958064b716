// What a realtime session's turns cost, charged while the session runs: each `response.done` (or
// Gemini's usageMetadata at a turn's end) is priced and added to the token limits and budgets the
// session was admitted against, then the budgets are read back so a session whose budget is spent
// ends before its next turn. The session's context carries the sums (its one log record), and
// never a `usage` of its own, so the limits stage does not charge the session a second time.
import type { RequestContext } from '../pipeline/context.ts';
import { TurnTotals } from '../pipeline/turns.ts';
import type { Usage } from '../unified/chat.ts';
import { costOf, priceOf } from '../governance/pricing/pricing.ts';
import { applicableLimits, type AppliedLimit } from '../governance/limits.ts';
import { log } from '../log.ts';

/** USD for one turn's usage at the answering provider and model's price; undefined when unknown. */
export function turnCost(ctx: RequestContext, usage: Usage): number | undefined {
  const overrides = ctx.snapshot.governance.pricingOverrides.get(ctx.provider);
  const price = priceOf(ctx.provider, ctx.model ?? '', overrides, 'realtime');
  if (!price) return undefined;
  return costOf(price, { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, cached_read_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 });
}

/** The limits a turn is charged to: those admitted for the target that answers. */
function chargedLimits(ctx: RequestContext): readonly AppliedLimit[] {
  const primary = ctx.targets[0];
  if (primary && primary.provider.name === ctx.provider && primary.model === ctx.model) return ctx.limits;
  return applicableLimits(ctx.snapshot.governance, ctx.vk, ctx.provider, ctx.model ?? '');
}

/**
 * Charges one turn and sums it on the context. Answers the first budget the session has spent (so
 * the session can say which), or undefined while every budget has room.
 */
export async function chargeTurn(ctx: RequestContext, usage: Usage): Promise<AppliedLimit | undefined> {
  const cost = turnCost(ctx, usage);
  ctx.turns ??= new TurnTotals();
  ctx.turns.add(usage, cost);
  const limits = chargedLimits(ctx);
  if (limits.length === 0) return undefined;
  const tokens = usage.total_tokens || usage.prompt_tokens + usage.completion_tokens;
  const adds: { limit: AppliedLimit; amount: number }[] = [];
  for (const limit of limits) {
    if (limit.kind === 'tokens' && tokens > 0) adds.push({ limit, amount: tokens });
    if (limit.kind === 'budget' && cost !== undefined && cost > 0) adds.push({ limit, amount: cost });
  }
  const counters = ctx.services.counters;
  const now = Date.now();
  try {
    if (adds.length) {
      const crossed = ctx.services.events?.budgetWatch(adds, counters);
      await counters.record(adds, now);
      crossed?.();
    }
    const watched = limits.filter((l) => l.kind === 'budget' || l.kind === 'tokens');
    if (watched.length === 0) return undefined;
    const used = await counters.peek(watched, now);
    const spent = watched.findIndex((l, i) => (used[i] ?? 0) >= l.max);
    return spent < 0 ? undefined : watched[spent];
  } catch (err) {
    // The counters cannot be read (Redis away): the session goes on, as a request would be charged later.
    log.error('could not record a realtime turn against limits', { error: (err as Error).message });
    return undefined;
  }
}
