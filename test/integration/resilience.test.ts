// Failures a user would see: upstream errors keep their status and provider, retries ride out
// rate limits and 5xx, fallbacks take over, client mistakes are never retried elsewhere.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MODELS, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';

let stack: Stack;
before(async () => {
  stack = await startStack((u) => ({
    providers: mockProviders(u, {
      // A provider that retries quickly, to show retries without slowing the suite.
      gemini: { network_config: { base_url: `${u}/gemini`, max_retries: 2, retry_backoff_initial_ms: 10, retry_backoff_max_ms: 50 } },
      anthropic: { network_config: { base_url: `${u}/anthropic`, max_retries: 0, default_request_timeout_in_seconds: 1 } },
    }),
  }));
});
after(() => stack.close());
beforeEach(() => stack.mock.reset());

const ask = (model: string, extra: Record<string, unknown> = {}) =>
  stack.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], ...extra } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);

describe('upstream errors', () => {
  test('an Anthropic 400 keeps its status, message and provider', async () => {
    stack.mock.inject({ format: 'anthropic', status: 400, message: 'messages: bad thing' });
    const err = await ask(MODELS.anthropic).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, `got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.match(err.message, /bad thing/);
    stack.mock.inject({ format: 'anthropic', status: 400, message: 'messages: bad thing' });
    const res = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = (await res.json()) as { is_bifrost_error: boolean; status_code: number; error: { type: string }; extra_fields: { provider: string } };
    assert.equal(res.status, 400);
    assert.equal(body.is_bifrost_error, false);
    assert.equal(body.status_code, 400);
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.extra_fields.provider, 'anthropic');
  });

  test('a Gemini 429 with Retry-After is retried until it succeeds', async () => {
    stack.mock.inject({ format: 'gemini', status: 429, retryAfter: 0, times: 2 });
    const res = await ask(MODELS.gemini);
    assert.equal(res.choices[0].message.content, 'Mock reply to: hello');
    assert.equal(stack.mock.requests.filter((r) => r.format === 'gemini').length, 3);
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    assert.match(metrics, /skybridge_retries_total\{provider="gemini",reason="429"\} [2-9]/);
  });

  test('Retry-After is honoured before the retry', async () => {
    stack.mock.inject({ format: 'gemini', status: 503, retryAfter: 1, times: 1 });
    const started = Date.now();
    await ask(MODELS.gemini);
    assert.ok(Date.now() - started >= 950, `retried after ${Date.now() - started} ms`);
  });

  test('retries stop at max_retries and the last error is returned', async () => {
    stack.mock.inject({ format: 'gemini', status: 500, times: 5 });
    const err = await ask(MODELS.gemini).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.InternalServerError);
    assert.equal(stack.mock.requests.filter((r) => r.format === 'gemini').length, 3);
  });

  test('an upstream slower than the request timeout is a 504, and the fallback still answers', async () => {
    stack.mock.inject({ format: 'anthropic', latencyMs: 2500 });
    const started = Date.now();
    const err = await ask(MODELS.anthropic).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 504);
    assert.match(err.message, /did not answer in time/);
    assert.ok(Date.now() - started < 2000, 'gave up at the 1 s timeout');
    stack.mock.inject({ format: 'anthropic', latencyMs: 2500 });
    const res = await ask(MODELS.anthropic, { fallbacks: [MODELS.openai] });
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'openai');
  });

  test('a dropped connection is reported as a 502 naming the provider', async () => {
    stack.mock.inject({ format: 'openai', dropConnection: true });
    const err = await ask(MODELS.openai).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 502);
    assert.match(err.message, /openai/);
  });
});

describe('fallbacks', () => {
  test('a failing primary falls back to the next provider', async () => {
    stack.mock.inject({ format: 'openai', status: 503 });
    const res = await ask(MODELS.openai, { fallbacks: [MODELS.anthropic] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: hello');
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'anthropic');
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    assert.match(metrics, /skybridge_fallbacks_total\{from_provider="openai",to_provider="anthropic"\} \d/);
  });

  test('fallbacks are tried in order', async () => {
    stack.mock.inject({ format: 'openai', status: 500 });
    stack.mock.inject({ format: 'anthropic', status: 529 });
    const res = await ask(MODELS.openai, { fallbacks: [MODELS.anthropic, MODELS.gemini] });
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'gemini');
    assert.deepEqual(stack.mock.requests.map((r) => r.format), ['openai', 'anthropic', 'gemini']);
  });

  test("a client's own bad request is not sent to the fallbacks", async () => {
    stack.mock.inject({ format: 'openai', status: 400, message: 'invalid messages' });
    const err = await ask(MODELS.openai, { fallbacks: [MODELS.anthropic] }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.deepEqual(stack.mock.requests.map((r) => r.format), ['openai']);
  });

  test('a streaming request falls back before the first byte', async () => {
    stack.mock.inject({ format: 'anthropic', status: 500 });
    const stream = await stack.client.chat.completions.create({
      model: MODELS.anthropic,
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
      fallbacks: [MODELS.openai],
    } as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Mock reply to: stream it');
  });

  test('"provider/" keeps the incoming model', async () => {
    stack.mock.inject({ format: 'openai', status: 500 });
    await ask('openai/gpt-4o-mini', { fallbacks: ['openai/'] }).catch(() => undefined);
    const models = stack.mock.requests.map((r) => (r.body as { model: string }).model);
    assert.deepEqual(models, ['gpt-4o-mini', 'gpt-4o-mini']);
  });
});

describe('streams that break', () => {
  test('a connection reset mid-stream ends the stream with an error event', async () => {
    stack.mock.inject({ format: 'openai', resetAfterChunks: 2 });
    const stream = await stack.client.chat.completions.create({
      model: MODELS.openai,
      messages: [{ role: 'user', content: 'one two three four five six seven' }],
      stream: true,
    });
    const received: string[] = [];
    const err = await (async () => {
      for await (const c of stream) received.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    assert.ok(err instanceof Error, 'the SDK surfaces the broken stream');
    assert.ok(received.length >= 1, 'chunks before the reset were delivered');
  });

  test('a client that disconnects mid-stream aborts the upstream request', async () => {
    stack.mock.inject({ format: 'openai', latencyMs: 0 });
    const controller = new AbortController();
    const res = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.openai, stream: true, messages: [{ role: 'user', content: Array(400).fill('word').join(' ') }] }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    // The mock sees its response socket closed long before the 400-word reply could finish.
    const deadline = Date.now() + 3000;
    while (!stack.mock.requests.at(-1)?.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.equal(stack.mock.requests.at(-1)?.aborted, true);
  });

  test('a client that leaves before the upstream answered aborts the upstream request (and the gateway keeps serving)', async () => {
    stack.mock.inject({ format: 'openai', latencyMs: 5000 });
    const before = stack.mock.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${stack.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.openai, messages: [{ role: 'user', content: 'slow' }] }),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await eventually(() => assert.equal(stack.mock.requests.length, before + 1, 'the upstream call was made'));
    controller.abort();
    assert.equal(((await pending) as Error).name, 'AbortError');
    // The mock sees its socket closed long before its 5 s answer.
    await eventually(() => assert.equal(stack.mock.requests.at(-1)?.aborted, true));
    const next = await ask(MODELS.openai);
    assert.match(next.choices[0].message.content ?? '', /Mock reply/);
  });
});

describe('bad requests', () => {
  test('malformed JSON is a 400 with the error object', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/chat/completions`, { method: 'POST', body: '{"model": ', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /not valid JSON/);
  });

  test('a missing field is named in param', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: MODELS.openai }), headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { param: string; message: string } };
    assert.equal(body.error.param, 'messages');
    assert.match(body.error.message, /messages is required/);
  });

  test('an unconfigured provider prefix is a 400 naming it', async () => {
    const err = await ask('groq/llama-3.1-8b').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /provider 'groq' is not configured/);
  });
});
