// A web page cannot spend a developer's gateway: a key-spending write without a virtual key is
// refused (403 naming the header) when a browser marks it cross-site (foreign Origin,
// Sec-Fetch-Site) or its body is one a page posts without asking (text/plain, url-encoded). SDK
// clients, the configured origins and virtual-key holders go through.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';

const VK = 'sk-bf-page-0123456789';
const APP = 'http://app.example:3000';
let mock: MockProvider | undefined;
let g: InProcessGateway | undefined;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { allowed_origins: [APP] },
    governance: { virtual_keys: [{ id: 'page', name: 'page', value: VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] }] },
  });
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

const body = JSON.stringify({ model: 'openai/gpt-4o', max_tokens: 20, messages: [{ role: 'user', content: 'spend it' }] });
const post = (path: string, headers: Record<string, string>) => fetch(`${g!.url}${path}`, { method: 'POST', headers, body });

async function refused(res: Response, param: string, native = false): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 403, text);
  const err = (JSON.parse(text) as { error: { code: string; param: string; message: string } }).error;
  assert.match(err.message, /^cross-site request refused: .*virtual key/);
  // Native prefixes answer in their provider's error shape, which has no code or param.
  if (native) return;
  assert.equal(err.code, 'cross_site_request');
  assert.equal(err.param, param);
}

test('a page on another site cannot post to inference or passthrough without a virtual key; the provider is never called', async () => {
  const sent = mock!.requests.length;
  for (const path of ['/v1/chat/completions', '/openai_passthrough/v1/chat/completions', '/anthropic/v1/messages']) {
    const native = path.startsWith('/anthropic/');
    await refused(await post(path, { 'content-type': 'text/plain;charset=UTF-8' }), 'content-type', native);
    await refused(await post(path, { 'content-type': 'application/x-www-form-urlencoded' }), 'content-type', native);
    await refused(await post(path, { 'content-type': 'application/json', origin: 'https://evil.example' }), 'origin', native);
    await refused(await post(path, { 'content-type': 'application/json', origin: 'null' }), 'origin', native);
    await refused(await post(path, { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }), 'sec-fetch-site', native);
  }
  assert.equal(mock!.requests.length, sent);
});

test('SDK clients, the configured origin, the gateway\'s own pages and virtual-key holders go through', async () => {
  const sdk = new OpenAI({ baseURL: `${g!.url}/v1`, apiKey: 'placeholder', maxRetries: 0 });
  const done = await sdk.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  assert.ok(done.choices[0].message.content);
  const allowed = await post('/v1/chat/completions', { 'content-type': 'application/json', origin: APP, 'sec-fetch-site': 'cross-site' });
  assert.equal(allowed.status, 200, await allowed.text());
  assert.equal(allowed.headers.get('access-control-allow-origin'), APP);
  const own = await post('/v1/chat/completions', { 'content-type': 'application/json', origin: g!.url, 'sec-fetch-site': 'same-origin' });
  assert.equal(own.status, 200, await own.text());
  const withKey = await post('/v1/chat/completions', { 'content-type': 'text/plain', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'x-bf-vk': VK });
  assert.equal(withKey.status, 200, await withKey.text());
  // Reads are not writes: a cross-site GET spends nothing and its answer stays unreadable to the page.
  assert.equal((await fetch(`${g!.url}/v1/models`, { headers: { origin: 'https://evil.example' } })).status, 200);
});
