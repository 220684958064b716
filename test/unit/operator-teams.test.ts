// Team and Customer resources: what they render (governance.teams / customers with their own
// limits), and what a reference to one that is not served does to the VirtualKeys, Teams and
// RoutingRules naming it: only they are left out, with a status naming the missing Team or Customer.
import { test } from 'node:test';
import { Buffer } from 'node:buffer';
import assert from 'node:assert/strict';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { holdDecision } from '../../operator/src/safety.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { cr, ref, secrets } from './operator-fixtures.ts';
import type { CustomResource } from '../../operator/src/resources/kinds.ts';

const lookup = secrets({ 'default/creds': { openai: 'sk-openai-123', ml: 'sk-bf-ml-0123456789', ops: 'sk-bf-ops-0123456789' } });
const openai = () => cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('creds', 'openai') }] });
const key = (name: string, extra: Record<string, unknown> = {}) =>
  cr('VirtualKey', name, { valueFrom: ref('creds', name), provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }], ...extra });
const acme = () => cr('Customer', 'acme', { name: 'ACME Corp', budget: { max_limit: 500, reset_duration: '1M' }, rateLimit: { request_max_limit: 1000, request_reset_duration: '1m' } });
const ml = (extra: Record<string, unknown> = {}) => cr('Team', 'ml', { customer_id: 'acme', budget: { max_limit: 0.5, reset_duration: '1d' }, profile: { cost_center: 'r&d' }, ...extra });
const scoped = (name: string, scope: string, scopeId: string) => cr('RoutingRule', name, { scope, scope_id: scopeId, targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }] });

const governance = (doc: Record<string, unknown>) => doc.governance as Record<string, Record<string, unknown>[] | undefined>;

test('a Customer and a Team under it render into governance with their own limits, and keys and rules name them', () => {
  const d = desiredState([openai(), acme(), ml(), key('ml', { team_id: 'ml' }), key('ops', { customer_id: 'acme' }), scoped('ml-mini', 'team', 'ml'), scoped('acme-mini', 'customer', 'acme')], lookup);
  for (const [ref, v] of d.verdicts) assert.deepEqual({ ref, accepted: v.accepted, reason: v.reason }, { ref, accepted: true, reason: 'Valid' });
  const g = governance(d.input.document);
  assert.deepEqual(g.teams, [{ id: 'ml', name: 'ml', customer_id: 'acme', budget_id: 'team-ml', profile: { cost_center: 'r&d' } }]);
  assert.deepEqual(g.customers, [{ id: 'acme', name: 'ACME Corp', budget_id: 'customer-acme', rate_limit_id: 'customer-acme' }]);
  assert.deepEqual(g.budgets?.map((b) => b.id), ['customer-acme', 'team-ml']);
  assert.deepEqual(g.rate_limits?.map((r) => r.id), ['customer-acme']);
  assert.deepEqual(d.input.managed.teams, ['ml']);
  assert.deepEqual(d.input.managed.customers, ['acme']);
  assert.equal(d.input.sources['teams/ml'], 'Team default/ml');
  assert.equal(d.input.sources['budgets/team-ml'], 'Team default/ml');
  // What the proxies will load: the proxy's own check passes, the key sits in the team.
  checkConfig(structuredClone(d.input.document), 'test', { ...process.env, ...decoded(d.input.secrets) });
  assert.equal(g.virtual_keys?.find((v) => v.id === 'ml')?.team_id, 'ml');
});

test('a VirtualKey naming a Team that does not exist is refused, naming it; the rest is served', () => {
  const d = desiredState([openai(), key('ml', { team_id: 'ml' }), key('ops')], lookup);
  const v = d.verdicts.get('VirtualKey default/ml');
  assert.equal(v?.accepted, false);
  assert.equal(v?.reason, 'ReferenceNotFound');
  assert.match(v?.message ?? '', /^spec\.team_id: Team 'ml' is not in the rendered configuration: no Team named 'ml' exists in the watched namespaces; until it is, this key is left out/);
  // Left out, not served without its team's limits.
  assert.deepEqual(d.input.managed.virtual_keys, ['ops']);
  assert.equal(d.verdicts.get('VirtualKey default/ops')?.reason, 'Valid');
  const c = desiredState([openai(), key('ops', { customer_id: 'acme' })], lookup).verdicts.get('VirtualKey default/ops');
  assert.equal(c?.reason, 'ReferenceNotFound');
  assert.match(c?.message ?? '', /^spec\.customer_id: Customer 'acme' is not in the rendered configuration: no Customer named 'acme' exists/);
});

test('a Team naming a missing Customer is refused, and its keys with it, each saying why', () => {
  const d = desiredState([openai(), ml(), key('ml', { team_id: 'ml' }), key('ops')], lookup);
  const team = d.verdicts.get('Team default/ml');
  assert.equal(team?.reason, 'ReferenceNotFound');
  assert.match(team?.message ?? '', /^spec\.customer_id: Customer 'acme' is not in the rendered configuration: no Customer named 'acme' exists in the watched namespaces; until it is, this team and the keys in it are left out/);
  const vk = d.verdicts.get('VirtualKey default/ml');
  assert.equal(vk?.reason, 'ReferenceNotFound');
  // The Team exists but is refused: the key's status points at it.
  assert.match(vk?.message ?? '', /Team 'ml' is not in the rendered configuration: Team default\/ml is not accepted \(see its status\)/);
  assert.equal(governance(d.input.document).teams, undefined);
  assert.deepEqual(governance(d.input.document).budgets ?? [], [], "the refused team's budget is not rendered either");
  assert.deepEqual(d.input.managed.virtual_keys, ['ops']);
});

test('a RoutingRule scoped to a Team or Customer that is not served is left out, naming it', () => {
  const d = desiredState([openai(), key('ops'), scoped('ml-mini', 'team', 'ml'), scoped('acme-mini', 'customer', 'acme'), scoped('ops-mini', 'virtual_key', 'ops')], lookup);
  const team = d.verdicts.get('RoutingRule default/ml-mini');
  assert.equal(team?.reason, 'ReferenceNotFound');
  assert.match(team?.message ?? '', /^spec\.scope_id: Team 'ml' is not in the rendered configuration: no Team named 'ml' exists in the watched namespaces \(the rule is left out/);
  assert.match(d.verdicts.get('RoutingRule default/acme-mini')?.message ?? '', /^spec\.scope_id: Customer 'acme' /);
  assert.equal(d.verdicts.get('RoutingRule default/ops-mini')?.reason, 'Valid');
  assert.deepEqual(governance(d.input.document).routing_rules?.map((r) => r.id), ['ops-mini']);
});

test('the referenced Team may live in another watched namespace (ids are unique across them); a second Team of that name conflicts', () => {
  const shared = cr('Team', 'ml', {}, { namespace: 'platform', created: '2025-01-01T00:00:00Z' });
  const copy = cr('Team', 'ml', {}, { namespace: 'default', created: '2025-02-01T00:00:00Z' });
  const d = desiredState([openai(), shared, copy, key('ml', { team_id: 'ml' })], lookup);
  assert.equal(d.verdicts.get('Team platform/ml')?.reason, 'Valid');
  assert.equal(d.verdicts.get('Team default/ml')?.reason, 'Conflict');
  assert.match(d.verdicts.get('Team default/ml')?.message ?? '', /teams id 'ml' is already defined by Team platform\/ml/);
  assert.equal(d.verdicts.get('VirtualKey default/ml')?.reason, 'Valid');
});

test('Team and Customer specs are checked with the proxy schemas: id is metadata.name, one budget, complete limits', () => {
  const refused = (r: CustomResource) => desiredState([r], lookup).verdicts.get(`${r.kind} default/${r.metadata.name}`);
  assert.match(refused(cr('Team', 'ml', { id: 'other' }))?.message ?? '', /^spec\.id: a Team's id is its metadata\.name \('ml'\)/);
  assert.match(refused(cr('Team', 'ml', { budget_id: 'b', budget: { max_limit: 1, reset_duration: '1d' } }))?.message ?? '', /spec\.budget_id: cannot be combined with spec\.budget \(the inline budget is the team's budget\)/);
  assert.match(refused(cr('Customer', 'acme', { budget: { max_limit: -1, reset_duration: '1d' } }))?.message ?? '', /^spec\.budget\.max_limit: must be >= 0/);
  assert.match(refused(cr('Customer', 'acme', { rateLimit: { token_max_limit: 5 } }))?.message ?? '', /spec\.rateLimit\.token_reset_duration: is required with token_max_limit/);
  assert.match(refused(cr('Team', 'ml', { unknown_field: 1 }))?.message ?? '', /^spec\.unknown_field: unknown field/);
  // Two teams with one display name: the proxy refuses duplicates, so the newer one is left out.
  const older = cr('Team', 'a', { name: 'Same' }, { created: '2025-01-01T00:00:00Z' });
  const newer = cr('Team', 'b', { name: 'Same' }, { created: '2025-02-01T00:00:00Z' });
  const d = desiredState([newer, older], lookup);
  assert.equal(d.verdicts.get('Team default/a')?.reason, 'Valid');
  assert.equal(d.verdicts.get('Team default/b')?.reason, 'InvalidSpec');
  assert.match(d.verdicts.get('Team default/b')?.message ?? '', /spec\.name: duplicate name 'Same'/);
});

test('deleting a Team is intent: its keys refused for it are not a reason to hold the render', () => {
  const live = {
    managed: { providers: ['openai'], virtual_keys: ['ml'], teams: ['ml'] },
    sources: { 'providers/openai': 'Provider skybridge/openai', 'virtual_keys/ml': 'VirtualKey skybridge/ml', 'teams/ml': 'Team skybridge/ml' },
  };
  const next = { managed: { providers: ['openai'] } };
  const teamDeleted = (source: string) => source !== 'Team skybridge/ml';
  const refused = (source: string) => (source === 'VirtualKey skybridge/ml' ? 'ReferenceNotFound' : undefined);
  assert.deepEqual(holdDecision(live, next, teamDeleted, refused), { lost: [] });
  // The Team still exists (refused for its own reasons): the key lost counts, and losing half is held.
  const held = holdDecision(live, next, () => true, refused);
  assert.deepEqual(held.lost, ['virtual_keys/ml']);
  assert.equal(held.reason, undefined, 'one of two served objects is not more than half');
  const bigger = { ...live, managed: { ...live.managed, virtual_keys: ['ml', 'ops'] }, sources: { ...live.sources, 'virtual_keys/ops': 'VirtualKey skybridge/ops' } };
  assert.match(holdDecision(bigger, next, () => true, refused).reason ?? '', /would remove 2 of the 3 served/);
  assert.deepEqual(holdDecision(bigger, next, teamDeleted, (s) => (s.startsWith('VirtualKey') ? 'ReferenceNotFound' : undefined)), { lost: [] });
});

function decoded(data: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}
