// What a user moving from the reference gateway relies on in the response cache: cache_debug on
// the final chunk of every cached stream (chat completions and Responses, hit and miss), a
// reference config.json with `dimension: 1` and a `provider`, and a plugin status that follows the
// live config. Real gateway processes against the mock provider, driven by the OpenAI SDK.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { eventually, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/setup.ts';

interface Debug {
  cache_hit: boolean;
  cache_id: string;
  hit_type?: string;
}
type WithExtra = { extra_fields?: { cache_debug?: Debug } };

let mock: MockProvider;
let g: RunningGateway;
let client: OpenAI;

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
