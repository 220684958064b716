// The routing rule editor's backend: POST .../validate compiles CEL with the proxy's own compiler
// (the same message a create gives), POST .../test runs the routing engine over the served rules
// plus a draft for a sample request and answers the decision and the audit trail exactly as the
// request log then records it for the same request. Neither stores anything; both answer while
// Kubernetes owns the configuration.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';
import { createApiHandler } from '../../proxy/src/api/app.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';

const VK_VALUE = 'sk-bf-routing-test-0123456789';

const RULES = [
  { id: 'to-claude', name: 'cheap to claude', priority: 5, cel_expression: 'headers["x-tier"] == "cheap"', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }], fallbacks: ['gemini/gemini-2.5-flash'] },
  { id: 'never', name: 'never matches', priority: 1, cel_expression: 'model == "no-such-model"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] },
  { id: 'vk-only', name: 'vk scoped', priority: 0, scope: 'virtual_key', scope_id: 'vk-rt', cel_expression: 'headers["x-tier"] == "vk"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] },
];

let mock: MockProvider;
let g: InProcessGateway;
let api: Api;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enable_logging: true },
    governance: {
      virtual_keys: [{ id: 'vk-rt', name: 'routing tester', value: VK_VALUE, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }, { provider: 'gemini', allowed_models: ['*'], key_ids: ['*'] }] }],
      routing_rules: RULES,
    },
  });
  api = apiClient(g);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Step {
  ruleId?: string;
  ruleName: string;
  matched: boolean;
  scope: string;
  target?: { provider: string; model: string };
}
interface TestAnswer {
  decision: { matched: boolean; provider: string; model: string; fallbacks: string[]; rule_id?: string; rule_name?: string; scope?: string; scope_id?: string | null };
  targets?: { provider: string; model: string }[];
  note?: string;
  routing_engines_used: string[];
  routing_rule_ids: string[];
  routing_engine_logs: Step[];
  draft?: { id: string; name: string };
  warnings: string[];
}

function assertError(a: { status: number; body: unknown; text: string }, status: number, param: string | null): ApiError {
  assert.equal(a.status, status, a.text);
  const err = a.body as ApiError;
  assert.equal(err.error.param, param, err.error.message);
  return err;
}

test('validate answers valid, or the create\'s own compile error with the column it points at', async () => {
  for (const path of ['/api/routing/rules/validate', '/api/governance/routing-rules/validate']) {
    const ok = await api('POST', path, { cel_expression: 'headers["x-tier"] == "cheap" && model.startsWith("gpt")' });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { valid: true });
  }
  const bad = await api<{ valid: boolean; error: { message: string; position?: { column: number } } }>('POST', '/api/routing/rules/validate', { cel_expression: 'model ==' });
  assert.equal(bad.status, 200, bad.text);
  assert.equal(bad.body.valid, false);
  assert.match(bad.body.error.message, /invalid CEL syntax/);
  assert.equal(bad.body.error.position?.column, 9);
  const typed = await api<{ valid: boolean; error: { message: string } }>('POST', '/api/routing/rules/validate', { cel_expression: 'budget_used > "80"' });
  assert.equal(typed.body.valid, false);
  assert.match(typed.body.error.message, /^Failed to compile rule: CEL type check failed: no such overload/);

  const unknown = await api<{ valid: boolean; error: { message: string } }>('POST', '/api/routing/rules/validate', { cel_expression: 'colour == "red"' });
  assert.equal(unknown.body.valid, false);
  assert.match(unknown.body.error.message, /colour/);
  // The create refuses the same expression with the same words.
  const created = await api('POST', '/api/routing/rules', { name: 'bad', cel_expression: 'colour == "red"', targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }] });
  const err = assertError(created, 400, 'cel_expression');
  assert.ok(err.error.message.includes(unknown.body.error.message), `${err.error.message} vs ${unknown.body.error.message}`);

  const nonBool = await api<{ valid: boolean; error: { message: string } }>('POST', '/api/routing/rules/validate', { cel_expression: 'model' });
  assert.match(nonBool.body.error.message, /must return a boolean/);

  assertError(await api('POST', '/api/routing/rules/validate', {}), 400, 'cel_expression');
  assertError(await api('POST', '/api/routing/rules/validate', { cel_expression: 42 }), 400, 'cel_expression');
  assert.equal((await api('GET', '/api/routing/rules/validate')).status, 405);
  assert.equal((await api('PUT', '/api/routing/rules/validate', { cel_expression: 'true' })).status, 405);
});

test('test answers the decision and the trail the request log then records for the same request', async () => {
  const sample = { model: 'gpt-4o', provider: 'openai', headers: { 'X-Tier': 'cheap' } };
  const t = await api<TestAnswer>('POST', '/api/routing/rules/test', { request: sample });
  assert.equal(t.status, 200, t.text);
  const d = t.body.decision;
  assert.equal(d.matched, true);
  assert.equal(d.provider, 'anthropic');
  assert.equal(d.model, 'claude-sonnet-4-5');
  assert.equal(d.rule_id, 'to-claude');
  assert.equal(d.rule_name, 'cheap to claude');
  assert.equal(d.scope, 'global');
  assert.deepEqual(d.fallbacks, ['gemini/gemini-2.5-flash']);
  assert.deepEqual(t.body.targets, [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }, { provider: 'gemini', model: 'gemini-2.5-flash' }]);
  assert.deepEqual(t.body.routing_engines_used, ['routing-rule']);
  // Priority order: the lower number is evaluated first; without a virtual key only global rules run.
  assert.deepEqual(t.body.routing_engine_logs.map((s) => [s.ruleName, s.matched]), [['never matches', false], ['cheap to claude', true]]);

  // The same request for real: it goes where the test said, and its log holds the same trail.
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'placeholder', maxRetries: 0 });
  const marker = `routing-test-marker-${Date.now()}`;
  const answer = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: marker }] }, { headers: { 'x-tier': 'cheap' } });
  assert.match(answer.model, /claude-sonnet-4-5/);
  let logged: { routing_engine_logs: unknown; routing_rule_ids?: string[]; routing_engines_used?: string[] } | undefined;
  await eventually(async () => {
    const logs = await api<{ logs: Array<{ id: string; provider: string; routing_engine_logs: unknown; routing_rule_ids?: string[]; routing_engines_used?: string[] }> }>('GET', `/api/logs?content_search=${marker}`);
    assert.equal(logs.status, 200, logs.text);
    logged = logs.body.logs[0];
    assert.ok(logged, 'the request is logged');
  }, 5000);
  assert.deepEqual(logged!.routing_engine_logs, t.body.routing_engine_logs);
  assert.deepEqual(logged!.routing_rule_ids, t.body.routing_rule_ids);
  assert.deepEqual(logged!.routing_engines_used, t.body.routing_engines_used);
});

test('a sample that matches no rule goes to the model it named; a virtual key brings its own scope', async () => {
  const none = await api<TestAnswer>('POST', '/api/governance/routing-rules/test', { request: { model: 'gpt-4o' } });
  assert.equal(none.status, 200, none.text);
  assert.equal(none.body.decision.matched, false);
  assert.deepEqual(none.body.targets, [{ provider: 'openai', model: 'gpt-4o' }]);
  assert.deepEqual(none.body.routing_engines_used, []);
  assert.ok(none.body.routing_engine_logs.every((s) => !s.matched));

  // By id, or by the key itself in the sample's headers (as the identify stage reads it).
  for (const request of [{ model: 'gpt-4o', virtual_key: 'vk-rt', headers: { 'x-tier': 'vk' } }, { model: 'gpt-4o', headers: { 'x-tier': 'vk', 'x-bf-vk': VK_VALUE } }]) {
    const vk = await api<TestAnswer & { virtual_key: { id: string } }>('POST', '/api/routing/rules/test', { request });
    assert.equal(vk.status, 200, vk.text);
    assert.equal(vk.body.decision.rule_id, 'vk-only');
    assert.equal(vk.body.decision.scope, 'virtual_key');
    assert.equal(vk.body.decision.scope_id, 'vk-rt');
    assert.equal(vk.body.virtual_key.id, 'vk-rt');
    assert.ok(!vk.text.includes(VK_VALUE), 'the key value is never answered');
    assert.equal(vk.body.routing_engine_logs[0].scope, 'virtual_key');
  }
});

test('a draft rule is checked like a create, tried with the live rules, and never stored', async () => {
  const before = await api<{ count: number }>('GET', '/api/routing/rules');
  const draft = { name: 'draft to gemini', priority: 0, cel_expression: 'model == "gpt-4o"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }] };
  const t = await api<TestAnswer>('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', headers: { 'x-tier': 'cheap' } }, rule: draft });
  assert.equal(t.status, 200, t.text);
  assert.equal(t.body.decision.rule_name, 'draft to gemini');
  assert.equal(t.body.decision.provider, 'gemini');
  assert.equal(t.body.draft?.name, 'draft to gemini');
  assert.equal(t.body.routing_engine_logs[0].ruleName, 'draft to gemini');

  // Editing a stored rule: the draft with its id replaces it.
  const edit = await api<TestAnswer>('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', headers: { 'x-tier': 'cheap' } }, rule: { ...RULES[0], cel_expression: 'headers["x-tier"] == "premium"' } });
  assert.equal(edit.status, 200, edit.text);
  assert.equal(edit.body.decision.matched, false);
  assert.equal(edit.body.routing_engine_logs.filter((s) => s.ruleId === 'to-claude').length, 1);

  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o' }, rule: { ...draft, cel_expression: 'model ==' } }), 400, 'rule.cel_expression');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o' }, rule: { ...draft, targets: [{ provider: 'nowhere', model: 'x', weight: 1 }] } }), 400, 'rule.targets[0].provider');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o' }, rule: { ...draft, name: 'never matches' } }), 409, 'rule.name');

  const after = await api<{ count: number }>('GET', '/api/routing/rules');
  assert.equal(after.body.count, before.body.count);
});

test('bad samples answer 400 naming the field', async () => {
  assertError(await api('POST', '/api/routing/rules/test', {}), 400, 'request');
  assertError(await api('POST', '/api/routing/rules/test', { request: { headers: {} } }), 400, 'request.model');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', provider: 'nowhere' } }), 400, 'request.provider');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', headers: { 'x-tier': 3 } } }), 400, 'request.headers.x-tier');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', virtual_key: 'vk-nobody' } }), 400, 'request.virtual_key');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', headers: { 'x-bf-vk': 'sk-bf-wrong' } } }), 400, 'request.headers');
  assertError(await api('POST', '/api/routing/rules/test', { request: { model: 'gpt-4o', complexity_tier: 'HUGE' } }), 400, 'request.complexity_tier');
});

test('validate and test answer while Kubernetes owns the configuration; writes still do not', async () => {
  const empty = checkConfig({}, 'empty');
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(empty.config)), new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: empty.raw });
  await service.replace(
    { providers: { openai: { keys: [{ name: 'k', value: 'sk-1', weight: 1 }] } }, governance: { routing_rules: [{ id: 'premium', name: 'premium', cel_expression: 'headers["x-plan"] == "premium"', targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }] }] } },
    { source: 'kubernetes', env: {}, origin: { managedBy: 'kubernetes', editWith: 'the custom resources', sources: { 'routing_rules/premium': 'RoutingRule team-a/premium' } } },
  );
  const server: Server = createServer(createApiHandler(service));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    assert.deepEqual((await post('/api/routing/rules/validate', { cel_expression: 'true' })).body, { valid: true });
    const t = await post('/api/governance/routing-rules/test', { request: { model: 'gpt-4o', headers: { 'x-plan': 'premium' } } });
    assert.equal(t.status, 200, JSON.stringify(t.body));
    assert.equal((t.body.decision as { model: string }).model, 'gpt-4o-mini');
    assert.equal((await post('/api/routing/rules', { name: 'x', cel_expression: 'true', targets: [{ provider: 'openai', weight: 1 }] })).status, 409);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
