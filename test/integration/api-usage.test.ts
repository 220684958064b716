// GET /api/governance/usage on a running gateway: each budget and rate limit with its usage in the
// current window, read from the counters requests are admitted against, and the records using it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api } from '../helpers/api.ts';

let mock: MockProvider;
let g: InProcessGateway;
let api: Api;
const VK = 'sk-bf-usage-test-key-0001';

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    governance: {
      budgets: [{ id: 'b-team', max_limit: 50, reset_duration: '1M' }],
      rate_limits: [{ id: 'rl-vk', request_max_limit: 10, request_reset_duration: '1h', token_max_limit: 100000, token_reset_duration: '1d' }],
      teams: [{ id: 'search', name: 'Search', budget_id: 'b-team' }],
      virtual_keys: [{ id: 'vk1', name: 'checkout', value: VK, team_id: 'search', rate_limit_id: 'rl-vk', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }],
    },
  });
  api = apiClient(g);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Usage {
  budgets: Array<{ id: string; max_limit: number; current_usage: number; last_reset: string; resets_at: string; used_by: Array<{ kind: string; id: string; name: string }> }>;
  rate_limits: Array<{ id: string; request_current_usage?: number; token_current_usage?: number; request_resets_at?: string; used_by: Array<{ kind: string; id: string }> }>;
}

test('usage starts at zero, names who uses each limit, and counts a request made with the virtual key', async () => {
  const before = await api<Usage>('GET', '/api/governance/usage');
  assert.equal(before.status, 200);
  const [budget] = before.body.budgets;
  assert.equal(budget.id, 'b-team');
  assert.equal(budget.current_usage, 0);
  assert.deepEqual(budget.used_by, [{ kind: 'team', id: 'search', name: 'Search' }]);
  // A 1M budget resets on the 1st of next month.
  assert.equal(new Date(budget.resets_at).getUTCDate(), 1);
  assert.ok(Date.parse(budget.last_reset) <= Date.now() && Date.now() < Date.parse(budget.resets_at));
  const [rl] = before.body.rate_limits;
  assert.equal(rl.request_current_usage, 0);
  assert.equal(rl.token_current_usage, 0);
  assert.deepEqual(rl.used_by, [{ kind: 'virtual_key', id: 'vk1', name: 'checkout' }]);

  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-bf-vk': VK } });
  await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });

  // Tokens and cost are recorded after the answer, off the response path.
  await eventually(async () => {
    const after = await api<Usage>('GET', '/api/governance/usage');
    const r = after.body.rate_limits[0];
    assert.equal(r.request_current_usage, 1);
    assert.ok((r.token_current_usage ?? 0) > 0, `tokens counted: ${r.token_current_usage}`);
    assert.ok(after.body.budgets[0].current_usage > 0, `cost counted: ${after.body.budgets[0].current_usage}`);
  });
});

test('the usage route only reads', async () => {
  const res = await api('POST', '/api/governance/usage', {});
  assert.equal(res.status, 405);
});
