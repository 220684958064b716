// POST /api/routing/rules/validate and /test (and the same under /api/governance/routing-rules):
// what the dashboard's rule editor asks while a person types. `validate` compiles a CEL expression
// with the proxy's own compiler; `test` chooses the targets with the code the plan stage runs
// (governance/targets.ts) over the served rule set, with a draft rule added or replacing its
// namesake by id, for a sample request. Neither changes anything, so both answer in read-only mode too.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { Snapshot } from '../config/snapshot.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { RoutingRule } from '../schema/governance.ts';
import type { FieldError } from '../schema/validate.ts';
import { keyId } from '../schema/key-id.ts';
import { compileCel } from '../routing/cel.ts';
import { celCompileMessage, compileRules } from '../routing/rules.ts';
import type { Capacity, RoutingStep } from '../routing/decide.ts';
import { COMPLEXITY_TIERS, type ComplexityTier } from '../schema/complexity.ts';
import { chooseTargets, type TargetChoice } from '../governance/targets.ts';
import { capacityOf } from '../governance/limits.ts';
import { identifyCaller } from '../governance/auth.ts';
import type { VirtualKeyRuntime } from '../config/governance-runtime.ts';
import type { Target } from '../pipeline/target.ts';
import { GatewayError } from '../unified/errors.ts';
import { invalidFields, objectBody } from './errors.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import type { CelValidation, RoutingTestAnswer, TargetView } from './answers.ts';

/** Longest expression the validator compiles (the schema's own limit is checked on create). */
const MAX_EXPRESSION = 16_384;
const MAX_HEADERS = 100;

/** The checks a create runs, handed over by routing-rules.ts (which owns them). */
export interface RuleChecks {
  /** Throws the create's 400 / 409 for a candidate rule among `others` in `doc`. */
  check(candidate: Record<string, unknown>, others: readonly RoutingRule[], doc: GatewayConfig): RoutingRule;
  ruleId(rule: RoutingRule): string;
}

/** The create's CEL check, with the column the compiler pointed at when it gave one. */
export function validateCel(expression: string): CelValidation {
  try {
    compileCel(expression);
    return { valid: true };
  } catch (err) {
    const message = celCompileMessage(err);
    const column = /\(at column (\d+)\)/.exec(message);
    return {
      valid: false,
      error: { message, ...(column && { position: { column: Number(column[1]), offset: Number(column[1]) - 1 } }) },
    };
  }
}

interface SampleRequest {
  requested: string;
  requestType: string;
  headers: Record<string, string>;
  params: Record<string, string>;
  fallbacks: string[] | undefined;
  virtualKeyId: string | undefined;
  tier: ComplexityTier | undefined;
  capacity: Partial<Capacity> | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringMap(v: unknown, path: string, errors: FieldError[], lowerKeys: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (v === undefined) return out;
  if (!isObject(v)) {
    errors.push({ path, message: 'must be an object of string values' });
    return out;
  }
  const entries = Object.entries(v);
  if (entries.length > MAX_HEADERS) errors.push({ path, message: `must have at most ${MAX_HEADERS} entries` });
  for (const [k, value] of entries) {
    if (typeof value !== 'string') errors.push({ path: `${path}.${k}`, message: 'must be a string' });
    else out[lowerKeys ? k.toLowerCase() : k] = value;
  }
  return out;
}

/** The sample request, every problem named by its path in the body. */
function sampleRequest(body: Record<string, unknown>, snap: Snapshot): SampleRequest {
  const errors: FieldError[] = [];
  const r = body.request;
  if (!isObject(r)) throw invalidFields('routing test', [{ path: 'request', message: 'is required: an object with at least `model`' }]);
  const model = r.model;
  if (typeof model !== 'string' || model.trim() === '') errors.push({ path: 'request.model', message: 'is required: a model name, e.g. gpt-4o or openai/gpt-4o' });
  const provider = r.provider;
  if (provider !== undefined && provider !== '' && (typeof provider !== 'string' || !snap.providers.has(provider))) {
    errors.push({ path: 'request.provider', message: `must name a configured provider (${[...snap.providers.keys()].join(', ') || 'none configured'})` });
  }
  const requestType = r.request_type ?? 'chat_completion';
  if (typeof requestType !== 'string' || requestType === '') errors.push({ path: 'request.request_type', message: 'must be a non-empty string, e.g. chat_completion' });
  const headers = stringMap(r.headers, 'request.headers', errors, true);
  const params = stringMap(r.params, 'request.params', errors, false);
  let fallbacks: string[] | undefined;
  const rawFallbacks = isObject(r.body) ? r.body.fallbacks : undefined;
  if (r.body !== undefined && !isObject(r.body)) errors.push({ path: 'request.body', message: 'must be a JSON object (the request body)' });
  else if (rawFallbacks !== undefined) {
    if (Array.isArray(rawFallbacks) && rawFallbacks.every((f) => typeof f === 'string')) fallbacks = rawFallbacks as string[];
    else errors.push({ path: 'request.body.fallbacks', message: 'must be an array of "provider/model" strings' });
  }
  const vk = r.virtual_key;
  if (vk !== undefined && vk !== '' && typeof vk !== 'string') errors.push({ path: 'request.virtual_key', message: 'must be a virtual key id' });
  const tier = r.complexity_tier;
  if (tier !== undefined && tier !== '' && !COMPLEXITY_TIERS.includes(tier as ComplexityTier)) errors.push({ path: 'request.complexity_tier', message: `must be one of ${COMPLEXITY_TIERS.join(', ')}` });
  let capacity: Partial<Capacity> | undefined;
  if (r.capacity !== undefined) {
    if (!isObject(r.capacity)) errors.push({ path: 'request.capacity', message: 'must be an object of percentages (budget_used, tokens_used, request)' });
    else {
      capacity = {};
      for (const [k, v] of Object.entries(r.capacity)) {
        if (k !== 'budget_used' && k !== 'tokens_used' && k !== 'request') errors.push({ path: `request.capacity.${k}`, message: 'is not a capacity variable (budget_used, tokens_used, request)' });
        else if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) errors.push({ path: `request.capacity.${k}`, message: 'must be a percentage (a number >= 0)' });
        else capacity[k] = v;
      }
    }
  }
  if (errors.length) throw invalidFields('routing test', errors);
  const name = (model as string).trim();
  return {
    requested: typeof provider === 'string' && provider !== '' ? `${provider}/${name}` : name,
    requestType: requestType as string,
    headers,
    params,
    fallbacks,
    virtualKeyId: typeof vk === 'string' && vk !== '' ? vk : undefined,
    tier: tier === undefined || tier === '' ? undefined : (tier as ComplexityTier),
    capacity,
  };
}

/** The caller as the identify stage would see it: the sample's credential header, or a key named by id. */
function sampleCaller(snap: Snapshot, sample: SampleRequest): VirtualKeyRuntime | undefined {
  const rt = snap.governance;
  if (sample.virtualKeyId !== undefined) {
    const vk = [...rt.virtualKeys.values()].find((v) => v.record.id === sample.virtualKeyId);
    if (!vk) throw invalidFields('routing test', [{ path: 'request.virtual_key', message: `no virtual key with id '${sample.virtualKeyId}'` }]);
    return vk;
  }
  try {
    // A test does not need a key where requests do: routing without one is worth seeing too.
    return identifyCaller({ ...rt, enforceAuth: false }, sample.headers);
  } catch (err) {
    if (err instanceof GatewayError) throw new GatewayError(400, `request.headers: ${err.message}`, { param: 'request.headers', code: 'invalid_field' });
    throw err;
  }
}

/** The served rules with the draft added, or in place of the stored rule with its id. */
function withDraft(body: Record<string, unknown>, snap: Snapshot, checks: RuleChecks): { rules: RoutingRule[]; draft?: RoutingRule } {
  const rules = [...(snap.config.governance?.routing_rules ?? [])];
  if (body.rule === undefined || body.rule === null) return { rules };
  if (!isObject(body.rule)) throw invalidFields('routing test', [{ path: 'rule', message: 'must be a routing rule object (as for a create)' }]);
  const { created_at: _c, updated_at: _u, ...fields } = body.rule;
  const candidate: Record<string, unknown> = { id: fields.id ?? 'draft', ...fields };
  const index = rules.findIndex((r) => checks.ruleId(r) === candidate.id);
  const others = index < 0 ? rules : rules.filter((_, i) => i !== index);
  let draft: RoutingRule;
  try {
    draft = checks.check(candidate, others, snap.config);
  } catch (err) {
    // The create's own error, its field named from the top of this body.
    if (err instanceof GatewayError && err.status < 500) {
      throw new GatewayError(err.status, err.message, { type: err.type, ...(err.code && { code: err.code }), param: err.param ? `rule.${err.param}` : 'rule' });
    }
    throw err;
  }
  if (index < 0) rules.push(draft);
  else rules[index] = draft;
  return { rules, draft };
}

const describe = (t: Target): TargetView => ({ provider: t.provider.name, model: t.model, ...(t.pinnedKeyId && { key_id: t.pinnedKeyId }) });

/** The choice as an answer: what the plan stage would do, and the trail as the request log keeps it. */
function answer(chosen: TargetChoice, vk: VirtualKeyRuntime | undefined, warnings: string[], draft: RoutingRule | undefined, checks: RuleChecks): RoutingTestAnswer {
  const decision = chosen.decision;
  const last: RoutingStep | undefined = decision.trail.findLast((s) => s.matched);
  let targets: TargetView[] | undefined;
  let note: string | undefined;
  const engines: string[] = [];
  try {
    if (chosen.by === 'routing-rule') {
      engines.push('routing-rule');
      targets = chosen.targets().map(describe);
    } else if (chosen.by === 'governance') {
      // The key's pick is weighted at random: the tester names who chooses, not one draw.
      engines.push('governance');
      note = `no rule matched: virtual key '${vk!.record.name}' chooses the provider (its provider configs and weights)`;
    } else {
      targets = chosen.targets().map(describe);
      note = 'no rule matched: the request goes to the model it named';
    }
  } catch (err) {
    // The decision stands; the request itself would then be refused with this error.
    note = `the request would be refused: ${err instanceof Error ? err.message : String(err)}`;
  }
  const ruleIds = [...new Set(decision.trail.filter((s) => s.matched && s.ruleId).map((s) => s.ruleId!))];
  return {
    decision: {
      matched: decision.matched,
      provider: decision.provider,
      model: decision.model,
      ...(decision.keyId && { key_id: decision.keyId }),
      fallbacks: decision.fallbacks.map((f) => `${f.provider}/${f.model}`),
      ...(decision.ruleId && { rule_id: decision.ruleId }),
      ...(decision.ruleName && { rule_name: decision.ruleName }),
      ...(last && { scope: last.scope, scope_id: last.scopeId }),
      ...(decision.error && { error: decision.error }),
    },
    ...(targets && { targets }),
    ...(note && { note }),
    ...(vk && { virtual_key: { id: vk.record.id, name: vk.record.name } }),
    // The request log's fields, in its shape.
    routing_engines_used: engines,
    routing_rule_ids: ruleIds,
    ...(decision.ruleName && { routing_rule_name: decision.ruleName }),
    routing_engine_logs: decision.error ? { trail: decision.trail, error: decision.error } : decision.trail,
    ...(draft && { draft: { id: checks.ruleId(draft), name: draft.name, enabled: draft.enabled !== false } }),
    warnings,
  };
}

export function routingTestRouter(service: ConfigService, checks: RuleChecks): Router {
  const router = Router();

  router
    .route('/validate')
    .post((req: Request, res: Response) => {
      const body = objectBody(req.body, 'CEL expression to validate');
      const expr = body.cel_expression;
      if (typeof expr !== 'string') throw invalidFields('CEL validation', [{ path: 'cel_expression', message: 'is required: a string (an empty one always matches)' }]);
      if (expr.length > MAX_EXPRESSION) throw invalidFields('CEL validation', [{ path: 'cel_expression', message: `must be at most ${MAX_EXPRESSION} characters` }]);
      reply(res, 200, validateCel(expr));
    })
    .all(methodNotAllowed);

  router
    .route('/test')
    .post((req: Request, res: Response) => {
      const body = objectBody(req.body, 'routing test');
      const snap = service.current();
      const sample = sampleRequest(body, snap);
      const vk = sampleCaller(snap, sample);
      const { rules, draft } = withDraft(body, snap, checks);
      const warnings: string[] = [];
      // The snapshot compiles its rules the same way (config/snapshot.ts); warnings are answered, not logged.
      const compiled = compileRules(rules, {
        warn: (m) => warnings.push(m),
        resolveKeyName: (provider, name) => (snap.config.providers?.[provider]?.keys?.some((k) => k.name === name) ? keyId(provider, name) : undefined),
      });
      // No usage is counted here: capacity is what the sample says, else the limits' state with nothing used.
      const chosen = chooseTargets(snap, vk, { model: sample.requested, fallbacks: sample.fallbacks, requestType: sample.requestType, headers: () => sample.headers, params: () => sample.params, complexityTier: sample.tier }, {
        rules: compiled,
        capacity: (provider, model) => ({ ...capacityOf(snap.governance, vk, provider, model, () => undefined), ...sample.capacity }),
        // Unused: a key's own choice is named, not drawn (see answer).
        catalog: () => undefined,
      });
      reply(res, 200, answer(chosen, vk, warnings, draft, checks));
    })
    .all(methodNotAllowed);

  return router;
}
