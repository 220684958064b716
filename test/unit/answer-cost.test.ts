// One cost per request: the limits stage (budgets) and the logging stage (the record) read the same
// value, computed on the first read once the answer is complete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { answerCost } from '../../proxy/src/governance/cost.ts';
import { createServices } from '../../proxy/src/services.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { RequestContext } from '../../proxy/src/pipeline/context.ts';

const snapshot = compileSnapshot(checkConfig({
  providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }], pricing_overrides: [{ model_pattern: 'priced', match_type: 'exact', input_cost_per_token: 0.001, output_cost_per_token: 0.002 }] } },
}, 'test').config);
const services = createServices({ metrics: new Metrics({ processMetrics: false }) });

function answered(model: string | undefined) {
  const ctx = new RequestContext({ services, snapshot, operation: 'chat' });
  ctx.provider = 'openai';
  ctx.model = model;
  ctx.usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  return ctx;
}

test('the cost is computed once, on first read, and every later read gets that value', () => {
  const ctx = answered('priced');
  assert.equal(ctx.costMemo, undefined);
  const cost = answerCost(ctx);
  assert.ok(cost !== undefined && Math.abs(cost - (10 * 0.001 + 5 * 0.002)) < 1e-12);
  ctx.usage = { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 };
  assert.equal(answerCost(ctx), cost);
});

test('no usage or no known price: undefined, remembered as well', () => {
  const unpriced = answered('no-such-model-anywhere');
  assert.equal(answerCost(unpriced), undefined);
  assert.equal(unpriced.costMemo, null);
  const none = answered('priced');
  none.usage = undefined;
  assert.equal(answerCost(none), undefined);
});
