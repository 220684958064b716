// Every object has an owner: config.json's objects are read-only through /api (409 naming the
// file), objects created through /api survive any edit of config.json and any restart, and a clash
// between the two is resolved one way (the file wins) and reported, never silent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type Api, type ApiError } from '../helpers/api.ts';

let mock: MockProvider;
let g: RunningGateway | undefined;
let api: Api;

const FILE_VK = 'sk-bf-file-managed-virtual-key-0001';
const fileConfig = (extra: Record<string, unknown> = {}, vks: unknown[] = []) => ({
  providers: mockProviders(mock.url),
  governance: { virtual_keys: [{ id: 'vk-file', name: 'from-file', value: FILE_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] }, ...vks] },
  ...extra,
});

interface Vk {
  id: string;
  name: string;
  value: string;
  owner?: string;
  managed_by?: string;
  source?: string;
}

const chat = (gw: RunningGateway, vk: string) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: vk, maxRetries: 0 }).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

before(async () => {
  mock = await startMockProvider();
  g = await startGateway(fileConfig());
  api = apiClient(g);
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

test('an object of config.json is file-managed: /api shows it so and answers a write to it 409 naming the file', async () => {
  const file = join(g!.appDir, 'config.json');
  const read = await api<{ virtual_key: Vk }>('GET', '/api/governance/virtual-keys/vk-file');
  assert.equal(read.body.virtual_key.owner, 'file');
  assert.equal(read.body.virtual_key.managed_by, 'file');
  assert.equal(read.body.virtual_key.source, file);
  for (const [method, path, body] of [
    ['PUT', '/api/governance/virtual-keys/vk-file', { description: 'changed' }],
    ['DELETE', '/api/governance/virtual-keys/vk-file', undefined],
    ['POST', '/api/providers/openai/keys', { name: 'extra', value: 'sk-extra' }],
    ['DELETE', '/api/providers/openai', undefined],
  ] as const) {
    const res = await api<ApiError>(method, path, body);
    assert.equal(res.status, 409, `${method} ${path}: ${res.text}`);
    assert.equal(res.body.error.type, 'conflict_error');
    assert.ok(res.body.error.message.includes(file), res.body.error.message);
  }
  // Nothing changed: the file's key still serves.
  assert.equal((await chat(g!, FILE_VK)).object, 'chat.completion');
});

test('a virtual key created through /api survives an edit of config.json and a restart', async () => {
  const created = await api<{ virtual_key: Vk }>('POST', '/api/governance/virtual-keys', { name: 'made-here', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] });
  assert.equal(created.status, 201, created.text);
  const vk = created.body.virtual_key;
  assert.equal(vk.owner, 'store');
  assert.equal(vk.managed_by, undefined);
  assert.equal((await chat(g!, vk.value)).object, 'chat.completion');

  // Someone edits config.json (a new team): the key made here keeps working.
  const reloads = (g!.logs().match(/configuration reloaded/g) ?? []).length;
  const edited = fileConfig();
  g!.writeConfig({ ...edited, governance: { ...edited.governance, teams: [{ id: 'team-file', name: 'file-team' }] } });
  await eventually(() => assert.equal((g!.logs().match(/configuration reloaded/g) ?? []).length, reloads + 1), 20_000);
  assert.match(g!.logs(), /"kept_from_api":1/);
  assert.equal((await api('GET', '/api/governance/teams/team-file')).status, 200);
  assert.equal((await chat(g!, vk.value)).object, 'chat.completion');
  // Still the store's to change.
  assert.equal((await api('PUT', `/api/governance/virtual-keys/${vk.id}`, { description: 'edited here' })).status, 200);

  // And a restart.
  const appDir = g!.appDir;
  await g!.stop();
  g = await startGateway(undefined, { appDir });
  api = apiClient(g);
  const after = await api<{ virtual_key: Vk & { description?: string } }>('GET', `/api/governance/virtual-keys/${vk.id}`);
  assert.equal(after.status, 200, after.text);
  assert.equal(after.body.virtual_key.description, 'edited here');
  assert.equal((await chat(g, vk.value)).object, 'chat.completion');
});

test('a name clash between config.json and /api: the file wins, the /api object is set aside, reported and kept', async () => {
  const created = await api<{ virtual_key: Vk }>('POST', '/api/governance/virtual-keys', { id: 'vk-clash', name: 'clash', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] });
  assert.equal(created.status, 201, created.text);
  const storeValue = created.body.virtual_key.value;

  // config.json now defines a key with the same name (another id, another value).
  const clashing = { id: 'vk-file-2', name: 'clash', value: 'sk-bf-file-clash-0000000000001', provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }] };
  g!.writeConfig(fileConfig({}, [clashing]));
  await eventually(async () => assert.equal((await api('GET', '/api/governance/virtual-keys/vk-file-2')).status, 200), 20_000);
  assert.match(g!.logs(), /set aside[^\n]*virtual key 'vk-clash'/);
  const status = await api<{ set_aside: { section: string; id: string; reason: string }[] }>('GET', '/api/config/status');
  assert.equal(status.body.set_aside.length, 1, status.text);
  assert.equal(status.body.set_aside[0].id, 'vk-clash');
  assert.match(status.body.set_aside[0].reason, /duplicate/);
  const info = await api<{ config_notices: string[] }>('GET', '/api/dashboard');
  assert.ok(info.body.config_notices.some((n) => n.includes("'vk-clash'")), info.text);
  // The set-aside key does not serve; the file's does.
  await assert.rejects(chat(g!, storeValue), (err: { status?: number }) => err.status === 401);
  assert.equal((await chat(g!, clashing.value)).object, 'chat.completion');

  // The clash resolved in the file: the /api key is back, nothing lost.
  g!.writeConfig(fileConfig());
  await eventually(async () => assert.equal((await api('GET', '/api/governance/virtual-keys/vk-clash')).status, 200), 20_000);
  assert.equal((await api<{ set_aside: unknown[] }>('GET', '/api/config/status')).body.set_aside.length, 0);
  assert.equal((await chat(g!, storeValue)).object, 'chat.completion');
});

test("a virtual key created with allowed_models ['*'] serves a listed model as soon as the write answers; an unlisted model's 403 blames the catalog", async () => {
  // The provider's list-models answer is slow: the write must wait for it, not the first request fail.
  mock.inject({ format: 'openai', latencyMs: 1500, times: 1 });
  const created = await api<{ virtual_key: Vk }>('POST', '/api/governance/virtual-keys', { name: 'everything', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] });
  assert.equal(created.status, 201, created.text);
  assert.equal((await chat(g!, created.body.virtual_key.value)).object, 'chat.completion');
  const client = new OpenAI({ baseURL: `${g!.url}/v1`, apiKey: created.body.virtual_key.value, maxRetries: 0 });
  await assert.rejects(client.chat.completions.create({ model: 'openai/not-a-listed-model', messages: [{ role: 'user', content: 'hi' }] }), (err: { status?: number; message?: string }) => {
    assert.equal(err.status, 403);
    assert.match(err.message ?? '', /not in the model catalog of provider 'openai'/);
    return true;
  });
});
