// Routing rules through the management API of a running gateway: CRUD on /api/routing/rules and
// its deprecated /api/governance/routing-rules alias, every validation answer, and a created rule
// changing where the very next request goes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';

let mock: MockProvider;
let g: InProcessGateway;
let api: Api;
let client: OpenAI;

const SEEDED = { name: 'seeded', cel_expression: 'headers["x-seeded"] == "yes"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] };

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({ providers: mockProviders(mock.url), governance: { routing_rules: [SEEDED] } });
  api = apiClient(g);
  client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'placeholder', maxRetries: 0 });
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Rule {
  id: string;
  name: string;
  enabled?: boolean;
  scope: string;
  scope_id: string | null;
  created_at: string;
  updated_at: string;
  targets: { provider?: string; model?: string; weight: number }[];
}

const CHEAP = {
  name: 'cheap tier to claude',
  cel_expression: 'headers["x-tier"] == "cheap"',
  targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }],
};

async function servedBy(headers: Record<string, string> = {}): Promise<{ provider: string; model: string }> {
  const answer = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Route me' }] }, { headers });
  return { provider: (answer as unknown as { extra_fields: { provider: string } }).extra_fields.provider, model: answer.model };
}

function assertError(a: { status: number; body: unknown; text: string }, status: number, param?: string | null): ApiError {
  assert.equal(a.status, status, a.text);
  const err = a.body as ApiError;
  assert.equal(err.status_code, status);
  if (param !== undefined) assert.equal(err.error.param, param, err.error.message);
  return err;
}

test('a created rule changes where the next request goes; disabling and deleting it puts it back', async () => {
  assert.equal((await servedBy({ 'x-tier': 'cheap' })).provider, 'openai');
  const created = await api<{ message: string; rule: Rule }>('POST', '/api/routing/rules', CHEAP);
  assert.equal(created.status, 201, created.text);
  assert.equal(typeof created.body.message, 'string');
  const rule = created.body.rule;
  assert.match(rule.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.ok(!Number.isNaN(Date.parse(rule.created_at)));
  assert.equal(rule.created_at, rule.updated_at);
  assert.equal(rule.scope, 'global');
  assert.equal(rule.scope_id, null);

  const routed = await servedBy({ 'x-tier': 'cheap' });
  assert.equal(routed.provider, 'anthropic');
  assert.match(routed.model, /claude-sonnet-4-5/);
  assert.equal((await servedBy({ 'x-tier': 'premium' })).provider, 'openai');
  assert.equal((await servedBy()).provider, 'openai');

  await new Promise((r) => setTimeout(r, 5));
  const disabled = await api<{ rule: Rule }>('PUT', `/api/routing/rules/${rule.id}`, { enabled: false });
  assert.equal(disabled.status, 200, disabled.text);
  assert.equal(disabled.body.rule.enabled, false);
  assert.equal(disabled.body.rule.name, CHEAP.name);
  assert.equal(disabled.body.rule.created_at, rule.created_at);
  assert.ok(disabled.body.rule.updated_at > rule.updated_at);
  assert.equal((await servedBy({ 'x-tier': 'cheap' })).provider, 'openai');

  await api('PUT', `/api/routing/rules/${rule.id}`, { enabled: true, targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] });
  assert.equal((await servedBy({ 'x-tier': 'cheap' })).provider, 'gemini');

  const deleted = await api<{ message: string }>('DELETE', `/api/routing/rules/${rule.id}`);
  assert.equal(deleted.status, 200);
  assert.equal(typeof deleted.body.message, 'string');
  assert.equal((await servedBy({ 'x-tier': 'cheap' })).provider, 'openai');
  assertError(await api('GET', `/api/routing/rules/${rule.id}`), 404);
  assertError(await api('PUT', `/api/routing/rules/${rule.id}`, { enabled: true }), 404);
  assertError(await api('DELETE', `/api/routing/rules/${rule.id}`), 404);
});

test('invalid rules get 400 naming the field (CEL with the spec message); a name taken in the scope gets 409', async () => {
  const before = await api<{ count: number }>('GET', '/api/routing/rules');
  const cel = assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'bad cel', cel_expression: 'headers["x-tier"] ==' }), 400, 'cel_expression');
  assert.match(cel.error.message, /Failed to compile rule: invalid CEL syntax/);
  const weights = assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'w', targets: [{ provider: 'openai', weight: 0.5 }, { provider: 'anthropic', weight: 0.3 }] }), 400, 'targets');
  assert.match(weights.error.message, /sum to 1/);
  assertError(await api('POST', '/api/routing/rules', { targets: CHEAP.targets }), 400, 'name');
  assertError(await api('POST', '/api/routing/rules', { name: 'no targets' }), 400, 'targets');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 's', scope: 'team' }), 400, 'scope_id');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 's', scope: 'team', scope_id: 'ghost' }), 400, 'scope_id');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 's', scope: 'everywhere' }), 400, 'scope');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'k', targets: [{ key_id: '5b655ead-3112-59ba-a34d-26a5b64cffac', weight: 1 }] }), 400, 'targets[0].key_id');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'p', targets: [{ provider: 'nope', weight: 1 }] }), 400, 'targets[0].provider');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'f', fallbacks: ['nope/model'] }), 400, 'fallbacks[0]');
  assert.equal((await api<{ count: number }>('GET', '/api/routing/rules')).body.count, before.body.count);

  const first = await api<{ rule: Rule }>('POST', '/api/routing/rules', { ...CHEAP, name: 'unique-name' });
  assert.equal(first.status, 201);
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, name: 'unique-name' }), 409, 'name');
  const second = await api<{ rule: Rule }>('POST', '/api/routing/rules', { ...CHEAP, name: 'renamable' });
  assertError(await api('PUT', `/api/routing/rules/${second.body.rule.id}`, { name: 'unique-name' }), 409, 'name');
  assertError(await api('PUT', `/api/routing/rules/${second.body.rule.id}`, { cel_expression: '((' }), 400, 'cel_expression');
  assertError(await api('POST', '/api/routing/rules', { ...CHEAP, id: first.body.rule.id, name: 'same id' }), 409, 'id');

  // The same name in another scope is fine.
  const team = await api<{ team: { id: string } }>('POST', '/api/governance/teams', { name: 'routing-team' });
  const scoped = await api<{ rule: Rule }>('POST', '/api/routing/rules', { ...CHEAP, name: 'unique-name', scope: 'team', scope_id: team.body.team.id });
  assert.equal(scoped.status, 201, scoped.text);
  const inUse = assertError(await api('DELETE', `/api/governance/teams/${team.body.team.id}`), 409);
  assert.match(inUse.error.message, /routing rule 'unique-name'/);
  // A provider created here and still named by a rule is not deleted (one of config.json's cannot be at all).
  assert.equal((await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g', value: 'gsk-routing-test' }], network_config: { base_url: `${mock.url}/openai` } })).status, 201);
  const onGroq = await api<{ rule: Rule }>('POST', '/api/routing/rules', { ...CHEAP, name: 'to groq', targets: [{ provider: 'groq', model: 'llama', weight: 1 }] });
  assert.equal(onGroq.status, 201, onGroq.text);
  const providerInUse = assertError(await api('DELETE', '/api/providers/groq'), 409);
  assert.match(providerInUse.error.message, /routing rule 'to groq'/);
  assert.match(assertError(await api('DELETE', '/api/providers/anthropic'), 409).error.message, /config\.json/);
  assert.equal((await api('DELETE', `/api/routing/rules/${onGroq.body.rule.id}`)).status, 200);
  assert.equal((await api('DELETE', '/api/providers/groq')).status, 200);

  const filtered = await api<{ rules: Rule[]; count: number }>('GET', `/api/routing/rules?scope=team&scope_id=${team.body.team.id}`);
  assert.deepEqual(filtered.body.rules.map((r) => r.id), [scoped.body.rule.id]);
  assert.equal(filtered.body.count, 1);
  const global = await api<{ rules: Rule[] }>('GET', '/api/routing/rules?scope=global');
  assert.ok(global.body.rules.every((r) => r.scope === 'global'));
  assertError(await api('GET', '/api/routing/rules?scope=planet'), 400, 'scope');

  for (const id of [first.body.rule.id, second.body.rule.id, scoped.body.rule.id]) assert.equal((await api('DELETE', `/api/routing/rules/${id}`)).status, 200);
  assert.equal((await api('DELETE', `/api/governance/teams/${team.body.team.id}`)).status, 200);
});

test('the deprecated /api/governance/routing-rules alias behaves identically and shares the same rules', async () => {
  const created = await api<{ rule: Rule }>('POST', '/api/governance/routing-rules', { ...CHEAP, name: 'via alias' });
  assert.equal(created.status, 201, created.text);
  const id = created.body.rule.id;
  const seen = await api<{ rule: Rule }>('GET', `/api/routing/rules/${id}`);
  assert.equal(seen.body.rule.name, 'via alias');
  const listed = await api<{ rules: Rule[]; count: number }>('GET', '/api/governance/routing-rules');
  assert.ok(listed.body.rules.some((r) => r.id === id));
  assert.equal(listed.body.count, listed.body.rules.length);
  assertError(await api('POST', '/api/governance/routing-rules', { ...CHEAP, name: 'via alias' }), 409, 'name');
  assertError(await api('POST', '/api/governance/routing-rules', { ...CHEAP, name: 'x', cel_expression: '"' }), 400, 'cel_expression');
  assert.equal((await servedBy({ 'x-tier': 'cheap' })).provider, 'anthropic');
  assert.equal((await api('PUT', `/api/governance/routing-rules/${id}`, { description: 'edited' })).status, 200);
  assert.equal((await api<{ rule: { description: string } }>('GET', `/api/governance/routing-rules/${id}`)).body.rule.description, 'edited');
  assert.equal((await api('DELETE', `/api/governance/routing-rules/${id}`)).status, 200);
  assertError(await api('GET', `/api/routing/rules/${id}`), 404);
});

test('a rule from config.json (written without an id) is listed with a stable id, can be read by it, and is read-only through /api', async () => {
  const listed = await api<{ rules: Rule[] }>('GET', '/api/routing/rules');
  const seeded = listed.body.rules.find((r) => r.name === 'seeded')!;
  assert.ok(seeded, 'the config.json rule is listed');
  assert.match(seeded.id, /^[0-9a-f-]{36}$/);
  const again = await api<{ rules: Rule[] }>('GET', '/api/routing/rules?from_memory=true');
  assert.equal(again.body.rules.find((r) => r.name === 'seeded')!.id, seeded.id);
  assert.equal((await servedBy({ 'x-seeded': 'yes' })).provider, 'gemini');
  assert.equal((await api<{ rule: Rule & { owner: string } }>('GET', `/api/routing/rules/${seeded.id}`)).body.rule.owner, 'file');
  // config.json owns it: a write names the file, and the rule keeps routing as the file says.
  assert.match(assertError(await api('PUT', `/api/routing/rules/${seeded.id}`, { targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }] }), 409).error.message, /config\.json/);
  assert.match(assertError(await api('DELETE', `/api/routing/rules/${seeded.id}`), 409).error.message, /config\.json/);
  assert.equal((await servedBy({ 'x-seeded': 'yes' })).provider, 'gemini');
});
