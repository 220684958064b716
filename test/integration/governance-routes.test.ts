// Every route that spends the gateway's provider keys goes through the same governance as /v1:
// passthrough, model lists (OpenAI and native), files, batches, multipart media, token counting.
// With enforce_auth_on_inference a virtual key is required (401, and the provider never called), a
// key's provider and model restrictions hold (403 naming them), and its rate limits and budgets
// count these calls too (429 / 402).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let g: InProcessGateway;

const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];
const all = (provider: string, models = ['*']) => ({ provider, allowed_models: models, key_ids: ['*'], weight: 1 });
const vk = (id: string, grants: unknown[], more: Record<string, unknown> = {}) => ({ id, name: id, value: `sk-bf-${id}-0123456789`, provider_configs: grants, ...more });
const key = (id: string) => `sk-bf-${id}-0123456789`;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }),
    client: { enforce_auth_on_inference: true },
    governance: {
      rate_limits: [{ id: 'three', request_max_limit: 3, request_reset_duration: '1h' }],
      budgets: [{ id: 'nickel', max_limit: 0.05, reset_duration: '1d' }],
      virtual_keys: [
        vk('oa', [all('openai')]),
        vk('anth', [all('anthropic')]),
        vk('oa4o', [all('openai', ['gpt-4o'])]),
        vk('rl', [all('openai'), all('anthropic')], { rate_limit_id: 'three' }),
        vk('budget', [all('openai')], { budget_id: 'nickel' }),
      ],
    },
  });
  // `allowed_models: ['*']` makes the gateway read each provider's catalog once at start: not a client's call.
  await eventually(() => assert.equal(mock.requests.filter((r) => r.path.endsWith('/models')).length, 3), 5000);
});
after(async () => {
  await g.stop();
  await mock.close();
});

const chatBody = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }] });

function call(path: string, vkName?: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string>), ...(vkName && { 'x-bf-vk': key(vkName) }) };
  return fetch(`${g.url}${path}`, { ...init, headers });
}

async function expectError(res: Response, status: number, message?: RegExp): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  if (message) assert.match((JSON.parse(text) as { error: { message: string } }).error.message, message);
}

function audioForm(): FormData {
  const form = new FormData();
  form.set('model', 'whisper-1');
  form.set('file', new Blob([new Uint8Array(64)], { type: 'audio/mpeg' }), 'a.mp3');
  return form;
}

function imageForm(): FormData {
  const form = new FormData();
  form.set('model', 'dall-e-2');
  form.set('prompt', 'a cat');
  form.set('image', new Blob([new Uint8Array(64)], { type: 'image/png' }), 'a.png');
  return form;
}

test('without a virtual key every key-spending route is 401 and no provider is called', async () => {
  const json = { method: 'POST', headers: { 'content-type': 'application/json' } };
  const calls: [string, RequestInit][] = [
    ['/openai_passthrough/v1/models', {}],
    ['/openai_passthrough/v1/chat/completions', { ...json, body: chatBody('gpt-4o') }],
    ['/anthropic_passthrough/v1/models', {}],
    ['/v1/models', {}],
    ['/v1/models?provider=openai', {}],
    ['/anthropic/v1/models', {}],
    ['/genai/v1beta/models', {}],
    ['/v1/files', {}],
    ['/v1/files/file-abc', {}],
    ['/v1/batches', {}],
    ['/v1/batches', { ...json, body: JSON.stringify({ input_file_id: 'file-abc', endpoint: '/v1/chat/completions', completion_window: '24h' }) }],
    ['/v1/audio/transcriptions', { method: 'POST', body: audioForm() }],
    ['/v1/images/edits', { method: 'POST', body: imageForm() }],
    ['/v1/responses/input_tokens', { ...json, body: JSON.stringify({ model: 'openai/gpt-4o', input: 'hi' }) }],
    ['/anthropic/v1/messages/count_tokens', { ...json, body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }) }],
  ];
  mock.reset();
  for (const [path, init] of calls) {
    const res = await call(path, undefined, init);
    assert.equal(res.status, 401, `${init.method ?? 'GET'} ${path}: ${await res.text()}`);
  }
  assert.deepEqual(mock.requests.map((r) => r.path), []);
  // An unknown virtual key is no better.
  await expectError(await fetch(`${g.url}/openai_passthrough/v1/models`, { headers: { 'x-bf-vk': 'sk-bf-nope-0123456789' } }), 401);
  // With one, the same call goes through.
  assert.equal((await call('/openai_passthrough/v1/models', 'oa')).status, 200);
});

test("a key's provider restrictions hold on passthrough, model lists and files (403 naming the provider)", async () => {
  await expectError(await call('/anthropic_passthrough/v1/models', 'oa', { headers: { 'anthropic-version': '2023-06-01' } }), 403, /provider 'anthropic' is not allowed by virtual key 'oa'/);
  await expectError(await call('/v1/models?provider=anthropic', 'oa'), 403, /anthropic/);
  await expectError(await call('/v1/files?provider=openai', 'anth'), 403, /provider 'openai' is not allowed/);
  // Lists show only what the key allows.
  const listed = (await (await call('/v1/models', 'anth')).json()) as { data: { id: string }[] };
  assert.ok(listed.data.length > 0);
  assert.ok(listed.data.every((m) => m.id.startsWith('anthropic/')), JSON.stringify(listed.data.map((m) => m.id)));
  const native = (await (await call('/genai/v1beta/models', 'oa')).json()) as { models: { name: string }[] };
  assert.ok(native.models.length > 0 && native.models.every((m) => m.name.startsWith('models/openai/')));
});

test('a key limited to some models must name an allowed one through passthrough', async () => {
  const post = (model: string) => call('/openai_passthrough/v1/chat/completions', 'oa4o', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(model) });
  const ok = await post('gpt-4o');
  assert.equal(ok.status, 200, await ok.text());
  await expectError(await post('gpt-4o-mini'), 403, /model 'gpt-4o-mini' of provider 'openai' is not allowed/);
  await expectError(await call('/openai_passthrough/v1/models', 'oa4o'), 403, /must name one/);
  // A model in the path counts as named.
  assert.equal((await call('/openai_passthrough/v1/models/gpt-4o', 'oa4o')).status, 200);
});

test('rate limits count passthrough, model lists, files and batches alike (429 after the third)', async () => {
  assert.equal((await call('/openai_passthrough/v1/models', 'rl')).status, 200);
  assert.equal((await call('/v1/models', 'rl')).status, 200);
  assert.equal((await call('/v1/files', 'rl')).status, 200);
  const over = await call('/v1/batches', 'rl');
  await expectError(over, 429, /rate limit 'three'/);
  assert.ok(Number(over.headers.get('retry-after')) > 0);
  await expectError(await call('/openai_passthrough/v1/models', 'rl'), 429);
  await expectError(await call('/anthropic/v1/models', 'rl'), 429);
});

test('a passthrough answer reporting usage is charged to the budget (402 once spent)', async () => {
  const post = () => call('/openai_passthrough/v1/chat/completions', 'budget', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody('gpt-4o') });
  const first = await post();
  assert.equal(first.status, 200);
  const usage = ((await first.json()) as { usage: { total_tokens: number } }).usage;
  assert.ok(usage.total_tokens > 5, 'costs more than the 5-cent budget');
  await expectError(await post(), 402, /budget 'nickel' is exhausted/);
});
