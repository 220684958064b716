// Faults (mid-stream resets, dropped connections, matching), latency, recording, the control API and the CLI.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { OPENAI_AUTH, parseSse, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let openai: OpenAI;
let anthropic: Anthropic;
let gemini: GoogleGenAI;

before(async () => {
  mock = await startMockProvider();
  openai = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${mock.url}/anthropic`, apiKey: 'sk-ant-test', maxRetries: 0 });
  gemini = new GoogleGenAI({ apiKey: 'g-test', httpOptions: { baseUrl: `${mock.url}/gemini` } });
});
after(() => mock.close());
beforeEach(() => mock.reset());

const LONG = 'one two three four five six seven eight';
const ask = (content = 'hi', model = 'gpt-4o') => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] });

describe('mid-stream resets', () => {
  test('openai: the SDK gets the first events, then an error; exactly N events were written', async () => {
    mock.inject({ format: 'openai', resetAfterChunks: 3 });
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: LONG }] });
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta.content ?? '');
    })().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof Error, 'the broken stream surfaces as an error');
    assert.equal(got.join(''), 'Mock reply ');
    const rec = mock.requests.at(-1)!;
    assert.equal(parseSse(rec.responseBody!).length, 3);
    assert.notEqual(rec.aborted, true, 'a reset by the mock is not a client abort');
  });

  test('anthropic and gemini SDKs also see the reset as an error after partial output', async () => {
    mock.inject({ format: 'anthropic', resetAfterChunks: 5 });
    let text = '';
    const aErr = await (async () => {
      const s = anthropic.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: LONG }] });
      s.on('text', (t) => (text += t));
      await s.finalMessage();
    })().then(() => undefined, (e: unknown) => e);
    assert.ok(aErr instanceof Error);
    assert.equal(text, 'Mock reply ');

    mock.inject({ format: 'gemini', resetAfterChunks: 2 });
    const parts: string[] = [];
    const gErr = await (async () => {
      for await (const c of await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: LONG })) parts.push(c.text ?? '');
    })().then(() => undefined, (e: unknown) => e);
    assert.ok(gErr instanceof Error);
    assert.deepEqual(parts, ['Mock ', 'reply ']);
  });

  test('resetAfterChunks on a non-streaming request drops the connection', async () => {
    mock.inject({ resetAfterChunks: 1 });
    const err = await ask().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIConnectionError);
  });
});

describe('fault matching', () => {
  test('dropConnection answers nothing', async () => {
    mock.inject({ format: 'openai', dropConnection: true });
    const err = await ask().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIConnectionError);
    assert.equal(mock.requests.at(-1)!.status, undefined);
    assert.equal((await ask()).choices[0].message.content, 'Mock reply to: hi', 'one use only');
  });

  test('faults match by format and model, in queue order, `times` times', async () => {
    mock.inject({ format: 'anthropic', status: 500 });
    mock.inject({ model: 'gpt-4o-mini', status: 503, times: 2 });
    mock.inject({ status: 502 });
    const status = (p: Promise<unknown>) => p.then(() => 200, (e: unknown) => (e instanceof OpenAI.APIError ? e.status : -1));
    assert.equal(await status(ask('a', 'gpt-4o')), 502, 'the anthropic and gpt-4o-mini faults are skipped');
    assert.equal(await status(ask('b', 'gpt-4o-mini')), 503);
    assert.equal(await status(ask('c', 'gpt-4o-mini')), 503);
    assert.equal(await status(ask('d', 'gpt-4o-mini')), 200);
    const aErr = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(aErr instanceof Anthropic.InternalServerError);
    assert.equal(aErr.type, 'api_error');
  });

  test('a custom message is used in the provider error body', async () => {
    mock.inject({ status: 400, message: 'messages: bad thing' });
    const err = await ask().catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /messages: bad thing/);
  });

  test('fault latency delays the answer', async () => {
    mock.inject({ latencyMs: 80 });
    const t0 = performance.now();
    await ask();
    assert.ok(performance.now() - t0 >= 75);
  });

  test('invalid faults are refused', () => {
    assert.throws(() => mock.inject({ status: 42 }), /status/);
    assert.throws(() => mock.inject({ format: 'nonesuch' } as unknown as { format: 'openai' }), /format/);
  });
});

describe('server options and recording', () => {
  test('global latencyMs delays every answer; chunkDelayMs paces stream events', async () => {
    const slow = await startMockProvider({ latencyMs: 40, chunkDelayMs: 10 });
    try {
      const t0 = performance.now();
      const models = await fetch(`${slow.url}/openai/v1/models`, { headers: OPENAI_AUTH });
      assert.equal(models.status, 200);
      const unauthorized = await fetch(`${slow.url}/openai/v1/models`);
      assert.equal(unauthorized.status, 401);
      assert.ok(performance.now() - t0 >= 75, 'two answers (errors too), 40 ms each');
      const t1 = performance.now();
      const stream = await postRaw(`${slow.url}/openai/v1/chat/completions`, { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }, OPENAI_AUTH);
      const events = parseSse(stream.text).length; // role, 4 words, finish, [DONE]
      assert.equal(events, 7);
      assert.ok(performance.now() - t1 >= 40 + (events - 1) * 10 - 5);
    } finally {
      await slow.close();
    }
  });

  test('a client that disconnects mid-stream is recorded as aborted', async () => {
    const slow = await startMockProvider({ chunkDelayMs: 20 });
    try {
      const controller = new AbortController();
      const res = await fetch(`${slow.url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...OPENAI_AUTH },
        body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: LONG }] }),
        signal: controller.signal,
      });
      await res.body!.getReader().read();
      controller.abort();
      const deadline = Date.now() + 2000;
      while (!slow.requests[0].aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal(slow.requests[0].aborted, true);
      assert.ok(parseSse(slow.requests[0].responseBody!).length < 10);
    } finally {
      await slow.close();
    }
  });

  test('every request is recorded in order with format, method, path, query, headers, body, status', async () => {
    await ask('first');
    await postRaw(`${mock.url}/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=g-test`, { contents: [{ parts: [{ text: 'second' }] }] }, {});
    await fetch(`${mock.url}/anthropic/v1/models`);
    assert.deepEqual(mock.requests.map((r) => [r.format, r.method, r.path, r.status]), [
      ['openai', 'POST', '/openai/v1/chat/completions', 200],
      ['gemini', 'POST', '/gemini/v1beta/models/gemini-2.5-flash:generateContent', 200],
      ['anthropic', 'GET', '/anthropic/v1/models', 401],
    ]);
    assert.equal(mock.requests[1].query.key, 'g-test');
    assert.deepEqual(mock.requests[0].body, { model: 'gpt-4o', messages: [{ role: 'user', content: 'first' }] });
    mock.reset();
    assert.equal(mock.requests.length, 0);
  });

  test('unknown paths are 404s in the provider shape', async () => {
    const res = await postRaw(`${mock.url}/openai/v1/nope`, {}, OPENAI_AUTH);
    assert.equal(res.status, 404);
    assert.match((JSON.parse(res.text) as { error: { message: string } }).error.message, /Invalid URL \(POST \/v1\/nope\)/);
    const g = await fetch(`${mock.url}/gemini/v1beta/tunedModels`);
    assert.equal(g.status, 404);
    assert.equal(((await g.json()) as { error: { status: string } }).error.status, 'NOT_FOUND');
  });
});

describe('control API and CLI', () => {
  test('POST/GET/DELETE /_mock/faults and GET /_mock/requests', async () => {
    const post = await fetch(`${mock.url}/_mock/faults`, { method: 'POST', body: JSON.stringify({ format: 'openai', status: 503, retryAfter: 1 }) });
    assert.equal(post.status, 201);
    assert.equal(((await (await fetch(`${mock.url}/_mock/faults`)).json()) as unknown[]).length, 1);
    const err = await ask().catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.InternalServerError);
    assert.equal(err.headers?.get('retry-after'), '1');
    const recorded = (await (await fetch(`${mock.url}/_mock/requests`)).json()) as { path: string; status: number }[];
    assert.deepEqual(recorded.map((r) => [r.path, r.status]), [['/openai/v1/chat/completions', 503]]);
    const bad = await fetch(`${mock.url}/_mock/faults`, { method: 'POST', body: JSON.stringify({ status: 'x' }) });
    assert.equal(bad.status, 400);
    await fetch(`${mock.url}/_mock/faults`, { method: 'POST', body: JSON.stringify([{ status: 500 }, { status: 500 }]) });
    assert.equal((await fetch(`${mock.url}/_mock/faults`, { method: 'DELETE' })).status, 200);
    assert.equal(((await (await fetch(`${mock.url}/_mock/requests`)).json()) as unknown[]).length, 0);
    assert.equal((await ask()).choices[0].message.content, 'Mock reply to: hi');
  });

  test('the CLI prints its URL and serves', async () => {
    const child = spawn(process.execPath, [new URL('../mock-provider/main.ts', import.meta.url).pathname, '--port', '0', '--latency', '1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 5000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
      });
      const cli = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: 'sk-test', maxRetries: 0 });
      const res = await cli.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'cli' }] });
      assert.equal(res.choices[0].message.content, 'Mock reply to: cli');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
