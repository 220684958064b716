// The response cache (`semantic_cache` plugin) on the embedded SQLite store, through real gateway
// processes against the mock provider: each numbered "Cache behavior" rule of the spec, each
// per-request header, streaming replay through the OpenAI and Anthropic SDKs, restart survival,
// the clear endpoints, live toggling through /api/plugins and single-flight.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { embeddedSpeechText, speechAudio } from '../mock-provider/media-files.ts';
import Anthropic from '@anthropic-ai/sdk';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startRedisStack } from '../helpers/redis-stack.ts';
import { startPgvector } from '../helpers/pgvector.ts';

/** The store every rule runs on: the embedded one here; cache-redis-stack and cache-pgvector run the same file on theirs. */
const STORE = process.env.SKYBRIDGE_CACHE_TEST_STORE ?? 'sqlite';
let vectorStore: Record<string, unknown> = { enabled: true, type: 'sqlite' };
let stopStore: () => Promise<void> = async () => undefined;

const VK_A = 'sk-bf-cache-alpha-0123456789';
const VK_B = 'sk-bf-cache-bravo-0123456789';
const EMBED_MODEL = 'text-embedding-3-small-dim256';

let mock: MockProvider;
let g: InProcessGateway;
let client: OpenAI;

function cacheConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider: 'openai', embedding_model: EMBED_MODEL, dimension: 256, ttl: '5m', threshold: 0.8, ...extra };
}

function gatewayConfig(mockUrl: string, plugin: Record<string, unknown> = cacheConfig()): Record<string, unknown> {
  const vk = (id: string, value: string) => ({ id, name: id, value, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'] }] });
  return {
    providers: mockProviders(mockUrl),
    governance: { virtual_keys: [vk('vk-alpha', VK_A), vk('vk-bravo', VK_B)] },
    vector_store: vectorStore,
    plugins: [{ name: 'semantic_cache', enabled: true, config: plugin }],
  };
}

before(async () => {
  if (STORE === 'redis') {
    const r = await startRedisStack();
    vectorStore = { enabled: true, type: 'redis', config: { addr: r.addr } };
    stopStore = () => r.stop();
  } else if (STORE === 'postgres') {
    const p = await startPgvector();
    vectorStore = { enabled: true, type: 'postgres', config: p.storeConfig };
    stopStore = () => p.stop();
  }
  mock = await startMockProvider({ chunkDelayMs: 2 });
  g = await startGateway(gatewayConfig(mock.url));
  client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
});

after(async () => {
  await g?.stop();
  await mock?.close();
  await stopStore();
});

let seq = 0;
/** A cache key no other test uses. */
const freshKey = (name: string) => `${name}-${++seq}-${Date.now()}`;

const calls = (path: string) => mock.requests.filter((r) => r.path.endsWith(path)).length;

interface Debug {
  cache_hit: boolean;
  cache_id: string;
  hit_type?: string;
  threshold?: number;
  similarity?: number;
  provider_used?: string;
  model_used?: string;
  input_tokens?: number;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}, base = g.url): Promise<{ status: number; json: Record<string, unknown> & { extra_fields?: { cache_debug?: Debug } } }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never };
}

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }], ...extra });
const debugOf = (r: { json: { extra_fields?: { cache_debug?: Debug } } }) => r.json.extra_fields?.cache_debug;

/** The request until the cache serves it (writes happen after the answer, rule 4). */
async function untilHit(path: string, body: unknown, headers: Record<string, string>, base = g.url) {
  let last: Awaited<ReturnType<typeof post>> | undefined;
  await eventually(async () => {
    last = await post(path, body, headers, base);
    assert.equal(debugOf(last)?.cache_hit, true, JSON.stringify(last.json));
  }, 5000);
  return last!;
}

/** Entries the gateway has written to its store (a direct hit may come before: see untilSemanticHit). */
async function writes(): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  return Number(/^skybridge_cache_writes_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Until n more entries than `since` are in the store. */
const untilWritten = (since: number, n: number) =>
  eventually(async () => {
    assert.ok((await writes()) >= since + n, 'the entries are not in the store yet');
  }, 5000);

/**
 * A paraphrase until the semantic lookup finds its entry, asked with no-store so a miss writes
 * nothing. A direct hit can come from the entry still landing (served from memory while Redis or
 * PostgreSQL write it, single-flight); the semantic lookup reads only the store.
 */
async function untilSemanticHit(body: unknown, headers: Record<string, string>) {
  let last: Awaited<ReturnType<typeof post>> | undefined;
  await eventually(async () => {
    last = await post('/v1/chat/completions', body, { ...headers, 'x-bf-cache-no-store': 'true' });
    assert.equal(debugOf(last)?.hit_type, 'semantic', JSON.stringify(last.json));
  }, 5000);
  return last!;
}

test('rule 1: without a cache key (header or default_cache_key) the request bypasses the cache', async () => {
  const before = calls('/chat/completions');
  const a = await post('/v1/chat/completions', chat('bypass question one'));
  const b = await post('/v1/chat/completions', chat('bypass question one'));
  assert.equal(a.status, 200);
  assert.equal(debugOf(a), undefined);
  assert.equal(debugOf(b), undefined);
  assert.equal(calls('/chat/completions') - before, 2);
});

test('rule 3 and 4: the first request misses, is written after the answer, and the same request then hits directly', async () => {
  const key = freshKey('direct');
  const before = calls('/chat/completions');
  const first = await post('/v1/chat/completions', chat('What is the speed of light?'), { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  assert.equal(first.status, 200);
  const miss = debugOf(first)!;
  assert.equal(miss.cache_hit, false);
  assert.ok(miss.cache_id);
  const second = await untilHit('/v1/chat/completions', chat('What is the speed of light?'), { 'x-bf-cache-key': key });
  const hit = debugOf(second)!;
  assert.equal(hit.hit_type, 'direct');
  assert.equal(hit.cache_id, miss.cache_id);
  assert.equal((second.json.choices as { message: { content: string } }[])[0].message.content, (first.json.choices as { message: { content: string } }[])[0].message.content);
  assert.equal(calls('/chat/completions') - before, 1);
});

test('the direct hash is canonical: reordered keys, whitespace and number formats (1.0 / 1, 1e2 / 100) still hit', async () => {
  const key = freshKey('canonical');
  const h = { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' };
  const a = '{"model":"openai/gpt-4o","messages":[{"role":"user","content":"canonical question"}],"temperature":1.0,"max_tokens":1e2}';
  const b = '{ "max_tokens": 100,\n  "temperature": 1,\n  "messages": [ { "content": "canonical question", "role": "user" } ],\n  "model": "openai/gpt-4o" }';
  const first = await post('/v1/chat/completions', a, h);
  assert.equal(debugOf(first)?.cache_hit, false);
  const second = await untilHit('/v1/chat/completions', b, h);
  assert.equal(debugOf(second)?.hit_type, 'direct');
  // A different parameter is a different request.
  const other = await post('/v1/chat/completions', b.replace('"temperature": 1', '"temperature": 0.5'), h);
  assert.equal(debugOf(other)?.cache_hit, false);
});

test('rule 2: the identity is cache key + model (+ provider), scoped to the virtual key', async () => {
  const key = freshKey('identity');
  const body = chat('identity question');
  await post('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-vk': VK_A });
  await untilHit('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-vk': VK_A });
  // Another virtual key never shares the entry.
  const otherVk = await post('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-vk': VK_B });
  assert.equal(otherVk.status, 200);
  assert.equal(debugOf(otherVk)?.cache_hit, false);
  // Nor does the same request without one, another cache key, or another model.
  assert.equal(debugOf(await post('/v1/chat/completions', body, { 'x-bf-cache-key': key }))?.cache_hit, false);
  assert.equal(debugOf(await post('/v1/chat/completions', body, { 'x-bf-cache-key': `${key}-other`, 'x-bf-vk': VK_A }))?.cache_hit, false);
  assert.equal(debugOf(await post('/v1/chat/completions', { ...body, model: 'openai/gpt-4o-mini' }, { 'x-bf-cache-key': key, 'x-bf-vk': VK_A }))?.cache_hit, false);
});

test('rule 3: semantic mode finds a paraphrase above the threshold, with the spec cache_debug fields', async () => {
  const key = freshKey('semantic');
  const first = await post('/v1/chat/completions', chat('What is the capital of France?'), { 'x-bf-cache-key': key });
  const miss = debugOf(first)!;
  assert.equal(miss.cache_hit, false);
  assert.equal(miss.provider_used, 'openai');
  assert.equal(miss.model_used, EMBED_MODEL);
  await untilHit('/v1/chat/completions', chat('What is the capital of France?'), { 'x-bf-cache-key': key });
  const para = await untilSemanticHit(chat("what's the capital city of France"), { 'x-bf-cache-key': key });
  const d = debugOf(para)!;
  assert.equal(d.cache_hit, true, JSON.stringify(d));
  assert.equal(d.hit_type, 'semantic');
  assert.equal(d.cache_id, miss.cache_id);
  assert.equal(d.threshold, 0.8);
  assert.ok(d.similarity! >= 0.8 && d.similarity! < 1, String(d.similarity));
  assert.equal(d.provider_used, 'openai');
  assert.equal(d.model_used, EMBED_MODEL);
  assert.ok(d.input_tokens! > 0);
  // The answer is the stored one (the mock would have echoed the paraphrase).
  assert.match((para.json.choices as { message: { content: string } }[])[0].message.content, /capital of France\?/);
  // An unrelated question misses.
  assert.equal(debugOf(await post('/v1/chat/completions', chat('How do volcanoes erupt?'), { 'x-bf-cache-key': key }))?.cache_hit, false);
});

test('x-bf-cache-threshold only makes the match stricter; x-bf-cache-type restricts the lookup to one path', async () => {
  const key = freshKey('headers');
  await post('/v1/chat/completions', chat('What is the capital of France?'), { 'x-bf-cache-key': key });
  await untilHit('/v1/chat/completions', chat('What is the capital of France?'), { 'x-bf-cache-key': key });
  const para = chat("what's the capital city of France");
  await untilSemanticHit(para, { 'x-bf-cache-key': key });
  // Stricter than the paraphrase's similarity (~0.87): a miss, and not written (no-store).
  const strict = await post('/v1/chat/completions', para, { 'x-bf-cache-key': key, 'x-bf-cache-threshold': '0.99', 'x-bf-cache-no-store': 'true' });
  assert.equal(debugOf(strict)?.cache_hit, false);
  // Lower than configured: raised to 0.8, so still a hit reported at 0.8.
  const loose = await post('/v1/chat/completions', para, { 'x-bf-cache-key': key, 'x-bf-cache-threshold': '0.1' });
  assert.equal(debugOf(loose)?.hit_type, 'semantic');
  assert.equal(debugOf(loose)?.threshold, 0.8);
  // Out of range is clamped to 1: only an identical vector could match.
  const clamped = await post('/v1/chat/completions', para, { 'x-bf-cache-key': key, 'x-bf-cache-threshold': '7', 'x-bf-cache-no-store': 'true' });
  assert.equal(debugOf(clamped)?.cache_hit, false);
  // direct only: the paraphrase is not searched semantically.
  const direct = await post('/v1/chat/completions', para, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct', 'x-bf-cache-no-store': 'true' });
  assert.equal(debugOf(direct)?.cache_hit, false);
  assert.equal(debugOf(direct)?.provider_used, undefined, 'no embedding when only direct runs');
  // semantic only: even the identical request is found by similarity, not by hash.
  const semantic = await post('/v1/chat/completions', chat('What is the capital of France?'), { 'x-bf-cache-key': key, 'x-bf-cache-type': 'semantic' });
  assert.equal(debugOf(semantic)?.hit_type, 'semantic');
});

test('x-bf-cache-no-store: true reads but never writes', async () => {
  const key = freshKey('nostore');
  const body = chat('no store question');
  const a = await post('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-cache-no-store': 'true', 'x-bf-cache-type': 'direct' });
  assert.equal(debugOf(a)?.cache_hit, false);
  await new Promise((r) => setTimeout(r, 300));
  const b = await post('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  assert.equal(debugOf(b)?.cache_hit, false, 'the no-store answer was not written');
  // Written by the second; a no-store request still reads it.
  await untilHit('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-cache-no-store': 'true', 'x-bf-cache-type': 'direct' });
});

test('rule 7 and x-bf-cache-ttl: entries expire; an invalid ttl header is ignored', async () => {
  const key = freshKey('ttl');
  const short = chat('short lived question');
  await post('/v1/chat/completions', short, { 'x-bf-cache-key': key, 'x-bf-cache-ttl': '1s' });
  await untilHit('/v1/chat/completions', short, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  await new Promise((r) => setTimeout(r, 1200));
  const expired = await post('/v1/chat/completions', short, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct', 'x-bf-cache-no-store': 'true' });
  assert.equal(debugOf(expired)?.cache_hit, false, 'not served after expires_at');
  const bad = chat('badly timed question');
  await post('/v1/chat/completions', bad, { 'x-bf-cache-key': key, 'x-bf-cache-ttl': 'soon' });
  await untilHit('/v1/chat/completions', bad, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
});

test('x-bf-cache-ttl above its maximum (7 days) is a 400 naming the header; nothing is called or stored', async () => {
  const key = freshKey('ttl-max');
  const before = calls('/chat/completions');
  for (const ttl of ['604801', '169h', '8760h']) {
    const res = await post('/v1/chat/completions', chat('pinned for a year'), { 'x-bf-cache-key': key, 'x-bf-cache-ttl': ttl });
    assert.equal(res.status, 400, ttl);
    const error = (res.json as unknown as { error: { param: string; message: string; type: string } }).error;
    assert.equal(error.param, 'x-bf-cache-ttl');
    assert.match(error.message, /604800 seconds \(7 days\)/);
  }
  assert.equal(calls('/chat/completions'), before, 'refused before the provider');
  // The maximum itself is accepted.
  const max = await post('/v1/chat/completions', chat('pinned for a week'), { 'x-bf-cache-key': key, 'x-bf-cache-ttl': '168h' });
  assert.equal(max.status, 200);
  assert.equal(debugOf(max)?.cache_hit, false);
});

test('conversation_history_threshold: longer conversations skip the cache; exclude_system_prompt is off by default', async () => {
  const key = freshKey('history');
  const long = {
    model: 'openai/gpt-4o',
    messages: [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
      { role: 'assistant', content: 'four' },
      { role: 'user', content: 'five' },
    ],
  };
  const before = calls('/chat/completions');
  const a = await post('/v1/chat/completions', long, { 'x-bf-cache-key': key });
  await new Promise((r) => setTimeout(r, 200));
  const b = await post('/v1/chat/completions', long, { 'x-bf-cache-key': key });
  assert.equal(debugOf(a), undefined);
  assert.equal(debugOf(b), undefined);
  assert.equal(calls('/chat/completions') - before, 2);
  // A system prompt is part of the key by default.
  const sys = (s: string) => ({ model: 'openai/gpt-4o', messages: [{ role: 'system', content: s }, { role: 'user', content: 'system prompt question' }] });
  await post('/v1/chat/completions', sys('be brief'), { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  await untilHit('/v1/chat/completions', sys('be brief'), { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  assert.equal(debugOf(await post('/v1/chat/completions', sys('be verbose'), { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' }))?.cache_hit, false);
});

test('never cached: a non-2xx answer', async () => {
  const key = freshKey('errors');
  const body = { model: 'openai/nonexistent-model', messages: [{ role: 'user', content: 'hello' }] };
  const before = calls('/chat/completions');
  const a = await post('/v1/chat/completions', body, { 'x-bf-cache-key': key });
  await new Promise((r) => setTimeout(r, 300));
  const b = await post('/v1/chat/completions', body, { 'x-bf-cache-key': key });
  assert.equal(a.status, 404);
  assert.equal(b.status, 404);
  assert.equal(calls('/chat/completions') - before, 2);
});

test('rule 5: embeddings, text completions, responses and image generation are cached', async () => {
  const key = freshKey('ops');
  const h = { 'x-bf-cache-key': key };
  const cases: [string, unknown][] = [
    ['/v1/embeddings', { model: 'openai/text-embedding-3-small', input: 'cache this embedding' }],
    ['/v1/completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'cache this completion' }],
    ['/v1/responses', { model: 'openai/gpt-4o', input: 'cache this response' }],
    ['/v1/images/generations', { model: 'openai/dall-e-3', prompt: 'a cached lighthouse' }],
  ];
  for (const [path, body] of cases) {
    const first = await post(path, body, h);
    assert.equal(first.status, 200, `${path}: ${JSON.stringify(first.json)}`);
    const upstream = calls(path);
    const hit = await untilHit(path, body, h);
    assert.equal(calls(path), upstream, `${path} answered from the cache`);
    const strip = (j: Record<string, unknown>) => ({ ...j, extra_fields: undefined });
    assert.deepEqual(strip(hit.json), strip(first.json), path);
  }
});

test('rule 5: speech audio and plain-text transcripts (relayed bytes) are cached and served byte for byte', async () => {
  const headers = { 'x-bf-cache-key': freshKey('bytes') };
  const speech = () => client.audio.speech.create({ model: 'openai/tts-1', input: 'Cache these words', voice: 'alloy', response_format: 'wav' }, { headers });
  const first = await speech();
  const audio = Buffer.from(await first.arrayBuffer());
  assert.equal(embeddedSpeechText(audio), 'Cache these words');
  const spoken = calls('/audio/speech');
  await eventually(async () => {
    const again = await speech();
    assert.deepEqual(Buffer.from(await again.arrayBuffer()), audio);
    assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
    assert.equal(calls('/audio/speech'), spoken, 'answered from the cache');
  });

  const file = await toFile(speechAudio('mp3', 'A transcript to keep'), 'keep.mp3', { type: 'audio/mpeg' });
  const transcribe = () => client.audio.transcriptions.create({ model: 'openai/whisper-1', file, response_format: 'text' }, { headers });
  assert.equal(await transcribe(), 'A transcript to keep\n');
  const heard = calls('/audio/transcriptions');
  await eventually(async () => {
    assert.equal(await transcribe(), 'A transcript to keep\n');
    assert.equal(calls('/audio/transcriptions'), heard, 'answered from the cache');
  });
});

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of stream) {
    chunks.push(c);
    text += c.choices[0]?.delta?.content ?? '';
  }
  return { text, chunks };
}

test('rule 5: a stream is replayed chunk by chunk to the OpenAI SDK; only the final chunk carries cache_debug', async () => {
  const key = freshKey('stream');
  const params = { model: 'openai/gpt-4o', messages: [{ role: 'user' as const, content: 'stream me a cached answer please' }], stream: true as const };
  const opts = { headers: { 'x-bf-cache-key': key } };
  const before = calls('/chat/completions');
  const first = await collect(await client.chat.completions.create(params, opts));
  assert.match(first.text, /stream me a cached answer please/);
  let replayed!: Awaited<ReturnType<typeof collect>>;
  await eventually(async () => {
    replayed = await collect(await client.chat.completions.create(params, opts));
    const last = replayed.chunks.at(-1) as unknown as { extra_fields?: { cache_debug?: Debug } };
    assert.equal(last.extra_fields?.cache_debug?.cache_hit, true);
  }, 5000);
  assert.equal(calls('/chat/completions') - before, 1);
  assert.equal(replayed.text, first.text);
  assert.equal(replayed.chunks.length, first.chunks.length);
  const debugs = replayed.chunks.map((c) => (c as unknown as { extra_fields?: { cache_debug?: Debug } }).extra_fields?.cache_debug);
  assert.deepEqual(debugs.slice(0, -1).filter(Boolean), [], 'earlier chunks carry no cache_debug');
  // A stream and a non-stream request are different entries.
  const plain = await post('/v1/chat/completions', { ...params, stream: false }, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' });
  assert.equal(debugOf(plain)?.cache_hit, false);
});

test('rule 5: the Anthropic SDK gets its own stream format replayed from the cache', async () => {
  const key = freshKey('anthropic');
  const anthropic = new Anthropic({ baseURL: `${g.url}/anthropic`, apiKey: 'not-needed', maxRetries: 0, defaultHeaders: { 'x-bf-cache-key': key } });
  const req = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'anthropic cached stream' }] };
  const before = calls('/v1/messages');
  const run = async () => {
    const s = anthropic.messages.stream(req);
    let text = '';
    s.on('text', (t) => (text += t));
    const final = await s.finalMessage();
    return { text, final };
  };
  const first = await run();
  assert.match(first.text, /anthropic cached stream/);
  await eventually(async () => {
    const n = calls('/v1/messages');
    const again = await run();
    assert.equal(again.text, first.text);
    assert.equal(again.final.stop_reason, first.final.stop_reason);
    assert.equal(calls('/v1/messages'), n, 'served from the cache');
  }, 5000);
  assert.equal(calls('/v1/messages') - before, 1);
});

test('a stream the client aborts is not stored; a stream that fails mid-way is not stored', async () => {
  const key = freshKey('abort');
  const long = 'word '.repeat(300).trim();
  const body = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: long }], stream: true };
  const before = calls('/chat/completions');
  const ctrl = new AbortController();
  const res = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-cache-key': key }, body: JSON.stringify(body), signal: ctrl.signal });
  const reader = res.body!.getReader();
  await reader.read();
  ctrl.abort();
  await new Promise((r) => setTimeout(r, 1500));
  const again = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' }, body: JSON.stringify(body) });
  const text = await again.text();
  assert.doesNotMatch(text, /"cache_hit":true/);
  assert.equal(calls('/chat/completions') - before, 2);

  const failing = { ...body, messages: [{ role: 'user', content: 'this stream breaks half way through its answer' }] };
  mock.inject({ format: 'openai', model: 'gpt-4o', resetAfterChunks: 3 });
  const broken = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-cache-key': key }, body: JSON.stringify(failing) });
  await broken.text().catch(() => '');
  await new Promise((r) => setTimeout(r, 500));
  const n = calls('/chat/completions');
  const retry = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' }, body: JSON.stringify(failing) });
  assert.doesNotMatch(await retry.text(), /"cache_hit":true/);
  assert.equal(calls('/chat/completions'), n + 1);
});

test('single flight: concurrent identical requests make one upstream call; the others are served as hits', async () => {
  const key = freshKey('flight');
  const body = chat('single flight question');
  mock.inject({ format: 'openai', model: 'gpt-4o', latencyMs: 600, times: 1 });
  const before = calls('/chat/completions');
  const answers = await Promise.all(Array.from({ length: 5 }, () => post('/v1/chat/completions', body, { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' })));
  assert.equal(calls('/chat/completions') - before, 1);
  assert.ok(answers.every((a) => a.status === 200));
  assert.equal(answers.filter((a) => debugOf(a)?.cache_hit === true).length, 4);
  mock.reset();
});

test('DELETE /api/cache/clear/{cache_id} and /api/cache/clear-by-key/{cache_key} remove entries', async () => {
  const key = freshKey('clear');
  const h = { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' };
  const written = await writes();
  await post('/v1/chat/completions', chat('clear me by id'), h);
  // The id of the entry served (a miss before the first write landed may have replaced the first one).
  const served = await untilHit('/v1/chat/completions', chat('clear me by id'), h);
  await untilWritten(written, 1);
  const del = await fetch(`${g.url}/api/cache/clear/${debugOf(served)!.cache_id}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual(await del.json(), { message: 'Cache cleared successfully', deleted: 1 });
  assert.equal(debugOf(await post('/v1/chat/completions', chat('clear me by id'), { ...h, 'x-bf-cache-no-store': 'true' }))?.cache_hit, false);

  const writtenByKey = await writes();
  await post('/v1/chat/completions', chat('clear me by key one'), h);
  await post('/v1/chat/completions', chat('clear me by key two'), h);
  await untilHit('/v1/chat/completions', chat('clear me by key one'), h);
  await untilHit('/v1/chat/completions', chat('clear me by key two'), h);
  await untilWritten(writtenByKey, 2);
  const byKey = await fetch(`${g.url}/api/cache/clear-by-key/${encodeURIComponent(key)}`, { method: 'DELETE' });
  assert.equal(byKey.status, 200);
  assert.equal(((await byKey.json()) as { deleted: number }).deleted, 2);
  assert.equal(debugOf(await post('/v1/chat/completions', chat('clear me by key two'), { ...h, 'x-bf-cache-no-store': 'true' }))?.cache_hit, false);
});

test('metrics: hits, misses, lookup latency', async () => {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  assert.match(text, /skybridge_cache_hits_total\{type="direct"\} [1-9]/);
  assert.match(text, /skybridge_cache_hits_total\{type="semantic"\} [1-9]/);
  assert.match(text, /skybridge_cache_misses_total\{type="semantic"\} [1-9]/);
  assert.match(text, /skybridge_cache_lookup_duration_seconds_count\{type="direct"\} [1-9]/);
  assert.match(text, /skybridge_cache_bypassed_total\{reason="no_key"\} [1-9]/);
});

test('/api/plugins: config.json\'s cache plugin is read-only there (409); disabling it in the file applies live and keeps the config; enabling again caches again; unknown plugins are refused', async () => {
  const key = freshKey('toggle');
  const h = { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' };
  const put = (body: unknown) => fetch(`${g.url}/api/plugins/semantic_cache`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const refused = await put({ enabled: false });
  assert.equal(refused.status, 409);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /config\.json/);
  const read = async () => (await (await fetch(`${g.url}/api/plugins/semantic_cache`)).json()) as { enabled: boolean; config: { dimension: number }; status: { status: string } };
  const setEnabled = async (enabled: boolean) => {
    g.writeConfig({ ...gatewayConfig(mock.url), plugins: [{ name: 'semantic_cache', enabled, config: cacheConfig() }] });
    await eventually(async () => assert.equal((await read()).enabled, enabled), 20_000);
  };
  await setEnabled(false);
  const view = await read();
  assert.equal(view.config.dimension, 256);
  assert.equal(view.status.status, 'disabled');
  await eventually(async () => assert.equal(debugOf(await post('/v1/chat/completions', chat('toggle question'), h)), undefined));
  await setEnabled(true);
  await eventually(async () => assert.equal(debugOf(await post('/v1/chat/completions', chat('toggle question'), h))?.cache_hit, false));
  await untilHit('/v1/chat/completions', chat('toggle question'), h);
  assert.equal((await read()).status.status, 'active');

  const unknown = await fetch(`${g.url}/api/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'no-such-plugin', enabled: true, config: {} }) });
  assert.equal(unknown.status, 400);
  const err = (await unknown.json()) as { error: { message: string; param: string } };
  assert.equal(err.error.param, 'name');
  assert.match(err.error.message, /no-such-plugin/);
});

test('rule 7: entries survive a restart; rule 8: a namespace of another dimension fails start-up', async () => {
  const key = freshKey('restart');
  const h = { 'x-bf-cache-key': key, 'x-bf-cache-type': 'direct' };
  await post('/v1/chat/completions', chat('remember me across restarts'), h);
  const first = await untilHit('/v1/chat/completions', chat('remember me across restarts'), h);
  const para = chat('remember me across a restart');
  await g.stop();
  g = await startGateway(undefined, { appDir: g.appDir });
  const hit = await post('/v1/chat/completions', chat('remember me across restarts'), h);
  assert.equal(debugOf(hit)?.cache_hit, true);
  assert.equal(debugOf(hit)?.cache_id, debugOf(first)!.cache_id);
  // The semantic index is rebuilt from the file too (an entry written by a direct-only lookup gets its embedding after the answer).
  const sem = await post('/v1/chat/completions', para, { 'x-bf-cache-key': key });
  assert.equal(debugOf(sem)?.hit_type, 'semantic');

  await g.stop();
  const appDir = g.appDir;
  g.writeConfig(gatewayConfig(mock.url, cacheConfig({ embedding_model: 'text-embedding-3-small-dim128', dimension: 128 })));
  await assert.rejects(startGateway(undefined, { appDir }), /namespace BifrostSemanticCachePlugin already exists with dimension 256 but the config requires 128/);
  // A new namespace works with the new dimension.
  g.writeConfig(gatewayConfig(mock.url, cacheConfig({ embedding_model: 'text-embedding-3-small-dim128', dimension: 128, vector_store_namespace: 'dim128' })));
  g = await startGateway(undefined, { appDir });
  assert.equal(debugOf(await post('/v1/chat/completions', chat('remember me across restarts'), h))?.cache_hit, false, 'the new namespace starts empty');
});

test('rule 6: direct-only mode (dimension 1, no provider) ignores x-bf-cache-type and x-bf-cache-threshold; default_cache_key caches without a header', async () => {
  // A store of its own (a file; a namespace on the shared servers), so no namespace of another dimension is in the way.
  const own = STORE === 'sqlite' ? { vector_store: { enabled: true, type: 'sqlite', config: { path: 'direct.db' } } } : {};
  const local = await startGateway({ ...gatewayConfig(mock.url, { dimension: 1, default_cache_key: 'everyone', ...(STORE !== 'sqlite' && { vector_store_namespace: 'directonly' }) }), ...own });
  try {
    const body = chat('direct only question');
    const first = await post('/v1/chat/completions', body, {}, local.url);
    assert.equal(debugOf(first)?.cache_hit, false);
    assert.equal(debugOf(first)?.provider_used, undefined);
    const hit = await untilHit('/v1/chat/completions', body, { 'x-bf-cache-type': 'semantic', 'x-bf-cache-threshold': '1' }, local.url);
    assert.equal(debugOf(hit)?.hit_type, 'direct');
    assert.equal(mock.requests.filter((r) => r.path.endsWith('/embeddings')).length >= 0, true);
  } finally {
    await local.stop();
  }
});

test('rule 9: the cache needs an enabled vector_store (config.json and /api)', async () => {
  const cfg = { providers: mockProviders(mock.url), plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1 } }] };
  await assert.rejects(startGateway(cfg), /vector_store: an enabled vector_store is required/);
  const local = await startGateway({ providers: mockProviders(mock.url) });
  try {
    const res = await fetch(`${local.url}/api/plugins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'semantic_cache', enabled: true, config: { dimension: 1 } }) });
    assert.equal(res.status, 400);
    const err = (await res.json()) as { error: { message: string; param: string } };
    assert.match(err.error.message, /vector_store/);
    assert.equal(err.error.param, 'vector_store');
  } finally {
    await local.stop();
  }
});
