// Routing rules from config.json through a running gateway: where requests land, scope by virtual
// key, chains, pinned keys, the capacity variables, complexity tiers, and the audit trail in the log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { keyId } from '../../proxy/src/schema/key-id.ts';

let mock: MockProvider;
let gw: RunningGateway;

const VK = 'sk-bf-routing-0123456789';

before(async () => {
  mock = await startMockProvider();
  const providers = mockProviders(mock.url, {
    openai: { keys: [{ name: 'main', value: 'sk-main', weight: 1 }, { name: 'reserve', value: 'sk-reserve', weight: 1 }] },
  });
  gw = await startGateway({
    providers,
    governance: {
      rate_limits: [{ id: 'tiny', request_max_limit: 2, request_reset_duration: '1h' }],
      virtual_keys: [
        {
          id: 'vk-r',
          name: 'router',
          value: VK,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1, rate_limit_id: 'tiny' }],
        },
      ],
      complexity_classifier: {
        provider: 'openai',
        model: 'text-embedding-3-small',
        similarity_floor: 0.9,
        examples: { SIMPLE: ['what is two plus two'], COMPLEX: ['prove the riemann hypothesis in full detail'] },
      },
      routing_rules: [
        { name: 'cheap tier', cel_expression: 'headers["x-tier"] == "cheap"', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }], priority: 1 },
        { name: 'param', cel_expression: 'params["region"] in ["eu", "uk"]', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }], priority: 2 },
        { name: 'chain start', cel_expression: 'model == "alias-chain"', chain_rule: true, targets: [{ model: 'alias-step', weight: 1 }], priority: 3 },
        { name: 'chain end', cel_expression: 'model == "alias-step"', targets: [{ provider: 'openai', model: 'gpt-4o-mini', key_id: keyId('openai', 'reserve'), weight: 1 }], priority: 4 },
        { name: 'simple', cel_expression: 'complexity_tier == "SIMPLE"', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash', weight: 1 }], priority: 5 },
        { name: 'broken', cel_expression: 'headers[', targets: [{ provider: 'gemini', weight: 1 }], priority: 0 },
        {
          name: 'vk capacity',
          scope: 'virtual_key',
          scope_id: 'vk-r',
          cel_expression: 'request >= 50.0',
          targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', weight: 1 }],
          fallbacks: ['gemini/gemini-2.5-flash'],
        },
      ],
    },
  });
});
after(async () => {
  await gw?.stop();
  await mock.close();
});

interface Routed {
  extra_fields: { provider: string };
  model: string;
}

async function send(model: string, opts: { headers?: Record<string, string>; query?: string; content?: string } = {}): Promise<Routed> {
  const res = await fetch(`${gw.url}/v1/chat/completions${opts.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: opts.content ?? 'hello' }] }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Routed;
}

test('a header rule sends the request elsewhere; header names are case-insensitive; no match keeps the target', async () => {
  assert.equal((await send('openai/gpt-4o', { headers: { 'X-Tier': 'cheap' } })).extra_fields.provider, 'anthropic');
  assert.equal((await send('openai/gpt-4o')).extra_fields.provider, 'openai');
  // A missing header is false, not an error; the broken rule was skipped at load with a warning.
  assert.match(gw.logs(), /broken/);
});

test('query parameters are visible to rules', async () => {
  assert.equal((await send('openai/gpt-4o', { query: '?region=eu' })).extra_fields.provider, 'gemini');
  assert.equal((await send('openai/gpt-4o', { query: '?region=us' })).extra_fields.provider, 'openai');
});

test('a chain rule re-evaluates with the resolved model; the last rule pins its key', async () => {
  mock.reset();
  const r = await send('alias-chain');
  assert.equal(r.extra_fields.provider, 'openai');
  const sent = mock.requests.find((q) => q.path.endsWith('/chat/completions'));
  assert.equal((sent?.body as { model: string }).model, 'gpt-4o-mini');
  assert.equal(sent?.headers.authorization, 'Bearer sk-reserve');
  const trail = gw.logs().split('\n').filter((l) => l.includes('routing decision') && l.includes('alias-chain'));
  assert.ok(trail.length > 0 && trail[0].includes('chain start') && trail[0].includes('chain end'), 'both chain steps are in the audit trail');
});

test('complexity_tier comes from the embedding classifier; unknown tiers do not match', async () => {
  await assertEventually(async () => (await send('openai/gpt-4o', { content: 'what is two plus two' })).extra_fields.provider === 'gemini');
  assert.equal((await send('openai/gpt-4o', { content: 'tell me a story about the sea' })).extra_fields.provider, 'openai');
});

test("virtual-key scoped rules read the key's capacity: past 50% of its request limit the rule routes away", async () => {
  const headers = { 'x-bf-vk': VK };
  assert.equal((await send('gpt-4o', { headers })).extra_fields.provider, 'openai');
  // One of two requests used: request = 50, so the key's rule now matches (and skips its provider configs).
  assert.equal((await send('gpt-4o', { headers })).extra_fields.provider, 'anthropic');
});

async function assertEventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) assert.fail('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
