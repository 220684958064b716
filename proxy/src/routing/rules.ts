// Routing rules as stored (config.json or the management API) → an immutable, per-scope index
// that decide.ts walks per request. Everything that can be done once is done here: CEL compiled,
// rules sorted, weights accumulated, fallbacks parsed and their key names resolved.
import { createHash } from 'node:crypto';
import type { RoutingRule, RoutingScope } from '../schema/governance.ts';
import { RoutingRuleSchema } from '../schema/governance.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { CelCompileError, compileCel, type CompiledExpression } from './cel.ts';

/** Weights of one rule must sum to 1 within this tolerance. */
export const WEIGHT_TOLERANCE = 1e-6;
export const CEL_COMPILE_ERROR = 'Failed to compile rule: invalid CEL syntax';
/** An expression that parses but does not type-check (the spec: a type mismatch skips the rule with a warning). */
export const CEL_TYPE_ERROR = 'Failed to compile rule: CEL type check failed';

/** What a rule whose expression does not compile is reported as: a syntax error or a type error, and why. */
export function celCompileMessage(err: unknown): string {
  if (!(err instanceof CelCompileError)) return `${CEL_COMPILE_ERROR}: ${String(err)}`;
  return `${err.kind === 'type' ? CEL_TYPE_ERROR : CEL_COMPILE_ERROR}: ${err.detail}`;
}

/**
 * A routing rule's id: its own, or (a rule written in config.json without one) a stable id derived
 * from scope and name, so every rule can be read, updated and deleted by id.
 */
export function ruleId(rule: { id?: string; scope?: string; scope_id?: string | null; name: string }): string {
  if (rule.id) return rule.id;
  const h = createHash('sha256').update(`routing_rule\u0000${rule.scope ?? 'global'}\u0000${rule.scope_id ?? ''}\u0000${rule.name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface CompiledTarget {
  /** Undefined keeps the incoming provider. */
  readonly provider?: string;
  /** Undefined keeps the incoming model. */
  readonly model?: string;
  readonly keyId?: string;
  readonly weight: number;
  /** Running sum of weights up to and including this target. */
  readonly cumulative: number;
}

export interface CompiledFallback {
  readonly provider: string;
  /** Undefined keeps the incoming model (`"provider/"`, or an object without `model`). */
  readonly model?: string;
  readonly keyId?: string;
}

export interface CompiledRule {
  readonly id?: string;
  readonly name: string;
  readonly scope: RoutingScope;
  /** null for global. */
  readonly scopeId: string | null;
  readonly priority: number;
  readonly chain: boolean;
  readonly expression: CompiledExpression;
  /** The rule cannot match while complexity_tier is unknown. */
  readonly usesComplexityTier: boolean;
  readonly targets: readonly CompiledTarget[];
  readonly totalWeight: number;
  readonly fallbacks: readonly CompiledFallback[];
}

export interface CompiledRules {
  readonly global: readonly CompiledRule[];
  readonly customer: ReadonlyMap<string, readonly CompiledRule[]>;
  readonly team: ReadonlyMap<string, readonly CompiledRule[]>;
  readonly virtual_key: ReadonlyMap<string, readonly CompiledRule[]>;
  /** Number of compiled (enabled, valid) rules. */
  readonly size: number;
  /** Some rule reads complexity_tier: only then is the request worth classifying (an embedding call). */
  readonly usesComplexityTier: boolean;
  /** Enabled rules that could not compile and are skipped (spec), with why: /api and the dashboard show them. */
  readonly skipped: readonly SkippedRule[];
}

export interface SkippedRule {
  id: string;
  name: string;
  error: string;
}

export interface CompileRulesOptions {
  warn(msg: string): void;
  /** Key id of a provider's key by its name (config.json `provider_key_name`); undefined if absent. */
  resolveKeyName?(provider: string, keyName: string): string | undefined;
}

export const EMPTY_RULES: CompiledRules = Object.freeze({
  skipped: [],
  global: [],
  customer: new Map(),
  team: new Map(),
  virtual_key: new Map(),
  size: 0,
  usesComplexityTier: false,
});

export function compileRules(rules: readonly RoutingRule[], opts: CompileRulesOptions): CompiledRules {
  const compiled: CompiledRule[] = [];
  const skipped: SkippedRule[] = [];
  for (const rule of rules) {
    // The reference defaults `enabled` to true; only an explicit false disables a rule.
    if (rule.enabled === false) continue;
    const c = compileRule(rule, opts);
    if (typeof c === 'string') skipped.push({ id: ruleId(rule), name: rule.name, error: c });
    else compiled.push(c);
  }
  // Stable: ascending priority, then name, then the order given.
  const order = compiled.map((r, i) => ({ r, i }));
  order.sort((a, b) => a.r.priority - b.r.priority || cmp(a.r.name, b.r.name) || a.i - b.i);

  const global: CompiledRule[] = [];
  const byScope = { customer: new Map<string, CompiledRule[]>(), team: new Map<string, CompiledRule[]>(), virtual_key: new Map<string, CompiledRule[]>() };
  const seen = new Set<string>();
  for (const { r } of order) {
    const where = `${r.scope}:${r.scopeId ?? ''}`;
    if (seen.has(`${where}\u0000${r.name}`)) opts.warn(`routing rule "${r.name}": name is not unique in scope ${describeScope(r.scope, r.scopeId)}`);
    seen.add(`${where}\u0000${r.name}`);
    if (r.scope === 'global') {
      global.push(r);
      continue;
    }
    const map = byScope[r.scope];
    const list = map.get(r.scopeId as string);
    if (list) list.push(r);
    else map.set(r.scopeId as string, [r]);
  }
  return { global, ...byScope, size: compiled.length, usesComplexityTier: compiled.some((r) => r.usesComplexityTier), skipped };
}

/** The compiled rule, or why it is skipped. */
function compileRule(rule: RoutingRule, opts: CompileRulesOptions): CompiledRule | string {
  const label = `routing rule "${rule.name}"`;
  const problems = structuralErrors(rule);
  if (problems.length > 0) {
    const error = problems.map((p) => `${p.path} ${p.message}`).join('; ');
    opts.warn(`${label} skipped: ${error}`);
    return error;
  }
  let expression: CompiledExpression;
  try {
    expression = compileCel(rule.cel_expression ?? '', {
      onEvalError: (msg) => opts.warn(`${label} [${rule.cel_expression ?? ''}]: ${msg}; the rule does not match`),
    });
  } catch (err) {
    const message = celCompileMessage(err);
    opts.warn(`${label} skipped: ${message}`);
    return message;
  }

  let sum = 0;
  const targets: CompiledTarget[] = rule.targets.map((t) => {
    sum += t.weight;
    return { provider: t.provider, model: t.model, keyId: t.key_id, weight: t.weight, cumulative: sum };
  });

  const fallbacks: CompiledFallback[] = [];
  for (const [i, f] of (rule.fallbacks ?? []).entries()) {
    if (typeof f === 'string') {
      fallbacks.push(parseFallbackString(f));
      continue;
    }
    let keyId = f.key_id;
    if (keyId === undefined && f.provider_key_name !== undefined) {
      keyId = opts.resolveKeyName?.(f.provider, f.provider_key_name);
      if (keyId === undefined) {
        // A pin to a key that does not exist would be skipped at request time anyway (spec:
        // "skipped and the chain continues"); dropping it here says so once, at load.
        opts.warn(`${label}: fallbacks[${i}] skipped: provider ${f.provider} has no key named "${f.provider_key_name}"`);
        continue;
      }
    }
    fallbacks.push({ provider: f.provider, model: f.model, keyId });
  }

  const scope = rule.scope ?? 'global';
  return {
    id: rule.id,
    name: rule.name,
    scope,
    scopeId: scope === 'global' ? null : (rule.scope_id as string),
    priority: rule.priority ?? 0,
    chain: rule.chain_rule === true,
    expression,
    usesComplexityTier: expression.references.has('complexity_tier'),
    targets,
    totalWeight: sum,
    fallbacks,
  };
}

/** `"provider/model"`; `"provider/"` keeps the incoming model. The model may contain slashes. */
export function parseFallbackString(s: string): CompiledFallback {
  const slash = s.indexOf('/');
  if (slash < 0) return { provider: s };
  const model = s.slice(slash + 1);
  return { provider: s.slice(0, slash), model: model === '' ? undefined : model };
}

const checkRule = validator(RoutingRuleSchema);

export interface ValidateRuleOptions {
  /** Rules already stored: the name must be unique within the rule's scope (same id excepted). */
  existing?: readonly RoutingRule[];
}

/**
 * Everything the management API must reject before storing a rule (after merging a PUT's subset
 * onto the stored rule): the schema, weights summing to 1, scope_id presence, key pins that
 * name no provider, CEL that does not compile, and a name already used in the scope.
 */
export function validateRuleForWrite(rule: unknown, opts: ValidateRuleOptions = {}): FieldError[] {
  const checked = checkRule(rule);
  if (Array.isArray(checked)) {
    const errors = [...checked];
    const cel = (rule as { cel_expression?: unknown } | null)?.cel_expression;
    if (typeof cel === 'string') errors.push(...celErrors(cel));
    return errors;
  }
  const errors = [...structuralErrors(checked), ...celErrors(checked.cel_expression ?? '')];
  const scope = checked.scope ?? 'global';
  const scopeId = checked.scope_id ?? null;
  const clash = opts.existing?.find(
    (r) => r.name === checked.name && (r.scope ?? 'global') === scope && (r.scope_id ?? null) === scopeId && (checked.id === undefined || r.id !== checked.id),
  );
  if (clash) errors.push({ path: 'name', message: `is already used by another rule in scope ${describeScope(scope, scopeId)}` });
  return errors;
}

function celErrors(expr: string): FieldError[] {
  try {
    compileCel(expr);
    return [];
  } catch (err) {
    return [{ path: 'cel_expression', message: celCompileMessage(err) }];
  }
}

/** Rules the JSON schema cannot express. */
function structuralErrors(rule: RoutingRule): FieldError[] {
  const errors: FieldError[] = [];
  const sum = rule.targets.reduce((s, t) => s + t.weight, 0);
  if (Math.abs(sum - 1) > WEIGHT_TOLERANCE) errors.push({ path: 'targets', message: `weights must sum to 1 (they sum to ${round(sum)})` });
  for (const [i, t] of rule.targets.entries()) {
    if (t.key_id !== undefined && t.provider === undefined) errors.push({ path: `targets[${i}].key_id`, message: 'requires provider' });
  }
  const scope = rule.scope ?? 'global';
  if (scope === 'global') {
    if (rule.scope_id !== undefined && rule.scope_id !== null) errors.push({ path: 'scope_id', message: 'must be null for global scope' });
  } else if (rule.scope_id === undefined || rule.scope_id === null) {
    errors.push({ path: 'scope_id', message: `is required for scope ${scope}` });
  }
  return errors;
}

function describeScope(scope: RoutingScope, scopeId: string | null): string {
  return scope === 'global' ? 'global' : `${scope} ${scopeId}`;
}

function round(n: number): number {
  return Math.round(n * 1e9) / 1e9;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
