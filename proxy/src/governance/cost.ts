// The price of a request's answer, computed once per request (on first read, once the answer is
// complete) and read by both the limits stage (budgets) and the logging stage (the record's cost,
// an agent's turn totals).
import type { RequestContext } from '../pipeline/context.ts';
import { costOf, pagePriceOf, priceOf } from './pricing/pricing.ts';

declare module '../pipeline/context.ts' {
  interface RequestContext {
    /** answerCost's memo: undefined until read, null when the answer has no usage or no known price. */
    costMemo: number | null | undefined;
    /**
     * A price the operation settled itself instead of a token price: a video job that finished
     * during this request (seconds × its per-second price; 0 for a failed job).
     */
    settledCost: number | undefined;
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
  if (ctx.settledCost !== undefined) return ctx.settledCost;
  const usage = ctx.usage;
  if (!usage) return undefined;
  // What the provider says it billed (OpenRouter) is the price: it already includes its routing.
  if (usage.cost !== undefined) return usage.cost;
  const overrides = ctx.snapshot.governance.pricingOverrides.get(ctx.provider);
  // Billed per page (OCR): the pages at the page price, no token price.
  if (usage.pages !== undefined) {
    const perPage = pagePriceOf(ctx.provider, ctx.model ?? '', overrides, ctx.requestType);
    return perPage === undefined ? undefined : perPage * usage.pages;
  }
  const price = priceOf(ctx.provider, ctx.model ?? '', overrides, ctx.requestType);
  if (!price) return undefined;
  return costOf(price, {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_read_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  });
}
