// Shared fixtures of the routing unit tests.
import type { RoutingRule } from '../../proxy/src/schema/governance.ts';
import type { CelVars } from '../../proxy/src/routing/cel.ts';
import type { Capacity, DecideDeps, RoutingContext } from '../../proxy/src/routing/decide.ts';
import { compileRules, type CompiledRules } from '../../proxy/src/routing/rules.ts';

/** Deterministic uniform [0, 1) source (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random source that returns the given values in turn (then fails loudly). */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => {
    if (i >= values.length) throw new Error('random() called more often than the test expected');
    return values[i++];
  };
}

export const NO_CAPACITY: Capacity = { budget_used: 0, tokens_used: 0, request: 0 };

export function deps(overrides: Partial<DecideDeps> = {}): DecideDeps {
  return { capacity: () => NO_CAPACITY, random: sequence(), ...overrides };
}

export function ctx(overrides: Partial<RoutingContext> = {}): RoutingContext {
  return { model: 'gpt-4o', provider: 'openai', requestType: 'chat_completion', headers: {}, params: {}, ...overrides };
}

export function vars(overrides: Partial<CelVars> = {}): CelVars {
  return {
    model: 'gpt-4o',
    provider: 'openai',
    request_type: 'chat_completion',
    headers: {},
    params: {},
    virtual_key_id: '',
    virtual_key_name: '',
    team_id: '',
    team_name: '',
    customer_id: '',
    customer_name: '',
    budget_used: 0,
    tokens_used: 0,
    request: 0,
    complexity_tier: '',
    ...overrides,
  };
}

/** A global rule that sends everything matching `cel` to provider/model. */
export function rule(name: string, cel: string, target: string, extra: Partial<RoutingRule> = {}): RoutingRule {
  const [provider, model] = target.split('/');
  return {
    name,
    cel_expression: cel,
    targets: [{ ...(provider ? { provider } : {}), ...(model ? { model } : {}), weight: 1 }],
    ...extra,
  };
}

/** Compiles and fails the test on any warning unless the caller collects them. */
export function compile(rules: RoutingRule[], warnings?: string[]): CompiledRules {
  return compileRules(rules, {
    warn: (m) => {
      if (!warnings) throw new Error(`unexpected warning: ${m}`);
      warnings.push(m);
    },
  });
}
