// Providers, provider keys, the config document, plugins, models and version through the management
// API of a running gateway: CRUD answers, a provider and key added over the API serving the next
// request, and secrets masked in every answer and absent from the log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:http2';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';

const UPSTREAM_HEADER_SECRET = 'Bearer upstream-header-secret-7788';
const AWS_SECRET = 'aws-secret-key-value-0123456789abcdef';
const GROQ_KEY = 'gsk-groq-first-key-value-000111';
const GROQ_KEY_2 = 'gsk-groq-second-key-value-000222';
const PLUGIN_SECRET = 'plugin-api-key-secret-0099887766';
const VK_VALUE = 'sk-bf-config-json-virtual-key-0001';

let mock: MockProvider;
let g: RunningGateway;
let api: Api;

before(async () => {
  mock = await startMockProvider();
  const providers = mockProviders(mock.url, { openai: { network_config: { base_url: `${mock.url}/openai`, max_retries: 0, extra_headers: { authorization: UPSTREAM_HEADER_SECRET, 'x-team': 'search' } } } });
  g = await startGateway({
    providers: {
      ...providers,
      bedrock: { keys: [{ name: 'aws', value: '', bedrock_key_config: { access_key: 'AKIDEXAMPLEACCESSKEY', secret_key: AWS_SECRET, region: 'us-east-1' } }], network_config: { base_url: `${mock.url}/bedrock` } },
    },
    governance: { virtual_keys: [{ id: 'vk-json', name: 'from-config', value: VK_VALUE, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] }] },
  });
  api = apiClient(g);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Key {
  id: string;
  name: string;
  value: string;
  weight?: number;
  enabled: boolean;
  bedrock_key_config?: Record<string, string>;
}
interface Provider {
  name: string;
  keys: Key[];
  network_config?: { base_url?: string; max_retries?: number; extra_headers?: Record<string, string> };
}

function assertError(a: { status: number; body: unknown; text: string }, status: number, param?: string | null): ApiError {
  assert.equal(a.status, status, a.text);
  const err = a.body as ApiError;
  assert.equal(err.status_code, status);
  if (param !== undefined) assert.equal(err.error.param, param, err.error.message);
  return err;
}

const chat = (model: string) =>
  new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'placeholder', maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

test('providers and keys are listed with every secret masked; env.VAR-free values never appear in full', async () => {
  const list = await api<{ providers: Provider[]; total: number }>('GET', '/api/providers');
  assert.equal(list.status, 200);
  assert.equal(list.body.total, list.body.providers.length);
  const anthropic = list.body.providers.find((p) => p.name === 'anthropic')!;
  assert.equal(anthropic.keys[0].value, 'sk-...test');
  assert.match(anthropic.keys[0].id, /^[0-9a-f-]{36}$/);
  const openai = list.body.providers.find((p) => p.name === 'openai')!;
  assert.equal(openai.network_config?.extra_headers?.['x-team'], 'search');
  assert.notEqual(openai.network_config?.extra_headers?.authorization, UPSTREAM_HEADER_SECRET);
  const bedrock = list.body.providers.find((p) => p.name === 'bedrock')!;
  assert.notEqual(bedrock.keys[0].bedrock_key_config?.secret_key, AWS_SECRET);
  assert.equal(bedrock.keys[0].bedrock_key_config?.region, 'us-east-1');
  for (const secret of ['sk-anthropic-test', 'sk-openai-test', 'sk-gemini-test', AWS_SECRET, UPSTREAM_HEADER_SECRET]) assert.ok(!list.text.includes(secret), `${secret} leaked`);

  const keys = await api<{ keys: Key[]; total: number }>('GET', '/api/providers/anthropic/keys');
  assert.equal(keys.body.total, 1);
  const one = await api<Key>('GET', `/api/providers/anthropic/keys/${keys.body.keys[0].id}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.name, 'anthropic-key');
  assert.equal(one.body.enabled, true);
  const all = await api<(Key & { provider: string })[]>('GET', '/api/keys');
  assert.ok(all.body.some((k) => k.provider === 'bedrock' && k.name === 'aws'));
  assertError(await api('GET', '/api/providers/nope'), 404);
  assertError(await api('GET', '/api/providers/anthropic/keys/00000000-0000-0000-0000-000000000000'), 404);
});

test('a provider added over the API serves the next request with its key; keys are added, disabled, updated and removed', async () => {
  assertError(await api('POST', '/api/providers', { provider: 'Bad Name' }), 400, 'provider');
  assertError(await api('POST', '/api/providers', { provider: 'mistral' }), 400, 'keys');
  assertError(await api('POST', '/api/providers', { provider: 'corp-llm', keys: [{ name: 'k', value: 'sk-corp' }] }), 400, 'provider');
  assertError(await api('POST', '/api/providers', { provider: 'corp-llm', keys: [{ name: 'k', value: 'sk-corp' }], custom_provider_config: { base_provider_type: 'openai' } }), 400, 'network_config.base_url');
  assertError(await api('POST', '/api/providers', { provider: 'openai', keys: [{ name: 'k', value: 'sk-x' }] }), 409, 'provider');
  assertError(await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g1' }] }), 400, 'keys[0].value');
  assertError(await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g1', value: GROQ_KEY }], network_config: { max_retries: 99 } }), 400, 'network_config.max_retries');
  const created = await api<Provider>('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g1', value: GROQ_KEY }], network_config: { base_url: `${mock.url}/openai` } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.name, 'groq');
  assert.ok(!created.text.includes(GROQ_KEY));

  mock.reset();
  await chat('groq/gpt-4o');
  assert.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${GROQ_KEY}`);

  // A second key; then the first disabled: requests now carry the second.
  const added = await api<Key>('POST', '/api/providers/groq/keys', { name: 'g2', value: GROQ_KEY_2 });
  assert.equal(added.status, 201, added.text);
  assert.equal(added.body.value, `gsk...${GROQ_KEY_2.slice(-4)}`);
  assertError(await api('POST', '/api/providers/groq/keys', { name: 'g2', value: 'gsk-whatever-0000000000' }), 409, 'name');
  assertError(await api('POST', '/api/providers/groq/keys', { id: '11111111-2222-3333-4444-555555555555', name: 'g3', value: 'gsk-whatever-0000000000' }), 400, 'id');
  assertError(await api('POST', '/api/providers/groq/keys', { name: 'g3', value: 'gsk-whatever-0000000000', weight: -1 }), 400, 'weight');
  const keys = await api<{ keys: Key[] }>('GET', '/api/providers/groq/keys');
  const g1 = keys.body.keys.find((k) => k.name === 'g1')!;
  const off = await api<Key>('PUT', `/api/providers/groq/keys/${g1.id}`, { enabled: false });
  assert.equal(off.status, 200, off.text);
  assert.equal(off.body.enabled, false);
  mock.reset();
  await chat('groq/gpt-4o');
  assert.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${GROQ_KEY_2}`);

  // Writing back the masked value (as read) keeps the stored key.
  const back = await api<Key>('PUT', `/api/providers/groq/keys/${g1.id}`, { ...g1, enabled: true });
  assert.equal(back.status, 200, back.text);
  const g2 = added.body;
  assert.equal((await api('PUT', `/api/providers/groq/keys/${g2.id}`, { enabled: false })).status, 200);
  mock.reset();
  await chat('groq/gpt-4o');
  assert.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${GROQ_KEY}`);

  // PUT on the provider merges its settings and keeps its keys.
  const put = await api<Provider>('PUT', '/api/providers/groq', { network_config: { base_url: `${mock.url}/openai`, max_retries: 1 } });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.network_config?.max_retries, 1);
  assert.deepEqual(put.body.keys.map((k) => k.name), ['g1', 'g2']);
  assertError(await api('PUT', '/api/providers/groq', { network_config: { max_retries: 'many' } }), 400, 'network_config.max_retries');
  assertError(await api('PUT', '/api/providers/nope', { send_back_raw_request: true }), 404);

  // A key pinned by a virtual key cannot be deleted or renamed; nor can its provider go.
  const vk = await api<{ virtual_key: { id: string } }>('POST', '/api/governance/virtual-keys', { name: 'groq-pinned', provider_configs: [{ provider: 'groq', allowed_models: ['gpt-4o'], key_ids: ['g1'] }] });
  assert.equal(vk.status, 201, vk.text);
  assert.match(assertError(await api('DELETE', `/api/providers/groq/keys/${g1.id}`), 409).error.message, /virtual key 'groq-pinned'/);
  assertError(await api('PUT', `/api/providers/groq/keys/${g1.id}`, { name: 'renamed' }), 409, 'name');
  assert.match(assertError(await api('DELETE', '/api/providers/groq'), 409).error.message, /virtual key 'groq-pinned'/);
  assert.equal((await api('DELETE', `/api/governance/virtual-keys/${vk.body.virtual_key.id}`)).status, 200);

  const removed = await api<Key>('DELETE', `/api/providers/groq/keys/${g2.id}`);
  assert.equal(removed.status, 200);
  assert.equal(removed.body.name, 'g2');
  assertError(await api('GET', `/api/providers/groq/keys/${g2.id}`), 404);
  assertError(await api('DELETE', `/api/providers/groq/keys/${g1.id}`), 409);
  const gone = await api<Provider>('DELETE', '/api/providers/groq');
  assert.equal(gone.status, 200);
  assert.equal(gone.body.name, 'groq');
  assertError(await api('GET', '/api/providers/groq'), 404);
  await assert.rejects(chat('groq/gpt-4o'), (err: unknown) => err instanceof OpenAI.APIError && err.status === 400);
  for (const secret of [GROQ_KEY, GROQ_KEY_2]) assert.ok(!g.logs().includes(secret), 'a provider key reached the log');
});

test('GET /api/config is the whole document with every secret masked', async () => {
  await api('POST', '/api/plugins', { name: 'logging', enabled: false, config: { api_key: PLUGIN_SECRET, log_repo_id: 'repo-1' } });
  const cfg = await api<{ providers: Record<string, Provider>; governance: { virtual_keys: { value: string }[] }; plugins: { config: Record<string, string> }[] }>('GET', '/api/config');
  assert.equal(cfg.status, 200);
  assert.ok(cfg.body.providers.openai);
  assert.equal(cfg.body.governance.virtual_keys[0].value, `sk-...${VK_VALUE.slice(-4)}`);
  assert.equal(cfg.body.plugins.find((p) => 'log_repo_id' in p.config)!.config.log_repo_id, 'repo-1');
  for (const secret of ['sk-anthropic-test', 'sk-openai-test', AWS_SECRET, UPSTREAM_HEADER_SECRET, VK_VALUE, PLUGIN_SECRET]) assert.ok(!cfg.text.includes(secret), `${secret} leaked`);
  assert.equal((await api('DELETE', '/api/plugins/logging')).status, 200);
  for (const secret of [AWS_SECRET, UPSTREAM_HEADER_SECRET, VK_VALUE, PLUGIN_SECRET]) assert.ok(!g.logs().includes(secret), `${secret} reached the log`);
});

test('plugins: create, read with secrets masked, disable keeping the config, masked secrets kept on write, delete', async () => {
  const created = await api<{ message: string; plugin: { name: string; enabled: boolean; config: Record<string, unknown> } }>('POST', '/api/plugins', {
    name: 'logging',
    config: { dimension: 1, ttl: '5m', api_key: PLUGIN_SECRET },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.plugin.enabled, true);
  assert.notEqual(created.body.plugin.config.api_key, PLUGIN_SECRET);
  assertError(await api('POST', '/api/plugins', { name: 'logging' }), 409, 'name');
  // A plugin this gateway does not have is refused, naming it.
  const unknown = await api<{ error: { message: string } }>('POST', '/api/plugins', { name: 'maxim', config: {} });
  assertError(unknown, 400, 'name');
  assert.match(unknown.body.error.message, /maxim/);
  assertError(await api('POST', '/api/plugins', { name: 'other', enabled: 'yes' }), 400, 'enabled');
  assertError(await api('POST', '/api/plugins', { enabled: true }), 400, 'name');

  const disabled = await api<{ plugin: { enabled: boolean; config: Record<string, unknown>; status: { status: string } } }>('PUT', '/api/plugins/logging', { enabled: false });
  assert.equal(disabled.status, 200, disabled.text);
  assert.equal(disabled.body.plugin.enabled, false);
  assert.equal(disabled.body.plugin.status.status, 'disabled');
  assert.equal(disabled.body.plugin.config.dimension, 1);
  assert.equal(disabled.body.plugin.config.ttl, '5m');

  const read = await api<{ config: Record<string, unknown> }>('GET', '/api/plugins/logging');
  assert.equal(read.status, 200);
  const updated = await api('PUT', '/api/plugins/logging', { enabled: true, config: { ...read.body.config, ttl: '10m' } });
  assert.equal(updated.status, 200, updated.text);
  // The store holds the real secret, untouched by the masked round trip.
  const stored = readFileSync(join(g.appDir, 'config.store.json'), 'utf8');
  assert.ok(stored.includes(PLUGIN_SECRET));
  assert.ok(stored.includes('"10m"'));
  assertError(await api('PUT', '/api/plugins/logging', { name: 'renamed' }), 400, 'name');
  assertError(await api('PUT', '/api/plugins/logging', { placement: 'middle' }), 400, 'placement');

  const list = await api<{ plugins: { name: string }[]; count: number }>('GET', '/api/plugins');
  assert.deepEqual(list.body.plugins.map((p) => p.name), ['logging']);
  assert.equal(list.body.count, 1);
  assert.equal((await api('DELETE', '/api/plugins/logging')).status, 200);
  assertError(await api('GET', '/api/plugins/logging'), 404);
  assertError(await api('PUT', '/api/plugins/logging', { enabled: true }), 404);
  assertError(await api('DELETE', '/api/plugins/logging'), 404);
});

test('models, version and unknown routes', async () => {
  const models = await api<{ models: { name: string; provider: string; accessible_by_keys: string[] }[]; total: number }>('GET', '/api/models');
  assert.equal(models.status, 200);
  assert.equal(models.body.models.length, 5);
  assert.ok(models.body.total > 5);
  const claude = await api<{ models: { name: string; provider: string; accessible_by_keys: string[] }[] }>('GET', '/api/models?provider=anthropic&query=CLAUDE&limit=0');
  assert.ok(claude.body.models.length > 0);
  assert.ok(claude.body.models.every((m) => m.provider === 'anthropic' && m.name.includes('claude')));
  const anthropicKey = (await api<{ keys: Key[] }>('GET', '/api/providers/anthropic/keys')).body.keys[0].id;
  assert.ok(claude.body.models.every((m) => m.accessible_by_keys.includes(anthropicKey)));
  assertError(await api('GET', '/api/models?provider=nope'), 400, 'provider');

  const version = await api<string>('GET', '/api/version');
  assert.equal(version.status, 200);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(version.body, pkg.version);

  assertError(await api('GET', '/api/nothing/here'), 404);
  assertError(await api('PATCH', '/api/providers'), 405);
});

test('an HTTP/2 (h2c) request to /api is refused with 505, and the gateway keeps serving', async () => {
  const session = connect(g.url);
  try {
    const stream = session.request({ ':method': 'GET', ':path': '/api/providers' });
    stream.end();
    let status = 0;
    let text = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d: Buffer) => (text += d.toString()));
    await new Promise((resolve, reject) => {
      stream.once('end', resolve);
      stream.once('error', reject);
    });
    assert.equal(status, 505);
    assert.equal((JSON.parse(text) as ApiError).status_code, 505);
  } finally {
    session.close();
  }
  assert.equal((await api('GET', '/api/version')).status, 200);
});
