// OpenAI's Containers API through the gateway with the official SDK (client.containers.* and
// client.containers.files.*), against the mock's in-memory containers: create, list (the SDK's
// auto-pagination over `after`), retrieve, delete; container files uploaded or copied from a
// Files API file, listed, retrieved, downloaded byte for byte and deleted. Governed like files:
// a virtual key is required and its provider rules apply, rate limits and budgets too (a created
// container is charged its session's minimum), one call with the account's first key, never
// retried; logged as container_* request types and counted in the metrics. Azure OpenAI serves
// it on its v1 API; other providers get the unsupported-operation 400; bad input a 400 naming
// the field; /v1/async/containers is no route.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { compat } from '../helpers/compat.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-containers-vk-0123456789';
const CHAT_ONLY_VK = 'sk-bf-containers-chat-only-0123';
const LIMITED_VK = 'sk-bf-containers-limited-0123';
const BUDGET_VK = 'sk-bf-containers-budget-01234';
const AZURE_API_VERSION = '2024-10-21';

let stack: Stack;
before(async () => {
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u, {
        // Two enabled keys: resources live in one account, so every call must use the first.
        openai: { keys: [{ name: 'first', value: 'sk-openai-first', weight: 1 }, { name: 'second', value: 'sk-openai-second', weight: 1 }], network_config: { base_url: `${u}/openai`, max_retries: 3, retry_backoff_initial_ms: 1, retry_backoff_max_ms: 2, max_response_body_size_mb: 1 } },
      }),
      // An OpenAI-compatible server inherits OpenAI's operations, containers among them.
      selfhosted: mockProvider(u, 'openai', { custom_provider_config: { base_provider_type: 'openai' } }, 'selfhosted'),
      azure: {
        keys: [{ name: 'az', value: 'azure-key', weight: 1, azure_key_config: { endpoint: `${u}/azure`, api_version: AZURE_API_VERSION } }],
        network_config: { max_retries: 0 },
      },
    },
    governance: {
      budgets: [{ id: 'containers-budget', max_limit: 0.05, reset_duration: '1d' }],
      rate_limits: [{ id: 'containers-rl', request_max_limit: 3, request_reset_duration: '1h' }],
      virtual_keys: [
        {
          id: 'containers-vk',
          name: 'containers-vk',
          value: VK,
          provider_configs: ['openai', 'selfhosted', 'azure', 'anthropic'].map((provider) => ({ provider, allowed_models: ['*'], key_ids: ['*'], weight: 1 })),
        },
        { id: 'chat-only', name: 'chat-only', value: CHAT_ONLY_VK, provider_configs: [{ provider: 'anthropic', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] },
        { id: 'limited', name: 'limited', value: LIMITED_VK, rate_limit_id: 'containers-rl', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] },
        { id: 'budgeted', name: 'budgeted', value: BUDGET_VK, budget_id: 'containers-budget', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] },
      ],
    },
    client: { enable_logging: true, enforce_auth_on_inference: true },
  }));
});
after(() => stack.close());

/** `key` '' sends no virtual key. */
const client = (key = VK, base = '/v1') =>
  new OpenAI({ baseURL: `${stack.gateway.url}${base}`, apiKey: 'none', maxRetries: 0, ...(key && { defaultHeaders: { 'x-bf-vk': key } }) });


/** The last Containers or Files API call the mock got (the gateway's own model-list refreshes are not). */
function lastUpstream() {
  const r = stack.mock.requests.findLast((x) => /\/v1\/(containers|files)\b/.test(x.path));
  assert.ok(r, 'the upstream was called');
  return r;
}

const resourceCalls = () => stack.mock.requests.filter((x) => /\/v1\/(containers|files)\b/.test(x.path)).length;

const extraOf = (v: unknown) => (v as { extra_fields: { provider: string; request_type: string } }).extra_fields;

interface LogEntry {
  object: string;
  provider?: string;
  virtual_key_id?: string;
  status: string;
  cost?: number;
  selected_key_name?: string;
}

async function logged(object: string, match: (e: LogEntry) => boolean = () => true): Promise<LogEntry> {
  let hit: LogEntry | undefined;
  await eventually(async () => {
    const res = await fetch(`${stack.gateway.url}/api/logs?limit=200&objects=${object}`);
    const logs = ((await res.json()) as { logs: LogEntry[] }).logs;
    hit = logs.find((e) => e.object === object && match(e));
    assert.ok(hit, `no ${object} record yet`);
  }, 5000);
  return hit!;
}

describe('containers', () => {
  test(`create, retrieve, list and delete ${compat('/v1', 'containers', 'openai')}`, async () => {
    const c = client();
    const created = await c.containers.create({ name: 'analysis', expires_after: { anchor: 'last_active_at', minutes: 30 }, memory_limit: '4g' });
    assert.match(created.id, /^cntr_/);
    assert.equal(created.object, 'container');
    assert.equal(created.name, 'analysis');
    assert.equal(created.status, 'running');
    assert.equal(created.memory_limit, '4g');
    assert.deepEqual(created.expires_after, { anchor: 'last_active_at', minutes: 30 });
    assert.deepEqual([extraOf(created).provider, extraOf(created).request_type], ['openai', 'container_create']);
    const up = lastUpstream();
    assert.equal(up.path, '/openai/v1/containers');
    assert.equal(up.headers.authorization, 'Bearer sk-openai-first');

    const got = await c.containers.retrieve(created.id);
    assert.deepEqual([got.id, got.name, got.memory_limit], [created.id, 'analysis', '4g']);

    const ids: string[] = [];
    for await (const item of c.containers.list({ order: 'asc' })) ids.push(item.id);
    assert.ok(ids.includes(created.id));

    await c.containers.delete(created.id);
    assert.equal(lastUpstream().method, 'DELETE');
    const gone = await errorOf(c.containers.retrieve(created.id));
    assert.equal(gone.status, 404);
    assert.match(gone.message, /not found/);
  });

  test('auto-pagination follows the cursor through the gateway, page by page', async () => {
    const c = client();
    const name = `paged-${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await c.containers.create({ name })).id);
    const before = stack.mock.requests.length;
    const seen: string[] = [];
    for await (const item of c.containers.list({ limit: 2, order: 'asc', name } as OpenAI.Containers.ContainerListParams)) seen.push(item.id);
    assert.deepEqual(seen.sort(), [...made].sort());
    const pages = stack.mock.requests.slice(before).filter((r) => r.path === '/openai/v1/containers' && r.method === 'GET');
    assert.equal(pages.length, 3, 'three pages of two');
    assert.equal(pages[0].query.after, undefined);
    assert.ok(pages[1].query.after, 'the second page asks after the first page');
    assert.deepEqual([pages[0].query.limit, pages[0].query.name], ['2', name]);
    for (const id of made) await c.containers.delete(id);
  });

  for (const base of ['/openai/v1', '/openai', '/litellm/v1']) {
    test(`served under ${base} ${compat(base, 'containers', 'openai')}`, async () => {
      const c = client(VK, base);
      const created = await c.containers.create({ name: `under ${base}` });
      assert.equal((await c.containers.retrieve(created.id)).name, `under ${base}`);
      const file = await c.containers.files.create(created.id, { file: await toFile(Buffer.from('print(1)\n'), 'a.py') });
      const content = await c.containers.files.content.retrieve(file.id, { container_id: created.id });
      assert.equal(await content.text(), 'print(1)\n');
      await c.containers.delete(created.id);
    });
  }

  test('the provider is chosen by body field, query parameter or header, and never forwarded', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/containers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-vk': VK },
      body: JSON.stringify({ name: 'by body', provider: 'selfhosted' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const created = (await res.json()) as { id: string; extra_fields: { provider: string } };
    assert.equal(created.extra_fields.provider, 'selfhosted');
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-selfhosted-test');
    assert.deepEqual(Object.keys(lastUpstream().body as object), ['name']);

    // An upload names it as a form field; the field is not forwarded.
    const form = new FormData();
    form.append('provider', 'selfhosted');
    form.append('file', new File(['x = 1\n'], 'x.py'));
    const up = await fetch(`${stack.gateway.url}/v1/containers/${created.id}/files`, { method: 'POST', headers: { 'x-bf-vk': VK }, body: form });
    assert.equal(up.status, 200, await up.clone().text());
    assert.equal(((await up.json()) as { extra_fields: { provider: string } }).extra_fields.provider, 'selfhosted');
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-selfhosted-test');
    assert.deepEqual(Object.keys(lastUpstream().body as object), ['file']);

    await client().containers.retrieve(created.id, { query: { provider: 'selfhosted' } });
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-selfhosted-test');
    assert.equal(lastUpstream().query.provider, undefined, 'the gateway parameter is not forwarded');
    await client().containers.delete(created.id, { headers: { 'x-model-provider': 'selfhosted' } });
    assert.equal(lastUpstream().headers.authorization, 'Bearer sk-selfhosted-test');
  });

  test(`Azure OpenAI serves them on its v1 API, without api-version ${compat('/v1', 'containers', 'azure')} ${compat('/v1', 'containers.files', 'azure')}`, async () => {
    const c = client();
    const created = await c.containers.create({ name: 'on azure' }, { query: { provider: 'azure' } });
    assert.equal(extraOf(created).provider, 'azure');
    const up = lastUpstream();
    assert.equal(up.path, '/azure/openai/v1/containers');
    assert.equal(up.query['api-version'], undefined);
    assert.equal(up.headers['api-key'], 'azure-key');
    const file = await c.containers.files.create(created.id, { file: await toFile(Buffer.from('x,y\n1,2\n'), 'data.csv') }, { query: { provider: 'azure' } });
    assert.equal(lastUpstream().path, `/azure/openai/v1/containers/${created.id}/files`);
    const content = await c.containers.files.content.retrieve(file.id, { container_id: created.id }, { query: { provider: 'azure' } });
    assert.equal(await content.text(), 'x,y\n1,2\n');
    // Azure answers a delete with no body: relayed empty, not a 502 for a missing JSON object.
    const res = await fetch(`${stack.gateway.url}/v1/containers/${created.id}?provider=azure`, { method: 'DELETE', headers: { 'x-bf-vk': VK } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    const gone = await errorOf(c.containers.retrieve(created.id, { query: { provider: 'azure' } }));
    assert.equal(gone.status, 404);
    // The SDK's delete takes the empty answer too.
    const other = await c.containers.create({ name: 'on azure, deleted by the SDK' }, { query: { provider: 'azure' } });
    await c.containers.delete(other.id, { query: { provider: 'azure' } });
    assert.equal((await errorOf(c.containers.retrieve(other.id, { query: { provider: 'azure' } }))).status, 404);
  });

  test('a provider without containers is the unsupported-operation 400, and nothing goes upstream', async () => {
    const before = resourceCalls();
    const err = await errorOf(client().containers.list({}, { query: { provider: 'anthropic' } }));
    assert.equal(err.status, 400);
    assert.equal((err.error as { type?: string }).type, 'unsupported_operation');
    assert.match(err.message, /containers.*anthropic/);
    assert.equal(resourceCalls(), before);
  });

  test('bad input is a 400 naming the field, before anything goes upstream', async () => {
    const before = resourceCalls();
    const c = client();
    const noName = await errorOf(c.containers.create({} as OpenAI.Containers.ContainerCreateParams));
    assert.equal(noName.status, 400);
    assert.equal((noName.error as { param?: string }).param, 'name');
    const memory = await errorOf(c.containers.create({ name: 'x', memory_limit: '2g' as '1g' }));
    assert.equal((memory.error as { param?: string }).param, 'memory_limit');
    const minutes = await errorOf(c.containers.create({ name: 'x', expires_after: { anchor: 'last_active_at', minutes: 'ten' as unknown as number } }));
    assert.equal((minutes.error as { param?: string }).param, 'expires_after.minutes');
    const fileIds = await errorOf(c.containers.create({ name: 'x', file_ids: 'file-1' as unknown as string[] }));
    assert.equal((fileIds.error as { param?: string }).param, 'file_ids');
    const noFile = await errorOf(c.containers.files.create('cntr_any', {}));
    assert.equal(noFile.status, 400);
    assert.equal((noFile.error as { param?: string }).param, 'file_id');
    const form = new FormData();
    form.append('file', 'not a file');
    const res = await fetch(`${stack.gateway.url}/v1/containers/cntr_any/files`, { method: 'POST', headers: { 'x-bf-vk': VK }, body: form });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'file');
    assert.equal(resourceCalls(), before);
  });

  test("the provider's own errors come back with its status, marked as the provider's", async () => {
    const res = await fetch(`${stack.gateway.url}/v1/containers/cntr_missing`, { headers: { 'x-bf-vk': VK } });
    const body = (await res.json()) as { is_bifrost_error: boolean; extra_fields: { provider: string } };
    assert.deepEqual([res.status, body.is_bifrost_error, body.extra_fields.provider], [404, false, 'openai']);
  });

  test('it is not async: /v1/async/containers is no route', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/async/containers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-vk': VK },
      body: JSON.stringify({ name: 'later' }),
    });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /no route/);
  });
});

describe('container files', () => {
  test(`upload, copy from a file, list, retrieve, download and delete ${compat('/v1', 'containers.files', 'openai')}`, async () => {
    const c = client();
    const container = await c.containers.create({ name: 'files' });
    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 256));
    const uploaded = await c.containers.files.create(container.id, { file: await toFile(bytes, 'blob.bin', { type: 'application/octet-stream' }) });
    assert.match(uploaded.id, /^cfile_/);
    assert.deepEqual([uploaded.object, uploaded.container_id, uploaded.path, uploaded.bytes], ['container.file', container.id, '/mnt/data/blob.bin', bytes.length]);
    assert.equal(extraOf(uploaded).request_type, 'container_file_create');
    assert.match(String(lastUpstream().headers['content-type']), /^multipart\/form-data; boundary=/);

    // A file of the Files API, copied in by id (a JSON body).
    const source = await c.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'table.csv'), purpose: 'user_data' });
    const copied = await c.containers.files.create(container.id, { file_id: source.id });
    assert.equal(copied.path, '/mnt/data/table.csv');
    assert.deepEqual(lastUpstream().body, { file_id: source.id });

    const got = await c.containers.files.retrieve(uploaded.id, { container_id: container.id });
    assert.equal(got.bytes, bytes.length);

    const listed: string[] = [];
    for await (const f of c.containers.files.list(container.id, { limit: 1 })) listed.push(f.id);
    assert.deepEqual(listed.sort(), [copied.id, uploaded.id].sort());

    const content = await c.containers.files.content.retrieve(uploaded.id, { container_id: container.id });
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), bytes);
    assert.equal(lastUpstream().path, `/openai/v1/containers/${container.id}/files/${uploaded.id}/content`);

    await c.containers.files.delete(copied.id, { container_id: container.id });
    const gone = await errorOf(c.containers.files.retrieve(copied.id, { container_id: container.id }));
    assert.equal(gone.status, 404);
    await c.containers.delete(container.id);
  });

  test('content is relayed as it arrives, not read whole: a file past the 1 MiB answer bound downloads intact', async () => {
    const c = client();
    const container = await c.containers.create({ name: 'big' });
    // 3 MiB of varied bytes: a JSON answer this size would be refused (max_response_body_size_mb: 1).
    const bytes = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 10)) & 0xff;
    const file = await c.containers.files.create(container.id, { file: await toFile(bytes, 'big.bin') });
    const res = await c.containers.files.content.retrieve(file.id, { container_id: container.id });
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), 'the bytes came back as uploaded');
    await c.containers.delete(container.id);
  });

  test('a container made with file_ids holds copies of those files', async () => {
    const c = client();
    const source = await c.files.create({ file: await toFile(Buffer.from('hello'), 'hello.txt'), purpose: 'user_data' });
    const container = await c.containers.create({ name: 'seeded', file_ids: [source.id] });
    const files = (await c.containers.files.list(container.id)).data;
    assert.deepEqual(files.map((f) => [f.path, f.bytes]), [['/mnt/data/hello.txt', 5]]);
    await c.containers.delete(container.id);
  });
});

describe('governance', () => {
  test('a virtual key is required, and its provider rules apply', async () => {
    const none = await errorOf(client('').containers.list());
    assert.equal(none.status, 401);
    // The key allows no provider with containers: nothing to default to.
    const chatOnly = await errorOf(client(CHAT_ONLY_VK).containers.list());
    assert.equal(chatOnly.status, 400);
    assert.equal((chatOnly.error as { type?: string }).type, 'unsupported_operation');
    const named = await errorOf(client(CHAT_ONLY_VK).containers.list({}, { query: { provider: 'openai' } }));
    assert.equal(named.status, 403);
    assert.match(named.message, /provider 'openai' is not allowed/);
  });

  test('rate limits count each call', async () => {
    const c = client(LIMITED_VK);
    for (let i = 0; i < 3; i++) await c.containers.list();
    const over = await errorOf(c.containers.list());
    assert.equal(over.status, 429);
    assert.equal((over.error as { code?: string }).code, 'request_rate_limit_exceeded');
  });

  test("a created container is charged its session's minimum; the budget stops the next one", async () => {
    const c = client(BUDGET_VK);
    // 4 GB at OpenAI's $0.12 per 20 minutes, billed per minute with a 5-minute minimum: $0.03.
    const first = await c.containers.create({ name: 'budget-1', memory_limit: '4g' });
    const record = await logged('container_create', (e) => e.virtual_key_id === 'budgeted');
    assert.ok(Math.abs((record.cost ?? 0) - 0.03) < 1e-9, `cost ${record.cost}`);
    // Reads cost nothing.
    await c.containers.retrieve(first.id);
    await c.containers.create({ name: 'budget-2', memory_limit: '4g' });
    await eventually(async () => {
      const over = await errorOf(c.containers.create({ name: 'budget-3' }));
      assert.equal(over.status, 402);
      assert.equal((over.error as { code?: string }).code, 'budget_exceeded');
    }, 5000);
  });

  test('logged with container request types, the provider and the key; counted in the metrics', async () => {
    const c = client();
    const container = await c.containers.create({ name: 'logged' });
    await c.containers.list();
    const file = await c.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'x.txt') });
    await (await c.containers.files.content.retrieve(file.id, { container_id: container.id })).text();
    await c.containers.delete(container.id);
    const list = await logged('container_list', (e) => e.virtual_key_id === 'containers-vk' && e.provider === 'openai' && e.status === 'success');
    assert.equal(list.selected_key_name, 'first');
    // A refused call is logged too, as an error of its request type.
    await logged('container_list', (e) => e.provider === 'anthropic' && e.status === 'error');
    await logged('container_file_create');
    await logged('container_file_content');
    await logged('container_delete');
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    assert.match(metrics, /skybridge_requests_total\{[^}]*operation="containers"[^}]*provider="openai"/);
  });
});

describe('failures', () => {
  test('an upstream 500 is answered once, not retried, and loses nothing already stored', async () => {
    const c = client();
    const container = await c.containers.create({ name: 'keep' });
    const kept = await c.containers.files.create(container.id, { file: await toFile(Buffer.from('kept'), 'kept.txt') });
    stack.mock.inject({ format: 'openai', status: 500 });
    const before = resourceCalls();
    const err = await errorOf(c.containers.files.create(container.id, { file: await toFile(Buffer.from('lost'), 'lost.txt') }));
    assert.equal(err.status, 500);
    // max_retries is 3 on this provider: a resource call still goes out once.
    assert.equal(resourceCalls() - before, 1, 'one upstream call');
    const files = (await c.containers.files.list(container.id)).data;
    assert.deepEqual(files.map((f) => f.id), [kept.id]);
    assert.equal(await (await c.containers.files.content.retrieve(kept.id, { container_id: container.id })).text(), 'kept');
  });

  test('a dropped connection on create is a 5xx after one call; the containers already there are intact', async () => {
    const c = client();
    const existing = await c.containers.create({ name: 'survivor' });
    stack.mock.inject({ format: 'openai', dropConnection: true });
    const before = resourceCalls();
    const err = await errorOf(c.containers.create({ name: 'dropped' }));
    assert.ok(err.status !== undefined && err.status >= 500, String(err.status));
    assert.equal(resourceCalls() - before, 1, 'one upstream call');
    assert.equal((await c.containers.retrieve(existing.id)).name, 'survivor');
  });
});
