// What a user moving from the reference gateway relies on in the response cache: cache_debug on
// the final chunk of every cached stream (chat completions and Responses, hit and miss), a
// reference config.json with `dimension: 1` and a `provider`, and a plugin status that follows the
// live config. Real gateway processes against the mock provider, driven by the OpenAI SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';

interface Debug {
  cache_hit: boolean;
  cache_id: string;
  hit_type?: string;
}
type WithExtra = { extra_fields?: { cache_debug?: Debug } };

let mock: MockProvider;
let g: InProcessGateway;
let client: OpenAI;
/** A plain redis-server: no search module, as most Redis deployments are. */
let redis: RunningRedis | undefined;

before(async () => {
  mock = await startMockProvider({ chunkDelayMs: 1 });
  g = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite' },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } }],
  });
  client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
});

after(async () => {
  await g?.stop();
  await mock?.close();
  await redis?.stop();
});

let seq = 0;
const freshKey = (name: string) => `${name}-${++seq}-${Date.now()}`;

async function chatStream(model: string, content: string, key: string, includeUsage: boolean) {
  const stream = await client.chat.completions.create(
    { model, messages: [{ role: 'user', content }], stream: true, ...(includeUsage && { stream_options: { include_usage: true } }) },
    { headers: { 'x-bf-cache-key': key } },
  );
  const debugs: (Debug | undefined)[] = [];
  let text = '';
  for await (const c of stream) {
    debugs.push((c as unknown as WithExtra).extra_fields?.cache_debug);
    text += c.choices[0]?.delta?.content ?? '';
  }
  return { debugs, text };
}

/** Only the final chunk carries cache_debug, in full; the earlier ones none. */
function finalDebug(debugs: (Debug | undefined)[]): Debug {
  assert.ok(debugs.length > 1, 'a stream of several chunks');
  assert.deepEqual(debugs.slice(0, -1).filter(Boolean), [], 'earlier chunks carry no cache_debug');
  const last = debugs.at(-1);
  assert.ok(last, 'the final chunk carries cache_debug');
  assert.equal(typeof last.cache_id, 'string');
  return last;
}

for (const [model, path] of [
  ['openai/gpt-4o', 'relayed as the upstream sent it'],
  ['anthropic/claude-sonnet-4-5', 'translated'],
] as const) {
  for (const includeUsage of [false, true]) {
    test(`a streamed chat completion (${path}, include_usage ${includeUsage}) carries cache_debug on its final chunk, miss and hit`, async () => {
      const key = freshKey('chat-stream');
      const content = `stream debug ${model} ${includeUsage}`;
      const miss = await chatStream(model, content, key, includeUsage);
      const missDebug = finalDebug(miss.debugs);
      assert.equal(missDebug.cache_hit, false);
      assert.ok(missDebug.cache_id.length > 0, 'the id the entry is stored under');
      let hit!: Awaited<ReturnType<typeof chatStream>>;
      await eventually(async () => {
        hit = await chatStream(model, content, key, includeUsage);
        assert.equal(hit.debugs.at(-1)?.cache_hit, true);
      }, 10_000);
      const hitDebug = finalDebug(hit.debugs);
      assert.equal(hitDebug.hit_type, 'direct');
      assert.equal(hitDebug.cache_id, missDebug.cache_id, 'the hit names the entry the miss wrote');
      assert.equal(hit.text, miss.text);
      assert.equal(hit.debugs.length, miss.debugs.length);
    });
  }
}

test('a streamed text completion carries cache_debug on its final chunk, miss and hit', async () => {
  const key = freshKey('text-stream');
  const run = async () => {
    const stream = await client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'text stream debug', stream: true }, { headers: { 'x-bf-cache-key': key } });
    const debugs: (Debug | undefined)[] = [];
    for await (const c of stream) debugs.push((c as unknown as WithExtra).extra_fields?.cache_debug);
    return debugs;
  };
  const miss = finalDebug(await run());
  assert.equal(miss.cache_hit, false);
  let hit!: (Debug | undefined)[];
  await eventually(async () => {
    hit = await run();
    assert.equal(hit.at(-1)?.cache_hit, true);
  }, 10_000);
  assert.equal(finalDebug(hit).cache_id, miss.cache_id);
});

async function responsesStream(model: string, input: string, key: string) {
  const stream = await client.responses.create({ model, input, stream: true }, { headers: { 'x-bf-cache-key': key } });
  const events: { type: string; debug: Debug | undefined }[] = [];
  for await (const ev of stream) {
    const response = (ev as unknown as { response?: WithExtra }).response;
    events.push({ type: ev.type, debug: response?.extra_fields?.cache_debug ?? (ev as unknown as WithExtra).extra_fields?.cache_debug });
  }
  return events;
}

for (const [model, path] of [
  ['openai/gpt-4o', 'native'],
  ['anthropic/claude-sonnet-4-5', 'translated from chat'],
] as const) {
  test(`a streamed Responses answer (${path}) carries cache_debug on response.completed, miss and hit`, async () => {
    const key = freshKey('responses-stream');
    const input = `responses stream debug ${model}`;
    const miss = await responsesStream(model, input, key);
    assert.equal(miss.at(-1)?.type, 'response.completed');
    assert.deepEqual(miss.slice(0, -1).filter((e) => e.debug), [], 'earlier events carry no cache_debug');
    const missDebug = miss.at(-1)!.debug;
    assert.equal(missDebug?.cache_hit, false);
    assert.ok(missDebug.cache_id.length > 0);
    let hit!: Awaited<ReturnType<typeof responsesStream>>;
    await eventually(async () => {
      hit = await responsesStream(model, input, key);
      assert.equal(hit.at(-1)?.debug?.cache_hit, true);
    }, 10_000);
    assert.equal(hit.at(-1)?.type, 'response.completed');
    assert.equal(hit.at(-1)?.debug?.cache_id, missDebug.cache_id);
    assert.deepEqual(hit.slice(0, -1).filter((e) => e.debug), []);
    assert.deepEqual(hit.map((e) => e.type), miss.map((e) => e.type));
  });
}

const EMBED_MODEL = 'text-embedding-3-small-dim256';
interface PluginView {
  config: Record<string, unknown>;
  status: { status: string; logs: string[] };
}
const pluginView = async (base: string) => (await (await fetch(`${base}/api/plugins/semantic_cache`)).json()) as PluginView;
const putPlugin = (base: string, body: unknown) => fetch(`${base}/api/plugins/semantic_cache`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
async function postChat(base: string, content: string, key: string) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-cache-key': key },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { extra_fields?: { cache_debug?: Debug & { provider_used?: string } } }).extra_fields?.cache_debug;
}

test('a reference config.json with dimension 1 and a provider starts (semantic, rule 6); the embedding dimension mismatch is reported the spec way and direct hits still work', async () => {
  const local = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite', config: { path: 'dim1.db' } },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { provider: 'openai', embedding_model: EMBED_MODEL, dimension: 1, ttl: '5m' } }],
  });
  try {
    const key = freshKey('dim1-provider');
    const miss = await postChat(local.url, 'dimension one with a provider', key);
    assert.equal(miss?.cache_hit, false);
    assert.equal(miss?.provider_used, 'openai', 'the config is semantic: the request was embedded');
    const view = await pluginView(local.url);
    assert.equal(view.status.status, 'error');
    assert.match(view.status.logs.join(), /returns vectors of dimension 256 but the config requires 1/);
    await eventually(async () => assert.equal((await postChat(local.url, 'dimension one with a provider', key))?.hit_type, 'direct'), 10_000);
  } finally {
    await local.stop();
  }
});

test('the plugin status follows the live config: a dimension mismatch shows at once, and is gone once the config is fixed', async () => {
  const cfg = { provider: 'openai', embedding_model: EMBED_MODEL, dimension: 256, ttl: '5m', vector_store_namespace: 'livestatus' };
  const local = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'sqlite', config: { path: 'live.db' } },
  });
  try {
    // Created through /api: a plugin of config.json would be read-only there.
    const created = await fetch(`${local.url}/api/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'semantic_cache', enabled: true, config: cfg }) });
    assert.equal(created.status, 201, await created.text());
    assert.equal((await pluginView(local.url)).status.status, 'active');
    // The namespace holds 256-dimension vectors: a 128-dimension config cannot use it, and says so before any request.
    assert.equal((await putPlugin(local.url, { config: { ...cfg, embedding_model: 'text-embedding-3-small-dim128', dimension: 128 } })).status, 200);
    const broken = await pluginView(local.url);
    assert.equal(broken.status.status, 'error');
    assert.match(broken.status.logs.join(), /namespace livestatus already exists with dimension 256 but the config requires 128/);
    const key = freshKey('live');
    assert.equal(await postChat(local.url, 'live status question', key), undefined, 'the cache is off for that config');
    // Fixed: the status is active again and the cache serves.
    assert.equal((await putPlugin(local.url, { config: cfg })).status, 200);
    const fixed = await pluginView(local.url);
    assert.equal(fixed.status.status, 'active', JSON.stringify(fixed.status));
    assert.deepEqual(fixed.status.logs, []);
    assert.equal((await postChat(local.url, 'live status question', key))?.cache_hit, false);
    await eventually(async () => assert.equal((await postChat(local.url, 'live status question', key))?.cache_hit, true), 10_000);
  } finally {
    await local.stop();
  }
});

test('direct-only mode on plain Redis (no search module): entries are written, served and cleared', async () => {
  redis ??= await startRedis();
  const local = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'redis', config: { addr: redis.addr } },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } }],
  });
  try {
    assert.equal((await pluginView(local.url)).status.status, 'active');
    const key = freshKey('plain-redis');
    const upstream = () => mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    const before = upstream();
    const miss = await postChat(local.url, 'plain redis question', key);
    assert.equal(miss?.cache_hit, false);
    let hit: Debug | undefined;
    await eventually(async () => {
      hit = await postChat(local.url, 'plain redis question', key);
      assert.equal(hit?.cache_hit, true);
    }, 10_000);
    assert.equal(hit?.hit_type, 'direct');
    assert.equal(hit?.cache_id, miss.cache_id);
    assert.equal(upstream() - before, 1, 'the hit did not call upstream');
    // Another cache key is another partition.
    assert.equal((await postChat(local.url, 'plain redis question', `${key}-other`))?.cache_hit, false);

    const cleared = await fetch(`${local.url}/api/cache/clear-by-key/${encodeURIComponent(key)}`, { method: 'DELETE' });
    assert.equal(cleared.status, 200);
    assert.equal(((await cleared.json()) as { deleted: number }).deleted, 1);
    assert.equal((await postChat(local.url, 'plain redis question', key))?.cache_hit, false, 'cleared by key');
    let again: Debug | undefined;
    await eventually(async () => {
      again = await postChat(local.url, 'plain redis question', key);
      assert.equal(again?.cache_hit, true);
    }, 10_000);
    const byId = await fetch(`${local.url}/api/cache/clear/${again!.cache_id}`, { method: 'DELETE' });
    assert.equal(((await byId.json()) as { deleted: number }).deleted, 1);
    assert.equal((await postChat(local.url, 'plain redis question', key))?.cache_hit, false, 'cleared by id');
  } finally {
    await local.stop();
  }
});

test('semantic mode on plain Redis is reported from start-up in the plugin status, never active; requests go on uncached', async () => {
  redis ??= await startRedis();
  const local = await startGateway({
    providers: mockProviders(mock.url),
    vector_store: { enabled: true, type: 'redis', config: { addr: redis.addr } },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { provider: 'openai', embedding_model: EMBED_MODEL, dimension: 256 } }],
  });
  try {
    const view = await pluginView(local.url);
    assert.equal(view.status.status, 'error');
    assert.match(view.status.logs.join(), /no search module .* semantic mode \(dimension 256\) needs/);
    assert.equal(await postChat(local.url, 'semantic on plain redis', freshKey('plain-semantic')), undefined);
  } finally {
    await local.stop();
  }
});
