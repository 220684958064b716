// Governance records through the management API of a running gateway: virtual keys, teams,
// customers, budgets, rate limits and model configs with 201/200/400/404/409, virtual keys that
// work for inference the moment they are created, and writes that survive a restart.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';

let mock: MockProvider;
let g: RunningGateway;
let api: Api;
/** Every full virtual key value the API handed out: none may show up anywhere else. */
const issued: string[] = [];

const config = () => ({ providers: mockProviders(mock.url), client: { enforce_auth_on_inference: true } });

before(async () => {
  mock = await startMockProvider();
  g = await startGateway(config());
  api = apiClient(g);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface VirtualKey {
  id: string;
  name: string;
  value: string;
  team_id?: string;
  budget_id?: string;
  rate_limit_id?: string;
  provider_configs?: Record<string, unknown>[];
}

const OPENAI_ONLY = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];

const sdk = (key?: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'placeholder', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) });

async function chat(key: string | undefined, model = 'gpt-4o'): Promise<{ status: number; provider?: string; message?: string }> {
  try {
    const answer = await sdk(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] });
    return { status: 200, provider: (answer as unknown as { extra_fields: { provider: string } }).extra_fields.provider };
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { status: err.status ?? 0, message: err.message };
    throw err;
  }
}

async function createVk(body: Record<string, unknown>): Promise<VirtualKey> {
  const created = await api<{ virtual_key: VirtualKey }>('POST', '/api/governance/virtual-keys', body);
  assert.equal(created.status, 201, created.text);
  issued.push(created.body.virtual_key.value);
  return created.body.virtual_key;
}

function assertError(a: { status: number; body: unknown; text: string }, status: number, param?: string | null): ApiError {
  assert.equal(a.status, status, a.text);
  const err = a.body as ApiError;
  assert.equal(err.status_code, status);
  assert.equal(typeof err.error.message, 'string');
  if (param !== undefined) assert.equal(err.error.param, param, err.error.message);
  return err;
}

test('a created virtual key works for inference at once, is shown in full only in the create answer, and stops working when deleted', async () => {
  assert.equal((await chat(undefined)).status, 401);
  const vk = await createVk({ name: 'app', provider_configs: OPENAI_ONLY });
  assert.match(vk.value, /^sk-bf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const first = await chat(vk.value);
  assert.equal(first.status, 200, first.message);
  assert.equal(first.provider, 'openai');

  const list = await api<{ virtual_keys: VirtualKey[]; count: number }>('GET', '/api/governance/virtual-keys');
  assert.equal(list.status, 200);
  assert.equal(list.body.count, list.body.virtual_keys.length);
  const listed = list.body.virtual_keys.find((k) => k.id === vk.id)!;
  assert.equal(listed.value, `sk-...${vk.value.slice(-4)}`);
  assert.ok(!list.text.includes(vk.value));
  const one = await api<{ virtual_key: VirtualKey }>('GET', `/api/governance/virtual-keys/${vk.id}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.virtual_key.value, listed.value);
  assert.ok(!one.text.includes(vk.value));

  const deleted = await api<{ message: string }>('DELETE', `/api/governance/virtual-keys/${vk.id}`);
  assert.equal(deleted.status, 200);
  assert.equal(typeof deleted.body.message, 'string');
  assert.equal((await chat(vk.value)).status, 401);
  assertError(await api('GET', `/api/governance/virtual-keys/${vk.id}`), 404);
  assertError(await api('PUT', `/api/governance/virtual-keys/${vk.id}`, { name: 'x' }), 404);
  assertError(await api('DELETE', `/api/governance/virtual-keys/${vk.id}`), 404);
});

test('PUT {provider_configs} changes what the key may use on the next request; a read-back write keeps the value', async () => {
  const vk = await createVk({ name: 'switcher', provider_configs: OPENAI_ONLY });
  assert.equal((await chat(vk.value)).status, 200);
  const put = await api<{ virtual_key: VirtualKey }>('PUT', `/api/governance/virtual-keys/${vk.id}`, {
    provider_configs: [{ provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 }],
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.virtual_key.name, 'switcher');
  assert.equal(put.body.virtual_key.value, `sk-...${vk.value.slice(-4)}`);
  const denied = await chat(vk.value, 'gpt-4o');
  assert.equal(denied.status, 403, denied.message);
  const allowed = await chat(vk.value, 'claude-sonnet-4-5');
  assert.equal(allowed.status, 200, allowed.message);
  assert.equal(allowed.provider, 'anthropic');

  // A dashboard reads the key (value masked) and writes the whole object back with a new description.
  const read = await api<{ virtual_key: Record<string, unknown> }>('GET', `/api/governance/virtual-keys/${vk.id}`);
  const back = await api('PUT', `/api/governance/virtual-keys/${vk.id}`, { ...read.body.virtual_key, description: 'renamed in the UI' });
  assert.equal(back.status, 200, back.text);
  assert.equal((await chat(vk.value, 'claude-sonnet-4-5')).status, 200);
  assert.equal((await api('DELETE', `/api/governance/virtual-keys/${vk.id}`)).status, 200);
});

test('invalid virtual key bodies get 400 naming the field; duplicates get 409; nothing is written', async () => {
  const before = await api<{ count: number }>('GET', '/api/governance/virtual-keys');
  assertError(await api('POST', '/api/governance/virtual-keys', {}), 400, 'name');
  assertError(await api('POST', '/api/governance/virtual-keys', { name: 'x', provider_configs: [{ provider: 'nope', key_ids: ['*'] }] }), 400, 'provider_configs[0].provider');
  const dangling = assertError(await api('POST', '/api/governance/virtual-keys', { name: 'x', team_id: 'ghost-team' }), 400, 'team_id');
  assert.match(dangling.error.message, /ghost-team/);
  assertError(await api('POST', '/api/governance/virtual-keys', { name: 'x', colour: 'blue' }), 400, 'colour');
  assertError(await api('POST', '/api/governance/virtual-keys', { name: 'x', provider_configs: [{ provider: 'openai', weight: -1 }] }), 400, 'provider_configs[0].weight');
  assertError(await api('POST', '/api/governance/virtual-keys', '{"name": "x",'), 400);
  assertError(await api('POST', '/api/governance/virtual-keys', [1, 2]), 400);
  assert.equal((await api<{ count: number }>('GET', '/api/governance/virtual-keys')).body.count, before.body.count);

  const own = 'sk-bf-chosen-by-the-caller-0001';
  const vk = await createVk({ id: 'vk-fixed', name: 'fixed', value: own, provider_configs: OPENAI_ONLY });
  assert.equal(vk.id, 'vk-fixed');
  assert.equal(vk.value, own);
  assertError(await api('POST', '/api/governance/virtual-keys', { name: 'fixed' }), 409, 'name');
  assertError(await api('POST', '/api/governance/virtual-keys', { id: 'vk-fixed', name: 'other' }), 409, 'id');
  const sameValue = assertError(await api('POST', '/api/governance/virtual-keys', { name: 'other', value: own }), 409, 'value');
  assert.ok(!sameValue.error.message.includes(own));
  assertError(await api('PUT', '/api/governance/virtual-keys/vk-fixed', { id: 'renamed-id' }), 400, 'id');
  assert.equal((await api('DELETE', '/api/governance/virtual-keys/vk-fixed')).status, 200);
});

test('customers, teams and their budgets: nested budgets, filters, merges, 409 for a name taken or a record still referenced', async () => {
  const customer = await api<{ customer: { id: string; budget_id: string; budget: { max_limit: number } } }>('POST', '/api/governance/customers', {
    name: 'acme',
    budget: { max_limit: 100, reset_duration: '1M' },
  });
  assert.equal(customer.status, 201, customer.text);
  const c = customer.body.customer;
  assert.equal(c.budget.max_limit, 100);
  const budget = await api<{ budget: { id: string; reset_duration: string } }>('GET', `/api/governance/budgets/${c.budget_id}`);
  assert.equal(budget.status, 200);
  assert.equal(budget.body.budget.reset_duration, '1M');

  const team = await api<{ team: { id: string; name: string; customer_id: string } }>('POST', '/api/governance/teams', { name: 'eng', customer_id: c.id });
  assert.equal(team.status, 201, team.text);
  const t = team.body.team;
  await api('POST', '/api/governance/teams', { name: 'sales' });
  assertError(await api('POST', '/api/governance/teams', { name: 'eng' }), 409, 'name');
  assertError(await api('POST', '/api/governance/teams', { name: 'ops', customer_id: 'ghost' }), 400, 'customer_id');
  assertError(await api('POST', '/api/governance/teams', { name: 'ops', budget: { max_limit: 5 } }), 400, 'budget.reset_duration');
  const filtered = await api<{ teams: { name: string }[] }>('GET', `/api/governance/teams?customer_id=${c.id}`);
  assert.deepEqual(filtered.body.teams.map((x) => x.name), ['eng']);

  const vk = await createVk({ name: 'eng-key', team_id: t.id, provider_configs: OPENAI_ONLY });
  const teamInUse = assertError(await api('DELETE', `/api/governance/teams/${t.id}`), 409);
  assert.match(teamInUse.error.message, /virtual key 'eng-key'/);
  const customerInUse = assertError(await api('DELETE', `/api/governance/customers/${c.id}`), 409);
  assert.match(customerInUse.error.message, /team 'eng'/);
  const budgetInUse = assertError(await api('DELETE', `/api/governance/budgets/${c.budget_id}`), 409);
  assert.match(budgetInUse.error.message, /customer 'acme'/);

  const renamed = await api<{ team: { name: string; customer_id: string } }>('PUT', `/api/governance/teams/${t.id}`, { name: 'platform' });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.team.name, 'platform');
  assert.equal(renamed.body.team.customer_id, c.id);
  assertError(await api('PUT', `/api/governance/teams/${t.id}`, { name: 'sales' }), 409, 'name');
  // A nested budget on update changes the budget the customer already has.
  const raised = await api<{ customer: { budget_id: string; budget: { max_limit: number } } }>('PUT', `/api/governance/customers/${c.id}`, { budget: { max_limit: 250 } });
  assert.equal(raised.status, 200, raised.text);
  assert.equal(raised.body.customer.budget_id, c.budget_id);
  assert.equal(raised.body.customer.budget.max_limit, 250);

  assert.equal((await api('DELETE', `/api/governance/virtual-keys/${vk.id}`)).status, 200);
  assert.equal((await api('DELETE', `/api/governance/teams/${t.id}`)).status, 200);
  assert.equal((await api('DELETE', `/api/governance/customers/${c.id}`)).status, 200);
  assert.equal((await api('DELETE', `/api/governance/budgets/${c.budget_id}`)).status, 200);
  assertError(await api('GET', `/api/governance/customers/${c.id}`), 404);
  assertError(await api('DELETE', `/api/governance/teams/${t.id}`), 404);
});

test('budgets and rate limits: CRUD with field errors, and a rate limit attached through the API applies to the next requests', async () => {
  const invalid = assertError(await api('POST', '/api/governance/budgets', { max_limit: -1, reset_duration: '1 day' }), 400);
  assert.match(invalid.error.message, /max_limit/);
  assert.match(invalid.error.message, /reset_duration/);
  assertError(await api('POST', '/api/governance/budgets', { max_limit: 5, reset_duration: '1h', calendar_aligned: true }), 400, 'calendar_aligned');
  const budget = await api<{ budget: { id: string } }>('POST', '/api/governance/budgets', { max_limit: 10, reset_duration: '1d' });
  assert.equal(budget.status, 201);
  const changed = await api<{ budget: { max_limit: number; reset_duration: string } }>('PUT', `/api/governance/budgets/${budget.body.budget.id}`, { max_limit: 20 });
  assert.deepEqual([changed.body.budget.max_limit, changed.body.budget.reset_duration], [20, '1d']);
  assert.equal((await api('DELETE', `/api/governance/budgets/${budget.body.budget.id}`)).status, 200);

  assertError(await api('POST', '/api/governance/rate-limits', { request_max_limit: 2 }), 400, 'request_reset_duration');
  const rl = await api<{ rate_limit: { id: string } }>('POST', '/api/governance/rate-limits', { id: 'two-per-hour', request_max_limit: 2, request_reset_duration: '1h' });
  assert.equal(rl.status, 201, rl.text);
  assertError(await api('POST', '/api/governance/rate-limits', { id: 'two-per-hour', request_max_limit: 1, request_reset_duration: '1h' }), 409, 'id');
  const list = await api<{ rate_limits: { id: string }[]; count: number }>('GET', '/api/governance/rate-limits');
  assert.ok(list.body.rate_limits.some((r) => r.id === 'two-per-hour'));

  const vk = await createVk({ name: 'limited', rate_limit_id: 'two-per-hour', provider_configs: OPENAI_ONLY });
  assert.equal((await chat(vk.value)).status, 200);
  assert.equal((await chat(vk.value)).status, 200);
  const third = await chat(vk.value);
  assert.equal(third.status, 429, third.message);
  assertError(await api('DELETE', '/api/governance/rate-limits/two-per-hour'), 409);
  assert.equal((await api('DELETE', `/api/governance/virtual-keys/${vk.id}`)).status, 200);
  assert.equal((await api('DELETE', '/api/governance/rate-limits/two-per-hour')).status, 200);
  assertError(await api('GET', '/api/governance/rate-limits/two-per-hour'), 404);
});

test('model configs: nested rate limit, provider must be configured, CRUD', async () => {
  const created = await api<{ model_config: { id: string; rate_limit_id: string; rate_limit: { token_max_limit: number } } }>('POST', '/api/governance/model-configs', {
    model_name: 'gpt-4o',
    provider: 'openai',
    rate_limit: { token_max_limit: 100000, token_reset_duration: '1h' },
  });
  assert.equal(created.status, 201, created.text);
  const mc = created.body.model_config;
  assert.equal(mc.rate_limit.token_max_limit, 100000);
  assertError(await api('POST', '/api/governance/model-configs', { model_name: 'x', provider: 'nope' }), 400, 'provider');
  assertError(await api('POST', '/api/governance/model-configs', { provider: 'openai' }), 400, 'model_name');
  const put = await api<{ model_config: { model_name: string } }>('PUT', `/api/governance/model-configs/${mc.id}`, { model_name: 'gpt-4o-mini' });
  assert.equal(put.body.model_config.model_name, 'gpt-4o-mini');
  const list = await api<{ model_configs: unknown[]; count: number }>('GET', '/api/governance/model-configs');
  assert.equal(list.body.count, 1);
  assert.equal((await api('DELETE', `/api/governance/model-configs/${mc.id}`)).status, 200);
  assertError(await api('GET', `/api/governance/model-configs/${mc.id}`), 404);
});

test('writes survive a restart on the same app dir, and no virtual key value ever reached the log', async () => {
  const team = await api<{ team: { id: string } }>('POST', '/api/governance/teams', { name: 'survivors' });
  const vk = await createVk({ name: 'durable', team_id: team.body.team.id, provider_configs: OPENAI_ONLY });
  const logs = g.logs();
  await g.stop();
  g = await startGateway(config(), { appDir: g.appDir });
  api = apiClient(g);
  const again = await api<{ virtual_key: VirtualKey }>('GET', `/api/governance/virtual-keys/${vk.id}`);
  assert.equal(again.status, 200);
  assert.equal(again.body.virtual_key.team_id, team.body.team.id);
  const answered = await chat(vk.value);
  assert.equal(answered.status, 200, answered.message);
  for (const value of issued) {
    assert.ok(!logs.includes(value), 'a virtual key value was logged');
    assert.ok(!g.logs().includes(value), 'a virtual key value was logged after restart');
  }
});
