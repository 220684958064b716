// The price of a request's answer, computed once per request (on first read, once the answer is
// complete) and read by both the limits stage (budgets) and the logging stage (the record's cost,
// an agent's turn totals).
import type { RequestContext } from '../pipeline/context.ts';
import { costOf, priceOf } from './pricing/pricing.ts';

declare module '../pipeline/context.ts' {
  interface RequestContext {
    /** answerCost's memo: undefined until read, null when the answer has no usage or no known price. */
    costMemo: number | null | undefined;
  }
}

/** USD for the answer's usage at the price of the provider and model that answered; undefined when unknown. */
export function answerCost(ctx: RequestContext): number | undefined {
  if (ctx.costMemo === undefined) ctx.costMemo = priced(ctx) ?? null;
  return ctx.costMemo ?? undefined;
}

/**
 * A price the route knows without token usage (a created container's session): charged to the
 * budgets and logged as the request's cost. `usd` undefined: the answer has no known price.
 */
export function chargeFixedCost(ctx: RequestContext, usd: number | undefined): void {
  ctx.costMemo = usd ?? null;
  // The limits stage charges once there is usage; this answer has none in tokens.
  ctx.usage ??= { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

function priced(ctx: RequestContext): number | undefined {
  const usage = ctx.usage;
  if (!usage) return undefined;
  const price = priceOf(ctx.provider, ctx.model ?? '', ctx.snapshot.governance.pricingOverrides.get(ctx.provider), ctx.requestType);
  if (!price) return undefined;
  return costOf(price, {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_read_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  });
}
