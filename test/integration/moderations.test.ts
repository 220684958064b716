// POST /v1/moderations through the gateway with the official openai SDK (client.moderations.create):
// answered by OpenAI and by an OpenAI-compatible custom provider in OpenAI's shape, governed like the
// other operations (a virtual key is required and its grants apply) and logged with request type
// `moderation`; a provider without moderation gives the unsupported-operation 400, and it is not
// an async operation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-moderation-vk-0123456789';
const CHAT_ONLY_VK = 'sk-bf-moderation-chat-only-0123';

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway({
    providers: {
      ...mockProviders(mock.url),
      // An OpenAI-compatible server: it inherits OpenAI's operations, moderation among them.
      selfhosted: mockProvider(mock.url, 'openai', { custom_provider_config: { base_provider_type: 'openai' } }, 'selfhosted'),
    },
    governance: {
      virtual_keys: [
        {
          id: 'mod-vk',
          name: 'mod-vk',
          value: VK,
          provider_configs: [
            { provider: 'openai', allowed_models: ['omni-moderation-latest'], key_ids: ['*'], weight: 1 },
            { provider: 'selfhosted', allowed_models: ['omni-moderation-latest'], key_ids: ['*'], weight: 1 },
            { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: 1 },
          ],
        },
        { id: 'chat-only-vk', name: 'chat-only-vk', value: CHAT_ONLY_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] },
      ],
    },
    client: { enable_logging: true, enforce_auth_on_inference: true },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

const client = (key?: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) });


interface LogEntry {
  object: string;
  provider?: string;
  model?: string;
  virtual_key_id?: string;
  status: string;
}

async function loggedModeration(provider: string): Promise<LogEntry> {
  let hit: LogEntry | undefined;
  await eventually(async () => {
    const res = await fetch(`${gw.url}/api/logs?limit=100`);
    const logs = ((await res.json()) as { logs: LogEntry[] }).logs;
    hit = logs.find((e) => e.object === 'moderation' && e.provider === provider);
    assert.ok(hit, `no moderation record for ${provider} yet`);
  }, 5000);
  return hit!;
}

describe('POST /v1/moderations', () => {
  test('OpenAI answers in its own shape: one result per input, flagged by category', async () => {
    const res = await client(VK).moderations.create({ model: 'openai/omni-moderation-latest', input: ['I will kill the process', 'a calm sentence'] });
    assert.match(res.id, /^modr-/);
    assert.equal(res.model, 'omni-moderation-latest');
    assert.equal(res.results.length, 2);
    const [violent, calm] = res.results;
    assert.equal(violent.flagged, true);
    assert.equal(violent.categories.violence, true);
    assert.ok(violent.category_scores.violence > 0.9);
    assert.equal(calm.flagged, false);
    assert.equal(calm.categories.violence, false);
    const up = mock.requests.at(-1)!;
    assert.equal(up.path, '/openai/v1/moderations');
    // The upstream gets the provider's model name, not the gateway's `provider/model`.
    assert.equal((up.body as { model: string }).model, 'omni-moderation-latest');
    const extra = (res as unknown as { extra_fields: { provider: string; request_type: string } }).extra_fields;
    assert.deepEqual([extra.provider, extra.request_type], ['openai', 'moderation']);
  });

  test('multimodal input (text and an image) is one result', async () => {
    const res = await client(VK).moderations.create({
      model: 'openai/omni-moderation-latest',
      input: [
        { type: 'text', text: 'look at this' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    });
    assert.equal(res.results.length, 1);
    assert.equal(res.results[0].flagged, false);
    assert.deepEqual(res.results[0].category_applied_input_types.violence, ['text', 'image']);
  });

  test('an OpenAI-compatible custom provider answers too', async () => {
    const res = await client(VK).moderations.create({ model: 'selfhosted/omni-moderation-latest', input: 'you idiot' });
    assert.equal(res.results[0].categories.harassment, true);
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'selfhosted');
  });

  test('a provider without moderation gives the unsupported-operation 400', async () => {
    const before = mock.requests.length;
    const err = await errorOf(client(VK).moderations.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hello' }));
    assert.equal(err.status, 400);
    assert.equal((err.error as { type?: string }).type, 'unsupported_operation');
    assert.match(err.message, /operation 'moderation' is not supported by provider 'anthropic'/);
    assert.equal(mock.requests.length, before, 'nothing reached the upstream');
  });

  test('governed: no virtual key is a 401, a model outside its grants a 403', async () => {
    assert.equal((await errorOf(client().moderations.create({ model: 'openai/omni-moderation-latest', input: 'hello' }))).status, 401);
    assert.equal((await errorOf(client(CHAT_ONLY_VK).moderations.create({ model: 'openai/omni-moderation-latest', input: 'hello' }))).status, 403);
  });

  test('a request without input is refused naming the field', async () => {
    const err = await errorOf(client(VK).moderations.create({ model: 'openai/omni-moderation-latest' } as unknown as OpenAI.ModerationCreateParams));
    assert.equal(err.status, 400);
    assert.equal((err.error as { param?: string }).param, 'input');
  });

  test('logged with request type moderation, the provider, the model and the virtual key', async () => {
    const e = await loggedModeration('openai');
    assert.equal(e.status, 'success');
    assert.equal(e.model, 'omni-moderation-latest');
    assert.equal(e.virtual_key_id, 'mod-vk');
  });

  test('it is not an async operation: /v1/async/moderations is not a route', async () => {
    const res = await fetch(`${gw.url}/v1/async/moderations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-vk': VK },
      body: JSON.stringify({ model: 'openai/omni-moderation-latest', input: 'hello' }),
    });
    assert.notEqual(res.status, 202);
    await res.body?.cancel();
  });
});
