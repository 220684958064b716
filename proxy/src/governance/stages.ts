// Governance as pipeline stages, for every route that spends provider keys:
//   identify (before the body is read): the caller's virtual key, 401 when one is required (a
//     caller execute() was given, an async job's submitter, is taken as it is);
//   plan: the targets (routing rules, the key's provider configs, or the request's own model and
//     fallbacks) or, for provider-scoped routes, the key's permissions there (403), and the limits
//     that apply;
//   limits: admitted before the call (429 / 402; 503 when the counters cannot be read; a caller
//     admitted already is not admitted again), and what the answer used charged after it.
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { Stage } from '../pipeline/stage.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Usage } from '../unified/chat.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import { identifyCaller } from './auth.ts';
import { checkCrossSite } from './cross-site.ts';
import { applicableLimits, capacityOf, type AppliedLimit } from './limits.ts';
import { answerCost } from './cost.ts';
import type { ModelSet, ProviderGrant, VirtualKeyRuntime } from '../config/governance-runtime.ts';
import { complexityTier } from './complexity.ts';
import { chooseTargets, logDecision, namedTargets } from './targets.ts';
import type { ComplexityTier } from '../schema/complexity.ts';
import type { CounterStore } from './counters/store.ts';
import type { ModelCatalog } from './catalog.ts';
import type { GuessThrottle } from './guess-throttle.ts';
import type { RoutingDecision } from '../routing/decide.ts';
import type { Target } from '../pipeline/target.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    counters: CounterStore;
    catalog: ModelCatalog;
    /** Failed key and password guesses per client address (shared with /api's logins). */
    guesses?: GuessThrottle;
  }
  interface KnownCaller {
    /** The caller's virtual key (none: an anonymous caller), identify's answer without the headers. */
    readonly principal: VirtualKeyRuntime | undefined;
  }
  // What the governance stages decide; first values in initGovernanceFields.
  interface RequestContext {
    /** The caller's virtual key (identify). */
    vk: VirtualKeyRuntime | undefined;
    /** Provider scope: the keys the caller may use (undefined: any) and the models ('*': any). */
    keyIds: ReadonlySet<string> | undefined;
    models: ModelSet;
    /** The routing rules' decision and audit trail, when the snapshot has rules. */
    routing: RoutingDecision | undefined;
    /** Every limit admitted for the planned target; usage is charged against them after the answer. */
    limits: readonly AppliedLimit[];
  }
}

const NO_LIMITS: readonly AppliedLimit[] = [];

/** The context fields the governance stages own, as every request starts with them. */
export function initGovernanceFields(ctx: RequestContext): void {
  ctx.vk = undefined;
  ctx.keyIds = undefined;
  ctx.models = '*';
  ctx.routing = undefined;
  ctx.limits = NO_LIMITS;
  ctx.costMemo = undefined;
  ctx.settledCost = undefined;
}

const denied = (message: string, code: string) => new GatewayError(403, message, { type: 'permission_error', code, param: null });

/** The key's grant for `provider`; 403 naming the provider when it has none. */
export function grantFor(vk: VirtualKeyRuntime, provider: string): ProviderGrant {
  const grant = vk.grants.find((g) => g.provider === provider);
  if (!grant) throw denied(`provider '${provider}' is not allowed by virtual key '${vk.record.name}'`, 'provider_not_allowed');
  if (grant.keyIds !== '*' && grant.keyIds.size === 0) {
    throw denied(`virtual key '${vk.record.name}' allows no key of provider '${provider}'`, 'provider_not_allowed');
  }
  return grant;
}

/** Headers a key arrives in: a request with one is a key attempt (SDKs send one even when unneeded). */
const KEY_HEADERS = ['x-bf-vk', 'authorization', 'x-api-key', 'x-goog-api-key', 'api-key'];

/**
 * The caller's virtual key. Refused keys count as guesses per client address (the throttle /api's
 * logins use): once an address is locked out, a request presenting a key gets a 429 until it clears.
 */
function identifyThrottled(ctx: RequestContext): VirtualKeyRuntime | undefined {
  // The address only for a key attempt: reading it costs a getpeername() per connection.
  const guesses = ctx.http && KEY_HEADERS.some((h) => ctx.headers[h] !== undefined) ? ctx.services.guesses : undefined;
  const client = guesses && ctx.http?.req.socket?.remoteAddress;
  if (!guesses || client === undefined) return identifyCaller(ctx.snapshot.governance, ctx.headers);
  guesses.checkKey(client);
  try {
    return identifyCaller(ctx.snapshot.governance, ctx.headers);
  } catch (err) {
    if (err instanceof GatewayError && err.status === 401) guesses.fail(client, '', 'virtual_key');
    throw err;
  }
}

const identify: Stage = {
  name: 'identify',
  before(ctx) {
    const vk = ctx.caller ? ctx.caller.principal : identifyThrottled(ctx);
    // Only an HTTP request can come from a browser; a virtual key is what a foreign page lacks.
    if (!vk && ctx.http) checkCrossSite(ctx.headers, ctx.http.req.method, ctx.snapshot.config.client?.allowed_origins);
    ctx.vk = vk;
    if (vk) ctx.access.vk = vk.record.id;
    return undefined;
  },
  // No virtual key: the caller is anonymous (the cross-site check is a header read).
  idle: (ctx) => ctx.vk === undefined,
};

const plan: Stage = {
  name: 'plan',
  before(ctx) {
    const scope = ctx.scope;
    if (scope.kind === 'model' && ctx.snapshot.routing.usesComplexityTier) {
      return complexityTier(ctx.snapshot, scope.body, ctx.services.metrics).then((tier) => {
        planModel(ctx, scope.model, scope.fallbacks, tier);
        return undefined;
      });
    }
    if (scope.kind === 'model') planModel(ctx, scope.model, scope.fallbacks, undefined);
    else if (scope.kind === 'provider') planProvider(ctx, scope.provider.name);
    else if (scope.kind === 'providers') planProviders(ctx, scope.providers);
    return undefined;
  },
  // Neither a routing rule evaluated nor a key's grants applied: the model name was looked up.
  idle: (ctx) => ctx.routing === undefined && ctx.vk === undefined,
};

function planModel(ctx: RequestContext, model: string, fallbacks: readonly string[] | undefined, tier: ComplexityTier | undefined): void {
  const snap = ctx.snapshot;
  const vk = ctx.vk;
  // Nothing to decide (no routing rule, no key's grants): chooseTargets would answer the named
  // model and its fallbacks; taken directly, a plain request builds none of its inputs (about 1 KB).
  const targets = snap.routing.size === 0 && !vk ? namedTargets(snap, model, fallbacks) : chosenTargets(ctx, snap, vk, model, fallbacks, tier);
  ctx.targets = targets;
  const primary = targets[0];
  ctx.limits = applicableLimits(snap.governance, vk, primary.provider.name, primary.model);
}

function chosenTargets(ctx: RequestContext, snap: Snapshot, vk: VirtualKeyRuntime | undefined, model: string, fallbacks: readonly string[] | undefined, tier: ComplexityTier | undefined): Target[] {
  const counters = ctx.services.counters;
  const chosen = chooseTargets(snap, vk, { model, fallbacks, requestType: ctx.requestType, headers: () => ctx.headers, params: () => Object.fromEntries(ctx.query()), complexityTier: tier }, {
    rules: snap.routing,
    capacity: (provider, m) => capacityOf(snap.governance, vk, provider, m, (key) => counters.cached(key)),
    catalog: (p, m) => ctx.services.catalog.lookup(p, m),
  });
  if (snap.routing.size > 0) {
    ctx.routing = chosen.decision;
    logDecision(model, chosen.decision, ctx.requestId);
  }
  return chosen.targets();
}

/** One call to `provider` (any model): the key's permissions there, and its limits. */
function planProvider(ctx: RequestContext, provider: string): void {
  ctx.access.provider = provider;
  const vk = ctx.vk;
  const grant = vk ? grantFor(vk, provider) : undefined;
  ctx.keyIds = grant && grant.keyIds !== '*' ? grant.keyIds : undefined;
  ctx.models = grant?.models ?? '*';
  ctx.limits = applicableLimits(ctx.snapshot.governance, vk, provider, '');
}

/**
 * A model list over `providers`: only those the caller's key allows are asked, and one request is
 * admitted against the limits of each of them (they are all called).
 */
function planProviders(ctx: RequestContext, providers: ProviderRuntime[]): void {
  const vk = ctx.vk;
  const allowed = vk ? providers.filter((p) => vk.grants.some((g) => g.provider === p.name)) : providers;
  ctx.scope = { kind: 'providers', providers: allowed };
  const limits = new Map<string, AppliedLimit>();
  // A key with no provider allowed still passes its own limits: the request was made.
  for (const name of allowed.length ? allowed.map((p) => p.name) : ['']) {
    for (const l of applicableLimits(ctx.snapshot.governance, vk, name, '')) limits.set(l.key, l);
  }
  ctx.limits = [...limits.values()];
}

const limits: Stage = {
  name: 'limits',
  before(ctx) {
    if (ctx.limits.length === 0 || ctx.caller?.admitted) return undefined;
    return admitLimits(ctx, ctx.limits).then(() => undefined);
  },
  // It returned at once: no limit applies, or the caller was admitted already.
  idle: () => true,
  after(ctx) {
    if (ctx.usage) charge(ctx, ctx.usage);
  },
};

/** Admits one request against `limits`: 429 / 402 when one is full, 503 when the counters cannot be read. */
async function admitLimits(ctx: RequestContext, applied: readonly AppliedLimit[]): Promise<void> {
  const verdict = await ctx.services.counters.admit(applied, Date.now());
  if (!verdict.ok) throw limitError(applied[verdict.index], verdict.retryAfterMs);
}

/**
 * Charges what the answer used to the token limits and budgets admitted for the planned target; an
 * answer from another provider or model (a fallback, or a passthrough call naming its model) is
 * charged to its own.
 */
function charge(ctx: RequestContext, usage: Usage): void {
  const rt = ctx.snapshot.governance;
  const scope = ctx.scope;
  let primaryProvider: string;
  let primaryModel: string;
  if (scope.kind === 'model' && ctx.targets.length) {
    primaryProvider = ctx.targets[0].provider.name;
    primaryModel = ctx.targets[0].model;
  } else if (scope.kind === 'provider') {
    primaryProvider = scope.provider.name;
    primaryModel = '';
  } else {
    return;
  }
  const provider = ctx.provider;
  const model = ctx.model ?? '';
  const charged = provider === primaryProvider && model === primaryModel ? ctx.limits : applicableLimits(rt, ctx.vk, provider, model);
  const adds: { limit: AppliedLimit; amount: number }[] = [];
  const tokens = usage.total_tokens || usage.prompt_tokens + usage.completion_tokens;
  let cost: number | undefined;
  for (const limit of charged) {
    if (limit.kind === 'tokens' && tokens > 0) adds.push({ limit, amount: tokens });
    if (limit.kind === 'budget') {
      cost ??= answerCost(ctx) ?? unpriced(provider, model);
      if (cost > 0) adds.push({ limit, amount: cost });
    }
  }
  if (adds.length) {
    // The dashboard's budget notifications (undefined, nothing built, while no dashboard listens).
    const crossed = ctx.services.events?.budgetWatch(adds, ctx.services.counters);
    ctx.services.counters.record(adds, Date.now()).then(crossed, (err: unknown) => log.error('could not record usage against limits', { error: (err as Error).message }));
  }
}

const unpricedModels = new Set<string>();

/** A budget charge of an answer with no known price: 0, said once per model. */
function unpriced(provider: string, model: string): number {
  const id = `${provider}/${model}`;
  if (!unpricedModels.has(id)) {
    unpricedModels.add(id);
    log.warn('no price known for this model: its requests cost 0 against budgets (add providers.<name>.pricing_overrides)', { model: id });
  }
  return 0;
}

export function limitError(limit: AppliedLimit, retryAfterMs: number): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  if (limit.kind === 'budget') {
    // The reset as a date too: "resets in 2592000s" tells a person little about a monthly budget.
    const resetsAt = new Date(Date.now() + retryAfter * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return new GatewayError(402, `budget '${limit.id}' is exhausted (limit $${limit.max} per ${limit.duration}); it resets at ${resetsAt} (in ${retryAfter}s)`, {
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

/** The governance stages of a snapshot: the limits stage only when it has a budget or rate limit. */
export function governanceStages(snapshot: Snapshot): { caller: Stage[]; request: Stage[] } {
  return { caller: [identify], request: snapshot.governance.hasLimits ? [plan, limits] : [plan] };
}
