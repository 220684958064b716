// Guessing keys is as slow as guessing passwords: refused virtual keys (inference) and management
// API keys (/api) count against the client address like failed logins, and after five in a minute
// that address gets 429 with Retry-After on every attempt, right or wrong. Each test speaks from its
// own loopback address so their counts stay apart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';

const VK = 'sk-bf-real-0123456789';
const MGMT = 'mgmt-real-key-0123456789';
let mock: MockProvider | undefined;
let g: InProcessGateway | undefined;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      auth_config: { is_enabled: true, api_keys: [MGMT] },
      virtual_keys: [{ id: 'real', name: 'real', value: VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] }],
    },
  });
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

function call(from: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; retryAfter: string | undefined; error: { code?: string; message: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${g!.url}${path}`, { method, headers, localAddress: from }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const parsed = text ? (JSON.parse(text) as { error?: { code?: string; message: string } }) : {};
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, error: parsed.error ?? { message: '' } });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const chat = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
const infer = (from: string, headers: Record<string, string>) => call(from, 'POST', '/v1/chat/completions', { 'content-type': 'application/json', ...headers }, chat);

test('five refused virtual keys from one address: 429 with Retry-After, even for the right key; other addresses unaffected', async () => {
  const guesser = '127.0.0.21';
  for (let i = 0; i < 3; i++) assert.equal((await infer(guesser, { 'x-bf-vk': `sk-bf-guess-${i}-0123456789` })).status, 401);
  for (let i = 0; i < 2; i++) assert.equal((await infer(guesser, { authorization: `Bearer sk-bf-guess-b${i}-0123456789` })).status, 401);
  const sent = mock!.requests.length;
  const locked = await infer(guesser, { 'x-bf-vk': VK });
  assert.equal(locked.status, 429);
  assert.equal(locked.error.code, 'too_many_key_attempts');
  assert.match(locked.error.message, /too many failed API key attempts from this address: retry in \d+ s/);
  const wait = Number(locked.retryAfter);
  assert.ok(wait >= 1 && wait <= 60, String(locked.retryAfter));
  assert.equal(mock!.requests.length, sent, 'a locked-out address reaches no provider');
  assert.equal((await infer('127.0.0.22', { 'x-bf-vk': VK })).status, 200);
});

test('five refused management API keys from one address: 429 with Retry-After on /api, the right key included', async () => {
  const guesser = '127.0.0.23';
  for (let i = 0; i < 3; i++) assert.equal((await call(guesser, 'GET', '/api/providers', { authorization: `Bearer guess-${i}` })).status, 401);
  for (let i = 0; i < 2; i++) assert.equal((await call(guesser, 'GET', '/api/providers', { 'x-api-key': `guess-x${i}` })).status, 401);
  const locked = await call(guesser, 'GET', '/api/providers', { authorization: `Bearer ${MGMT}` });
  assert.equal(locked.status, 429);
  assert.ok(Number(locked.retryAfter) >= 1, String(locked.retryAfter));
  // Guesses on one surface count on the other: the same address is locked out of inference too.
  assert.equal((await infer(guesser, { 'x-bf-vk': VK })).status, 429);
  assert.equal((await call('127.0.0.24', 'GET', '/api/providers', { authorization: `Bearer ${MGMT}` })).status, 200);
});
