// The governance stage every inference request passes before its first upstream call: identify
// the caller, apply routing rules, choose targets within what the virtual key allows, and admit the
// request against every budget and rate limit that applies. After the answer, usage is charged.
import type { Exchange } from '../http/exchange.ts';
import type { Usage } from '../unified/chat.ts';
import { GatewayError } from '../unified/errors.ts';
import { resolveTargets, type Target } from '../pipeline/target.ts';
import { log } from '../log.ts';
import { identifyCaller } from './auth.ts';
import { selectTargets } from './select.ts';
import { applicableLimits, type AppliedLimit } from './limits.ts';
import { governanceServices } from './services.ts';
import { priceOf, costOf } from './pricing/pricing.ts';
import type { VirtualKeyRuntime } from './runtime.ts';
import { routeRequest } from './route.ts';
import { complexityTier } from './complexity.ts';

export interface Governed {
  targets: Target[];
  vk: VirtualKeyRuntime | undefined;
  /** Charges what the answer used to every budget and token limit that applies. */
  charge(provider: string, model: string, usage: Usage): void;
}

const NO_CHARGE = () => undefined;

export async function governRequest(
  ex: Exchange,
  model: string,
  fallbacks: readonly string[] | undefined,
  requestType: string,
  body?: unknown,
): Promise<Governed> {
  const snap = ex.snapshot;
  const rt = snap.governance;
  const vk = identifyCaller(rt, ex.req.headers);
  // Exchanges built outside the server (tools, tests) may carry no access record.
  if (vk && ex.access) ex.access.vk = vk.record.id;
  const services = governanceServices();
  const tier = snap.routing.usesComplexityTier ? await complexityTier(snap, body) : undefined;
  const routed = routeRequest(ex, vk, model, fallbacks, requestType, tier);
  let targets: Target[];
  if (routed) targets = routed;
  else if (vk) targets = selectTargets(vk, snap, model, fallbacks, (p, m) => services.catalog.lookup(p, m));
  else targets = resolveTargets(snap, model, fallbacks);

  const primary = targets[0];
  const limits = applicableLimits(rt, vk, primary.provider.name, primary.model);
  await admitLimits(limits);
  return { targets, vk, charge: limits.length === 0 ? NO_CHARGE : charger(ex, vk, limits, primary.provider.name, primary.model, requestType) };
}

/** Admits one request against `limits`: 429 / 402 when one is full, 503 when the counters cannot be read. */
export async function admitLimits(limits: readonly AppliedLimit[]): Promise<void> {
  if (limits.length === 0) return;
  const verdict = await governanceServices().counters.admit(limits, Date.now());
  if (!verdict.ok) throw limitError(limits[verdict.index], verdict.retryAfterMs);
}

/**
 * Charges what an answer used to the token limits and budgets among `limits` (those admitted for
 * provider/model); an answer from another provider or model (a fallback) is charged to its own.
 */
export function charger(
  ex: Exchange,
  vk: VirtualKeyRuntime | undefined,
  limits: readonly AppliedLimit[],
  primaryProvider: string,
  primaryModel: string,
  requestType: string,
): Governed['charge'] {
  const rt = ex.snapshot.governance;
  return (provider, servedModel, usage) => {
    const charged = provider === primaryProvider && servedModel === primaryModel ? limits : applicableLimits(rt, vk, provider, servedModel);
    const adds: { limit: AppliedLimit; amount: number }[] = [];
    const tokens = usage.total_tokens || usage.prompt_tokens + usage.completion_tokens;
    let cost: number | undefined;
    for (const limit of charged) {
      if (limit.kind === 'tokens' && tokens > 0) adds.push({ limit, amount: tokens });
      if (limit.kind === 'budget') {
        cost ??= requestCost(rt.pricingOverrides.get(provider), provider, servedModel, usage, requestType);
        if (cost > 0) adds.push({ limit, amount: cost });
      }
    }
    if (adds.length) {
      governanceServices()
        .counters.record(adds, Date.now())
        .catch((err: unknown) => log.error('could not record usage against limits', { error: (err as Error).message }));
    }
  };
}

const unpriced = new Set<string>();

function requestCost(
  overrides: Parameters<typeof priceOf>[2],
  provider: string,
  model: string,
  usage: Usage,
  requestType: string,
): number {
  const price = priceOf(provider, model, overrides, requestType);
  if (!price) {
    const id = `${provider}/${model}`;
    if (!unpriced.has(id)) {
      unpriced.add(id);
      log.warn('no price known for this model: its requests cost 0 against budgets (add providers.<name>.pricing_overrides)', { model: id });
    }
    return 0;
  }
  const details = usage.prompt_tokens_details;
  return costOf(price, {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    cached_read_tokens: details?.cached_tokens ?? 0,
  });
}

export function limitError(limit: AppliedLimit, retryAfterMs: number): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  if (limit.kind === 'budget') {
    return new GatewayError(402, `budget '${limit.id}' is exhausted (limit $${limit.max} per ${limit.duration}); it resets in ${retryAfter}s`, {
      type: 'budget_exceeded',
      code: 'budget_exceeded',
      retryAfter,
    });
  }
  const what = limit.kind === 'tokens' ? `${limit.max} tokens` : `${limit.max} requests`;
  return new GatewayError(429, `rate limit '${limit.id}' reached (${what} per ${limit.duration}); retry in ${retryAfter}s`, {
    type: 'rate_limit_error',
    code: limit.kind === 'tokens' ? 'token_rate_limit_exceeded' : 'request_rate_limit_exceeded',
    retryAfter,
  });
}
