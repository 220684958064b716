// What the turns of one agent request used, summed on the request's own context. A turn is a full
// request through the pipeline (identified, admitted, charged to budgets), but not a request of its
// own to the people counting: it counts in no request metric, and its log record is a child of the
// agent request's (parent_request_id), left out of every total. Its tokens and cost land here too,
// and the agent request's one counted record carries the sums.
import type { Usage } from '../unified/chat.ts';

export class TurnTotals {
  turns = 0;
  promptTokens = 0;
  completionTokens = 0;
  totalTokens = 0;
  cachedTokens = 0;
  cost = 0;
  /** A turn that used tokens had no known price: the sum is not the whole cost. */
  unpriced = false;

  add(usage: Usage | undefined, cost: number | undefined): void {
    this.turns++;
    if (!usage) return;
    this.promptTokens += usage.prompt_tokens;
    this.completionTokens += usage.completion_tokens;
    this.totalTokens += usage.total_tokens || usage.prompt_tokens + usage.completion_tokens;
    this.cachedTokens += usage.prompt_tokens_details?.cached_tokens ?? 0;
    if (cost === undefined) this.unpriced = true;
    else this.cost += cost;
  }
}
