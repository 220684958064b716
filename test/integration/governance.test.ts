// Virtual keys, budgets and rate limits through running gateways: auth answers, permission
// answers, 429 with Retry-After, the budget error, and limits shared by three gateway processes on
// one real redis-server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let redis: RunningRedis;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  redis = await startRedis();
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await mock.close();
  await redis.stop();
});

/** Every token costs a cent, so a request's cost is its total_tokens / 100. */
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

function config(governance: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const providers = mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN }, anthropic: { pricing_overrides: CENT_PER_TOKEN } });
  return { providers, governance, client: { enforce_auth_on_inference: true }, ...extra };
}

const vk = (id: string, more: Record<string, unknown> = {}) => ({
  id,
  name: id,
  value: `sk-bf-${id}-0123456789`,
  provider_configs: [
    { provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: null },
  ],
  ...more,
});

async function gateway(cfg: unknown): Promise<InProcessGateway> {
  const g = await startGateway(cfg);
  gateways.push(g);
  return g;
}

const client = (g: InProcessGateway, key?: string) =>
  new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'placeholder', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) });

const ask = (c: OpenAI, model = 'gpt-4o') => c.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello in five words' }] });

async function status(p: Promise<unknown>): Promise<{ status: number; error?: APIError }> {
  try {
    await p;
    return { status: 200 };
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { status: err.status ?? 0, error: err };
    throw err;
  }
}

test('auth: no key, an unknown key and an inactive key get 401; a good key in any accepted header works', async () => {
  const g = await gateway(config({ virtual_keys: [vk('good'), vk('off', { is_active: false })] }));
  assert.equal((await status(ask(client(g)))).status, 401);
  const unknown = await status(ask(client(g, 'sk-bf-nope-0123456789')));
  assert.equal(unknown.status, 401);
  assert.match(unknown.error!.message, /virtual key/);
  const inactive = await status(ask(client(g, 'sk-bf-off-0123456789')));
  assert.equal(inactive.status, 401);
  assert.match(inactive.error!.message, /inactive/);
  assert.equal((await status(ask(client(g, 'sk-bf-good-0123456789')))).status, 200);
  // As the SDK's own API key (Authorization: Bearer) and as x-api-key.
  const bearer = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'sk-bf-good-0123456789', maxRetries: 0 });
  assert.equal((await status(ask(bearer))).status, 200);
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-bf-good-0123456789' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 200);
});

test('permissions: a model or provider the key does not allow gets 403 naming it', async () => {
  const g = await gateway(config({ virtual_keys: [vk('perm')] }));
  const c = client(g, 'sk-bf-perm-0123456789');
  const model = await status(ask(c, 'gpt-4.1'));
  assert.equal(model.status, 403);
  assert.match(model.error!.message, /model 'gpt-4.1'/);
  const provider = await status(ask(c, 'gemini/gemini-2.5-flash'));
  assert.equal(provider.status, 403);
  assert.match(provider.error!.message, /provider 'gemini' is not allowed/);
  // A null-weight provider is still reachable by name.
  const named = await ask(c, 'anthropic/claude-sonnet-4-5');
  assert.equal((named as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'anthropic');
});

test('request rate limit: the request over the limit gets 429 with Retry-After and the error object', async () => {
  const g = await gateway(config({ rate_limits: [{ id: 'rl', request_max_limit: 3, request_reset_duration: '1h' }], virtual_keys: [vk('rl', { rate_limit_id: 'rl' })] }));
  const c = client(g, 'sk-bf-rl-0123456789');
  for (let i = 0; i < 3; i++) await ask(c);
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': 'sk-bf-rl-0123456789' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 429);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(retryAfter > 0 && retryAfter <= 3600, `retry-after ${retryAfter}`);
  const body = (await res.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(body.error.code, 'request_rate_limit_exceeded');
  assert.match(body.error.message, /rate limit 'rl'/);
});

test('budget: a team budget shared by two keys stops both once spent, with its own error', async () => {
  const g = await gateway(
    config({
      budgets: [{ id: 'team-b', max_limit: 0.5, reset_duration: '1d' }],
      teams: [{ id: 't1', name: 'team one', budget_id: 'team-b' }],
      virtual_keys: [vk('k1', { team_id: 't1' }), vk('k2', { team_id: 't1' })],
    }),
  );
  const [c1, c2] = [client(g, 'sk-bf-k1-0123456789'), client(g, 'sk-bf-k2-0123456789')];
  let spent = 0;
  for (let i = 0; i < 100 && spent < 0.5; i++) {
    const r = await ask(i % 2 ? c1 : c2);
    spent += r.usage!.total_tokens * 0.01;
  }
  assert.ok(spent >= 0.5, 'the budget was reached');
  for (const c of [c1, c2]) {
    const over = await status(ask(c));
    assert.equal(over.status, 402);
    assert.equal((over.error!.error as { code?: string }).code, 'budget_exceeded');
    assert.match(over.error!.message, /budget 'team-b' is exhausted/);
  }
});

test('three gateways on one Redis: a request limit admits exactly N, a budget overshoots by at most what was in flight', async () => {
  await redis.flush();
  const cfg = config(
    {
      budgets: [{ id: 'shared-budget', max_limit: 2, reset_duration: '1d' }],
      rate_limits: [{ id: 'shared-rl', request_max_limit: 25, request_reset_duration: '1h' }],
      virtual_keys: [vk('budget-vk', { budget_id: 'shared-budget' }), vk('rl-vk', { rate_limit_id: 'shared-rl' })],
    },
    { redis: { addr: redis.addr } },
  );
  const three = await Promise.all([gateway(cfg), gateway(cfg), gateway(cfg)]);

  // 60 concurrent requests spread over the three replicas against a limit of 25.
  const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => status(ask(client(three[i % 3], 'sk-bf-rl-vk-0123456789')))));
  assert.equal(outcomes.filter((o) => o.status === 200).length, 25, JSON.stringify(outcomes.slice(0, 3).map((o) => [o.status, o.error?.message])));
  assert.equal(outcomes.filter((o) => o.status === 429).length, 35);

  // Budget: 4 concurrent loops per replica until every replica refuses.
  const CONCURRENCY = 4;
  let spent = 0;
  let maxCost = 0;
  await Promise.all(
    three.flatMap((g) =>
      Array.from({ length: CONCURRENCY }, async () => {
        const c = client(g, 'sk-bf-budget-vk-0123456789');
        for (;;) {
          try {
            const r = await ask(c);
            const cost = r.usage!.total_tokens * 0.01;
            spent += cost;
            maxCost = Math.max(maxCost, cost);
          } catch (err) {
            if (err instanceof OpenAI.APIError && err.status === 402) return;
            throw err;
          }
        }
      }),
    ),
  );
  // The bound: usage is charged after each answer, so at most every request in flight when the
  // budget was reached (3 replicas x CONCURRENCY) can land on top of it.
  assert.ok(spent >= 2, `spent ${spent}`);
  assert.ok(spent <= 2 + 3 * CONCURRENCY * maxCost, `spent ${spent} exceeds 2 + ${3 * CONCURRENCY} x ${maxCost}`);
});

test('SKYBRIDGE_REDIS_* in the environment (as the Helm chart sets it) shares counters without a redis section', async () => {
  await redis.flush();
  const cfg = config({ rate_limits: [{ id: 'env-rl', request_max_limit: 3, request_reset_duration: '1h' }], virtual_keys: [vk('env-vk', { rate_limit_id: 'env-rl' })] });
  const env = { SKYBRIDGE_REDIS_ADDR: redis.addr, SKYBRIDGE_REDIS_KEY_PREFIX: 'envtest:' };
  const pair = await Promise.all([startGateway(cfg, { env }), startGateway(cfg, { env })]);
  gateways.push(...pair);
  const outcomes = [];
  for (let i = 0; i < 5; i++) outcomes.push((await status(ask(client(pair[i % 2], 'sk-bf-env-vk-0123456789')))).status);
  assert.deepEqual(outcomes, [200, 200, 200, 429, 429]);
});
