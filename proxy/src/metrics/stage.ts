// The one place request metrics are recorded: after every request on every key-spending route
// (answered, refused by a stage, or failed), with the provider and model that answered or were last
// tried, the status, tokens and, for streams, the time to the first item.
import type { Stage } from '../pipeline/stage.ts';
import { answerCost } from '../governance/cost.ts';
import type { Metrics } from './metrics.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    metrics: Metrics;
  }
}

export const metricsStage: Stage = {
  name: 'metrics',
  after(ctx) {
    const m = ctx.services.metrics;
    const provider = ctx.provider;
    const model = ctx.model === undefined ? 'none' : m.modelLabel(ctx.model);
    // The access log names the provider and model that answered, or the last one tried.
    if (ctx.snapshot.providers.has(provider)) ctx.access.provider ??= provider;
    if (ctx.model) ctx.access.model ??= ctx.model;
    const seconds = (performance.now() - ctx.started) / 1000;
    const status = String(ctx.status);
    // An agent turn is not a request of its own: its agent request is counted once. Its tokens are
    // counted here, under the model that used them.
    if (!ctx.turnOf) {
      m.requestCount(ctx.operation, provider, model, status).inc();
      m.requestTime(ctx.operation, provider, model, status).observe(seconds);
    }
    if (ctx.firstChunkAt !== undefined) m.firstTokenTime(provider, model).observe((ctx.firstChunkAt - ctx.started) / 1000);
    const u = ctx.usage;
    if (u) {
      if (u.prompt_tokens) m.tokenCount(provider, model, 'input').inc(u.prompt_tokens);
      if (u.completion_tokens) m.tokenCount(provider, model, 'output').inc(u.completion_tokens);
      // Spend, where tokens are counted; the price is computed once per request (the limits and
      // logging stages read the same memo).
      const cost = answerCost(ctx);
      if (cost) {
        const vk = ctx.vk;
        m.costCount(provider, model, m.spenderLabel(vk?.record.id), m.spenderLabel(vk ? (vk.team?.id ?? vk.record.team_id) : undefined)).inc(cost);
      }
    }
  },
};
