// One routing decision per request (spec: States and transitions, "Routing decision"). Pure: the
// capacity lookup and the random source are injected, so a decision is reproducible in tests.
import type { RoutingScope } from '../schema/governance.ts';
import type { CelVars } from './cel.ts';
import type { CompiledFallback, CompiledRule, CompiledRules, CompiledTarget } from './rules.ts';
import type { ComplexityTier } from '../schema/complexity.ts';

export const DEFAULT_MAX_STEPS = 10;

export interface RoutingEntity {
  id: string;
  name: string;
}

export interface RoutingContext {
  model: string;
  /** '' when the request named a bare model. */
  provider: string;
  requestType: string;
  /** Lowercased names. */
  headers: Record<string, string>;
  params: Record<string, string>;
  virtualKey?: RoutingEntity;
  /** The virtual key's team. */
  team?: RoutingEntity;
  /** The team's customer, or the virtual key's own customer. */
  customer?: RoutingEntity;
  /** Undefined when unknown: rules that read complexity_tier do not match. */
  complexityTier?: ComplexityTier;
}

export interface Capacity {
  budget_used: number;
  tokens_used: number;
  request: number;
}

export interface DecideDeps {
  /** Percent used of the most specific limits for this provider/model (0 when none). */
  capacity(provider: string, model: string): Capacity;
  /** Uniform in [0, 1). */
  random(): number;
  /** Rule matches allowed in one chain before it is reported as a cycle (default 10). */
  maxSteps?: number;
}

export interface RoutingTargetChoice {
  provider: string;
  model: string;
  keyId?: string;
}

/** One rule evaluation, in order, for the routing audit trail. */
export interface RoutingStep {
  /** Chain step, 0 for the first pass over the scope chain. */
  step: number;
  scope: RoutingScope;
  scopeId: string | null;
  ruleId?: string;
  ruleName: string;
  expression: string;
  matched: boolean;
  /** Why the rule was not evaluated. */
  skipped?: 'complexity_tier_unknown';
  /** The target chosen when matched. */
  target?: RoutingTargetChoice;
  /** When matched: the chain goes on from this target. */
  chain?: boolean;
}

export interface RoutingDecision {
  /** A rule matched: governance provider selection is skipped. */
  matched: boolean;
  provider: string;
  model: string;
  /** Pinned key; undefined means the key pool load-balances. */
  keyId?: string;
  /** Fallbacks of the last matched rule, `provider/` already given the model. */
  fallbacks: RoutingTargetChoice[];
  trail: RoutingStep[];
  /** Set when a rule chain does not converge (cycle or step limit); the last decision is kept. */
  error?: string;
  /** id and name of the last matched rule. */
  ruleId?: string;
  ruleName?: string;
}

interface Match {
  rule: CompiledRule;
  target: CompiledTarget;
}

export function decide(rules: CompiledRules, ctx: RoutingContext, deps: DecideDeps): RoutingDecision {
  const decision: RoutingDecision = { matched: false, provider: ctx.provider, model: ctx.model, fallbacks: [], trail: [] };
  if (rules.size === 0) return decision;

  // Spec: VK, its team, the team's customer, then global; without a virtual key only global.
  const vk = ctx.virtualKey;
  const chain: Array<readonly CompiledRule[] | undefined> = [
    vk && rules.virtual_key.get(vk.id),
    vk && ctx.team && rules.team.get(ctx.team.id),
    vk && ctx.customer && rules.customer.get(ctx.customer.id),
    rules.global,
  ];
  const vars: CelVars = {
    model: ctx.model,
    provider: ctx.provider,
    request_type: ctx.requestType,
    headers: ctx.headers,
    params: ctx.params,
    virtual_key_id: vk?.id ?? '',
    virtual_key_name: vk?.name ?? '',
    team_id: (vk && ctx.team?.id) || '',
    team_name: (vk && ctx.team?.name) || '',
    customer_id: (vk && ctx.customer?.id) || '',
    customer_name: (vk && ctx.customer?.name) || '',
    budget_used: 0,
    tokens_used: 0,
    request: 0,
    complexity_tier: ctx.complexityTier ?? '',
  };
  const tierKnown = ctx.complexityTier !== undefined;
  const maxSteps = deps.maxSteps ?? DEFAULT_MAX_STEPS;
  // States a chain has been in, to stop a cycle (A → B → A) as soon as it closes.
  let visited: string[] | undefined;

  for (let step = 0; ; step++) {
    const cap = deps.capacity(vars.provider, vars.model);
    vars.budget_used = cap.budget_used;
    vars.tokens_used = cap.tokens_used;
    vars.request = cap.request;

    const m = firstMatch(chain, vars, tierKnown, step, decision.trail, deps.random);
    if (!m) break;

    // The last matched rule wins for every field.
    const provider = m.target.provider ?? vars.provider;
    const model = m.target.model ?? vars.model;
    decision.matched = true;
    decision.provider = provider;
    decision.model = model;
    if (m.target.keyId !== undefined) decision.keyId = m.target.keyId;
    else delete decision.keyId;
    decision.fallbacks = resolveFallbacks(m.rule.fallbacks, vars.model);
    if (m.rule.id !== undefined) decision.ruleId = m.rule.id;
    else delete decision.ruleId;
    decision.ruleName = m.rule.name;

    if (!m.rule.chain) break;
    if (provider === vars.provider && model === vars.model) break; // converged
    const key = stateKey(provider, model);
    visited ??= [stateKey(ctx.provider, ctx.model)];
    if (visited.includes(key)) {
      decision.error = `routing rule chain cycle: ${[...visited, key].map(showState).join(' -> ')}`;
      break;
    }
    if (step + 1 >= maxSteps) {
      decision.error = `routing rule chain did not converge within ${maxSteps} steps (last: ${showState(key)})`;
      break;
    }
    visited.push(key);
    vars.provider = provider;
    vars.model = model;
  }
  return decision;
}

function firstMatch(
  chain: ReadonlyArray<readonly CompiledRule[] | undefined>,
  vars: CelVars,
  tierKnown: boolean,
  step: number,
  trail: RoutingStep[],
  random: () => number,
): Match | undefined {
  for (const rules of chain) {
    if (!rules) continue;
    for (const rule of rules) {
      if (rule.usesComplexityTier && !tierKnown) {
        const s = stepOf(rule, step, false);
        s.skipped = 'complexity_tier_unknown';
        trail.push(s);
        continue;
      }
      if (!rule.expression.evaluate(vars)) {
        trail.push(stepOf(rule, step, false));
        continue;
      }
      const target = pickTarget(rule, random);
      const s = stepOf(rule, step, true);
      s.target = choice(target.provider ?? vars.provider, target.model ?? vars.model, target.keyId);
      s.chain = rule.chain;
      trail.push(s);
      return { rule, target };
    }
  }
  return undefined;
}

function stepOf(rule: CompiledRule, step: number, matched: boolean): RoutingStep {
  const s: RoutingStep = { step, scope: rule.scope, scopeId: rule.scopeId, ruleName: rule.name, expression: rule.expression.source, matched };
  if (rule.id !== undefined) s.ruleId = rule.id;
  return s;
}

function choice(provider: string, model: string, keyId: string | undefined): RoutingTargetChoice {
  return keyId === undefined ? { provider, model } : { provider, model, keyId };
}

/** One target at random by weight; a single target needs no draw. */
export function pickTarget(rule: CompiledRule, random: () => number): CompiledTarget {
  const targets = rule.targets;
  if (targets.length === 1) return targets[0];
  const r = random() * rule.totalWeight;
  for (const t of targets) if (r < t.cumulative) return t;
  return targets[targets.length - 1];
}

function resolveFallbacks(fallbacks: readonly CompiledFallback[], incomingModel: string): RoutingTargetChoice[] {
  const out: RoutingTargetChoice[] = new Array(fallbacks.length);
  for (let i = 0; i < fallbacks.length; i++) {
    const f = fallbacks[i];
    out[i] = choice(f.provider, f.model ?? incomingModel, f.keyId);
  }
  return out;
}

function stateKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

function showState(key: string): string {
  const [p, m] = key.split('\u0000');
  return p ? `${p}/${m}` : m;
}
