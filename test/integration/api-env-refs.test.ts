// env.VAR references written through /api: the name comes from the caller, the value goes out in a
// request the gateway sends. A write may name only variables the configuration already uses or the
// deployment allows (SKYBRIDGE_API_ENV_REFS); anything else in the gateway's environment stays there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';

const DB_PASSWORD = 'pg-password-never-leaves-0042';
const OPENAI_KEY = 'sk-openai-from-env-0001';
const TEAM_TOKEN = 'team-token-allowed-0077';

let mock: MockProvider;
let g: InProcessGateway;
let api: Api;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway(
    // Logging on: webhooks need the request-log store.
    // config.json uses OPENAI_KEY_VAR (for anthropic); the provider the tests edit is created through
    // /api, since objects of config.json are read-only there.
    { client: { enable_logging: true }, providers: { anthropic: { keys: [{ name: 'k', value: 'env.OPENAI_KEY_VAR', weight: 1 }], network_config: { base_url: `${mock.url}/anthropic`, max_retries: 0 } } } },
    { env: { OPENAI_KEY_VAR: OPENAI_KEY, DB_PASSWORD, TEAM_TOKEN_A: TEAM_TOKEN, SKYBRIDGE_API_ENV_REFS: 'TEAM_TOKEN_*, OTHER' } },
  );
  api = apiClient(g);
  const created = await api('POST', '/api/providers', { provider: 'openai', ...withHeaders({}) });
  assert.equal(created.status, 201, created.text);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

const sdk = () => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'unused', maxRetries: 0 });
const upstreamHeaders = async () => {
  mock.requests.length = 0;
  await sdk().chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  return mock.requests.find((r) => r.format === 'openai')?.headers ?? {};
};
const withHeaders = (extra: Record<string, string>) => ({ keys: [{ name: 'k', value: 'env.OPENAI_KEY_VAR', weight: 1 }], network_config: { base_url: `${mock.url}/openai`, max_retries: 0, extra_headers: extra } });

test('an /api write naming a variable the configuration does not use is refused with its path; the value never leaves', async () => {
  const r = await api('PUT', '/api/providers/openai', withHeaders({ 'x-leak': 'env.DB_PASSWORD' }));
  assert.equal(r.status, 400, r.text);
  const err = r.body as unknown as ApiError;
  assert.match(err.error.message, /network_config\.extra_headers\.x-leak/);
  assert.match(err.error.message, /env\.DB_PASSWORD is not a variable this configuration already uses, and SKYBRIDGE_API_ENV_REFS does not allow it/);
  assert.ok(!r.text.includes(DB_PASSWORD));
  // The same as a webhook's header, and as a new provider's key.
  const hook = await api('POST', '/api/webhooks', { name: 'w', url: 'https://hooks.example.com/x', events: ['async_job.completed'], headers: { 'x-leak': 'env.DB_PASSWORD' } });
  assert.equal(hook.status, 400, hook.text);
  assert.match(hook.text, /env\.DB_PASSWORD is not a variable this configuration already uses/);
  assert.equal((await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g', value: 'env.DB_PASSWORD' }], network_config: { base_url: `${mock.url}/openai` } })).status, 400);
  // Nothing changed: upstream calls carry the key and no such header.
  const headers = await upstreamHeaders();
  assert.equal(headers.authorization, `Bearer ${OPENAI_KEY}`);
  assert.equal(headers['x-leak'], undefined);
  assert.ok(!JSON.stringify(mock.requests).includes(DB_PASSWORD));
});

test('variables the configuration already uses, and those SKYBRIDGE_API_ENV_REFS allows, can be written', async () => {
  const r = await api('PUT', '/api/providers/openai', withHeaders({ 'x-team': 'env.TEAM_TOKEN_A' }));
  assert.equal(r.status, 200, r.text);
  assert.equal((await upstreamHeaders())['x-team'], TEAM_TOKEN);
  // What the configuration uses stays writable: the provider as read back (references as they are).
  const stored = (await api<Record<string, unknown>>('GET', '/api/providers/openai')).body;
  assert.equal((await api('PUT', '/api/providers/openai', { keys: stored.keys, network_config: stored.network_config })).status, 200);
  assert.equal((await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g', value: 'env.OPENAI_KEY_VAR' }], network_config: { base_url: `${mock.url}/openai` } })).status, 201);
});
