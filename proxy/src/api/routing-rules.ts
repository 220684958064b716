// /api/routing/rules (and the deprecated /api/governance/routing-rules, the same handlers).
// A write is checked like the routing engine will read it (validateRuleForWrite: schema, weights
// summing to 1, scope_id, CEL that compiles) plus what only the whole document can say: the
// scope's team/customer/virtual key exists, targets name configured providers and their keys, and
// the name is free in the scope (409).
import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { RoutingRule, RoutingScope } from '../schema/governance.ts';
import type { FieldError } from '../schema/validate.ts';
import { keyId } from '../schema/key-id.ts';
import { ruleId, validateRuleForWrite } from '../routing/rules.ts';
import { conflict, invalidFields, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, queryFlag, queryParam, reply } from './http.ts';
import { SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import { governanceOf, write } from './write.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { markManaged } from './managed.ts';
import { routingTestRouter } from './routing-test.ts';
import type { RuleView } from './answers.ts';

const WHAT = 'routing rule';
const SCOPES: readonly RoutingScope[] = ['global', 'customer', 'team', 'virtual_key'];

export { ruleId };

const view = (rule: RoutingRule): RuleView => ({ ...rule, id: ruleId(rule), scope: rule.scope ?? 'global', scope_id: rule.scope_id ?? null });

/** A rule the served configuration skips (it cannot compile) carries `error`: visible, not silent. */
function withError(service: ConfigService, rule: RuleView): RuleView {
  const skipped = service.current().routing.skipped.find((s) => s.id === rule.id);
  return skipped ? { ...rule, error: skipped.error } : rule;
}

const sameScope = (a: RoutingRule, b: RoutingRule) => (a.scope ?? 'global') === (b.scope ?? 'global') && (a.scope_id ?? null) === (b.scope_id ?? null);

/** References only the whole document can check. */
function documentErrors(rule: RoutingRule, doc: GatewayConfig): FieldError[] {
  const errors: FieldError[] = [];
  const g = doc.governance ?? {};
  const scope = rule.scope ?? 'global';
  if (scope !== 'global' && typeof rule.scope_id === 'string') {
    const list = scope === 'team' ? g.teams : scope === 'customer' ? g.customers : g.virtual_keys;
    const label = scope === 'virtual_key' ? 'virtual key' : scope;
    if (!list?.some((x) => x.id === rule.scope_id)) errors.push({ path: 'scope_id', message: `no ${label} with id '${rule.scope_id}'` });
  }
  const providers = doc.providers ?? {};
  const keyIds = (p: string) => new Set((providers[p]?.keys ?? []).map((k) => keyId(p, k.name)));
  rule.targets.forEach((t, i) => {
    if (t.provider === undefined) return;
    if (!providers[t.provider]) errors.push({ path: `targets[${i}].provider`, message: `provider '${t.provider}' is not configured` });
    else if (t.key_id !== undefined && !keyIds(t.provider).has(t.key_id)) errors.push({ path: `targets[${i}].key_id`, message: `provider '${t.provider}' has no key with id '${t.key_id}'` });
  });
  (rule.fallbacks ?? []).forEach((f, i) => {
    const provider = typeof f === 'string' ? f.slice(0, f.indexOf('/')) : f.provider;
    if (!providers[provider]) {
      errors.push({ path: `fallbacks[${i}]`, message: `provider '${provider}' is not configured` });
      return;
    }
    if (typeof f === 'string') return;
    if (f.key_id !== undefined && !keyIds(provider).has(f.key_id)) errors.push({ path: `fallbacks[${i}].key_id`, message: `provider '${provider}' has no key with id '${f.key_id}'` });
    if (f.provider_key_name !== undefined && !(providers[provider]?.keys ?? []).some((k) => k.name === f.provider_key_name)) {
      errors.push({ path: `fallbacks[${i}].provider_key_name`, message: `provider '${provider}' has no key named '${f.provider_key_name}'` });
    }
  });
  return errors;
}

/** Everything a stored rule must satisfy; throws 409 for a name taken in the scope, 400 otherwise. */
function checkRule(candidate: Record<string, unknown>, others: readonly RoutingRule[], doc: GatewayConfig): RoutingRule {
  const errors = validateRuleForWrite(candidate);
  if (errors.length) throw invalidFields(WHAT, errors);
  const rule = candidate as RoutingRule;
  const clash = others.find((r) => r.name === rule.name && sameScope(r, rule));
  if (clash) throw conflict(`a routing rule named '${rule.name}' already exists in scope ${rule.scope === undefined || rule.scope === 'global' ? 'global' : `${rule.scope} ${String(rule.scope_id)}`}`, 'name');
  const docErrors = documentErrors(rule, doc);
  if (docErrors.length) throw invalidFields(WHAT, docErrors);
  return rule;
}

function rulesOf(draft: GatewayConfig): RoutingRule[] {
  const g = governanceOf(draft);
  g.routing_rules ??= [];
  return g.routing_rules;
}

/** Fields a client may send back from an answer but does not set. */
const READ_ONLY = ['created_at', 'updated_at', 'error'];

export function routingRulesRouter(service: ConfigService): Router {
  const router = Router();
  // POST /validate and /test first: they are not rule ids.
  router.use(routingTestRouter(service, { check: checkRule, ruleId }));

  router
    .route('/')
    .get((req: Request, res: Response) => {
      const scope = queryParam(req, 'scope');
      if (scope !== undefined && !SCOPES.includes(scope as RoutingScope)) throw invalidFields('query', [{ path: 'scope', message: `must be one of ${SCOPES.join(', ')}` }]);
      const scopeId = queryParam(req, 'scope_id');
      const doc = queryFlag(req, 'from_memory') ? service.current().config : service.document();
      const rules = (doc.governance?.routing_rules ?? [])
        .filter((r) => scope === undefined || (r.scope ?? 'global') === scope)
        .filter((r) => scopeId === undefined || r.scope_id === scopeId)
        .map((r) => withError(service, markManaged(service, 'routing_rules', ruleId(r), view(r))));
      reply(res, 200, { rules, count: rules.length });
    })
    .post(async (req: Request, res: Response) => {
      const { id, ...body } = objectBody(req.body, WHAT);
      const now = new Date().toISOString();
      const candidate: Record<string, unknown> = { id: id ?? randomUUID(), ...body, created_at: now, updated_at: now };
      const rule = await write(service, WHAT, (draft, ctx) => {
        const rules = rulesOf(draft);
        if (rules.some((r) => ruleId(r) === candidate.id)) throw conflict(`a routing rule with id '${String(candidate.id)}' already exists`, 'id');
        const checked = checkRule(candidate, rules, draft);
        rules.push(checked);
        ctx.alias(`governance.routing_rules[${rules.length - 1}]`, '');
        return checked;
      });
      reply(res, 201, { message: 'routing rule created successfully', rule: view(rule) });
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get((req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const rule = (service.storedDocument().governance?.routing_rules ?? []).find((r) => ruleId(r) === id);
      if (!rule) throw notFound(WHAT, id);
      reply(res, 200, { rule: withError(service, markManaged(service, 'routing_rules', id, view(rule))) });
    })
    .put(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const body = objectBody(req.body, WHAT);
      if (body.id !== undefined && body.id !== id) throw invalidFields(WHAT, [{ path: 'id', message: 'cannot be changed' }]);
      for (const f of READ_ONLY) delete body[f];
      const rule = await write(service, WHAT, (draft, ctx) => {
        const rules = rulesOf(draft);
        const index = rules.findIndex((r) => ruleId(r) === id);
        if (index < 0) throw notFound(WHAT, id);
        const stored = rules[index];
        const merged: Record<string, unknown> = mergePatch(stored as Record<string, unknown>, body, ['scope_id']);
        // Moving a rule to global scope drops its scope_id unless the body sets one.
        if (body.scope === 'global' && !('scope_id' in body)) merged.scope_id = null;
        merged.id = id;
        merged.created_at = stored.created_at ?? merged.updated_at ?? new Date().toISOString();
        merged.updated_at = new Date().toISOString();
        const checked = checkRule(merged, rules.filter((_, i) => i !== index), draft);
        rules[index] = checked;
        ctx.alias(`governance.routing_rules[${index}]`, '');
        return checked;
      });
      reply(res, 200, { message: 'routing rule updated successfully', rule: view(rule) });
    })
    .delete(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      await write(service, WHAT, (draft) => {
        const rules = rulesOf(draft);
        const index = rules.findIndex((r) => ruleId(r) === id);
        if (index < 0) throw notFound(WHAT, id);
        rules.splice(index, 1);
      });
      reply(res, 200, { message: 'routing rule deleted successfully' });
    })
    .all(methodNotAllowed);

  return router;
}
