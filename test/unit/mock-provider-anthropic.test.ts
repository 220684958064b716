// The mock's Anthropic dialect, checked with the official `@anthropic-ai/sdk` (and raw HTTP for the event sequence).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { ANTHROPIC_AUTH, parseSse, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let client: Anthropic;

before(async () => {
  mock = await startMockProvider();
  client = new Anthropic({ baseURL: `${mock.url}/anthropic`, apiKey: 'sk-ant-test', maxRetries: 0 });
});
after(() => mock.close());

const MODEL = 'claude-haiku-4-5'; // claude-sonnet-4-5 makes this SDK print a deprecation warning
const weather: Anthropic.Tool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { query: { type: 'string' } } } };

function textOf(msg: Anthropic.Message): string {
  return msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

async function rejects(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => assert.fail('expected an error'), (e: unknown) => e);
}

describe('anthropic messages', () => {
  test('non-streaming reply with end_turn and usage', async () => {
    const msg = await client.messages.create({
      model: MODEL, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there mock' }],
    });
    assert.equal(msg.type, 'message');
    assert.equal(msg.role, 'assistant');
    assert.equal(msg.model, MODEL);
    assert.equal(textOf(msg), 'Mock reply to: Hello there mock');
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.usage.input_tokens, 5);
    assert.equal(msg.usage.output_tokens, 6);
    const seen = mock.requests.at(-1)!;
    assert.ok(seen.headers['x-api-key'] === 'sk-ant-test' || seen.headers.authorization === 'Bearer sk-ant-test');
    assert.ok(seen.headers['anthropic-version']);
  });

  test('streaming: the full named-event sequence, assembled by the SDK', async () => {
    const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'stream it now' }] });
    let deltas = 0;
    stream.on('text', () => deltas++);
    const final = await stream.finalMessage();
    assert.equal(textOf(final), 'Mock reply to: stream it now');
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(final.usage.output_tokens, 6);
    assert.ok(deltas >= 5);

    const names = parseSse(mock.requests.at(-1)!.responseBody!).map((e) => e.event);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
    assert.deepEqual(names.slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.ok(names.slice(3, -3).every((n) => n === 'content_block_delta'));
    const start = JSON.parse(parseSse(mock.requests.at(-1)!.responseBody!)[0].data) as { message: { usage: { input_tokens: number } } };
    assert.equal(start.message.usage.input_tokens, 3);
  });

  test('tool use, streamed tool input in several pieces, then "Tool said"', async () => {
    const first = await client.messages.create({
      model: MODEL, max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'weather in Paris' }],
    });
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { query: 'weather in Paris' });

    const streamed = await client.messages.stream({
      model: MODEL, max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'weather in Rome' }],
    }).finalMessage();
    const sUse = streamed.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    assert.deepEqual(sUse.input, { query: 'weather in Rome' });
    const pieces = parseSse(mock.requests.at(-1)!.responseBody!)
      .map((e) => JSON.parse(e.data) as { delta?: { type: string; partial_json?: string } })
      .filter((d) => d.delta?.type === 'input_json_delta' && d.delta.partial_json);
    assert.ok(pieces.length >= 2, `input_json_delta pieces: ${pieces.length}`);

    const second = await client.messages.create({
      model: MODEL, max_tokens: 100, tools: [weather],
      messages: [
        { role: 'user', content: 'weather in Paris' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21C' }] },
      ],
    });
    assert.equal(textOf(second), 'Tool said: sunny, 21C');
    const none = await client.messages.create({
      model: MODEL, max_tokens: 100, tools: [weather], tool_choice: { type: 'none' }, messages: [{ role: 'user', content: 'no tools' }],
    });
    assert.equal(textOf(none), 'Mock reply to: no tools');
  });

  test('thinking: a signed thinking block first, streamed as thinking_delta + signature_delta', async () => {
    const msg = await client.messages.create({
      model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'ponder this' }],
    });
    const [thinking, text] = msg.content;
    assert.equal(thinking.type, 'thinking');
    assert.ok(thinking.type === 'thinking' && thinking.thinking.length > 0 && thinking.signature.length > 0);
    assert.equal(text.type === 'text' && text.text, 'Mock reply to: ponder this');
    assert.equal(msg.usage.output_tokens, 4 + 5);

    const streamed = await client.messages.stream({
      model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'ponder this' }],
    }).finalMessage();
    assert.deepEqual(streamed.content, msg.content);
    const deltaTypes = new Set(parseSse(mock.requests.at(-1)!.responseBody!)
      .map((e) => (JSON.parse(e.data) as { delta?: { type?: string } }).delta?.type));
    assert.ok(deltaTypes.has('thinking_delta') && deltaTypes.has('signature_delta'));
  });

  test('thinking + tools: the signed thinking block must come back; a forged one is rejected', async () => {
    const params = { model: MODEL, max_tokens: 2048, thinking: { type: 'enabled' as const, budget_tokens: 1024 }, tools: [weather] };
    const first = await client.messages.create({ ...params, messages: [{ role: 'user', content: 'weather in Oslo' }] });
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    const result: Anthropic.MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'snow' }] };
    const ok = await client.messages.create({
      ...params, messages: [{ role: 'user', content: 'weather in Oslo' }, { role: 'assistant', content: first.content }, result],
    });
    assert.equal(textOf(ok), 'Tool said: snow');

    const dropped = await rejects(client.messages.create({
      ...params, messages: [{ role: 'user', content: 'weather in Oslo' }, { role: 'assistant', content: [use] }, result],
    }));
    assert.ok(dropped instanceof Anthropic.BadRequestError);
    assert.match(dropped.apiMessage ?? '', /must start with a thinking block/);

    const forged = first.content.map((b) => (b.type === 'thinking' ? { ...b, signature: 'Zm9yZ2Vk' } : b));
    const bad = await rejects(client.messages.create({
      ...params, messages: [{ role: 'user', content: 'weather in Oslo' }, { role: 'assistant', content: forged }, result],
    }));
    assert.ok(bad instanceof Anthropic.BadRequestError);
    assert.match(bad.apiMessage ?? '', /Invalid `signature`/);
  });

  test('images (base64 and url) are counted', async () => {
    const msg = await client.messages.create({
      model: MODEL, max_tokens: 100,
      messages: [{
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          { type: 'text', text: 'describe' },
        ],
      }],
    });
    assert.equal(textOf(msg), 'Mock reply to: describe [images: 2]');
  });

  test('max_tokens and stop_sequences set stop_reason', async () => {
    const short = await client.messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'x y' }] });
    assert.equal(short.stop_reason, 'max_tokens');
    assert.equal(textOf(short), 'Mock reply');
    const seq = await client.messages.create({ model: MODEL, max_tokens: 100, stop_sequences: ['to:'], messages: [{ role: 'user', content: 'x' }] });
    assert.equal(seq.stop_reason, 'stop_sequence');
    assert.equal(seq.stop_sequence, 'to:');
  });
});

describe('anthropic validation, errors and models', () => {
  test('a system role inside messages is a 400 invalid_request_error', async () => {
    const err = await rejects(client.messages.create({
      model: MODEL, max_tokens: 10, messages: [{ role: 'system', content: 'nope' } as unknown as Anthropic.MessageParam, { role: 'user', content: 'hi' }],
    }));
    assert.ok(err instanceof Anthropic.BadRequestError);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.match(err.apiMessage ?? '', /^messages: Unexpected role "system"\. The Messages API accepts a top-level `system` parameter/);
  });

  test('required fields, extra fields, unknown block types and unanswered tool_use are 400s', async () => {
    const cases: [unknown, RegExp][] = [
      [{ model: MODEL, messages: [{ role: 'user', content: 'x' }] }, /max_tokens: Field required/],
      [{ max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, /model: Field required/],
      [{ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }], stream_options: {} }, /stream_options: Extra inputs are not permitted/],
      [{ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, /Input tag 'image_url'/],
      [{ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: '' }] }, /non-empty content/],
      [{
        model: MODEL, max_tokens: 5, messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
          { role: 'user', content: 'y' },
        ],
      }, /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/],
      [{ model: MODEL, max_tokens: 5, tools: [{ type: 'function', function: { name: 'f' } }], messages: [{ role: 'user', content: 'x' }] }, /tools\.0: Input tag 'function'/],
      [{ model: MODEL, max_tokens: 1000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'x' }] }, /`max_tokens` must be greater than `thinking.budget_tokens`/],
    ];
    for (const [body, re] of cases) {
      const raw = await postRaw(`${mock.url}/anthropic/v1/messages`, body, ANTHROPIC_AUTH);
      assert.equal(raw.status, 400, JSON.stringify(body));
      const err = JSON.parse(raw.text) as { type: string; error: { type: string; message: string } };
      assert.equal(err.type, 'error');
      assert.equal(err.error.type, 'invalid_request_error');
      assert.match(err.error.message, re);
    }
  });

  test('auth: missing/invalid key 401, missing anthropic-version 400', async () => {
    const body = { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] };
    const none = await postRaw(`${mock.url}/anthropic/v1/messages`, body, { 'anthropic-version': '2023-06-01' });
    assert.equal(none.status, 401);
    assert.equal((JSON.parse(none.text) as { error: { type: string } }).error.type, 'authentication_error');
    const noVersion = await postRaw(`${mock.url}/anthropic/v1/messages`, body, { 'x-api-key': 'k' });
    assert.equal(noVersion.status, 400);
    const viaBearer = await postRaw(`${mock.url}/anthropic/v1/messages`, body, { authorization: 'Bearer k', 'anthropic-version': '2023-06-01' });
    assert.equal(viaBearer.status, 200);
    const bad = new Anthropic({ baseURL: `${mock.url}/anthropic`, apiKey: 'invalid-key', maxRetries: 0 });
    const err = await rejects(bad.messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    assert.ok(err instanceof Anthropic.AuthenticationError);
  });

  test('injected 429 and 529 map to rate_limit_error and overloaded_error', async () => {
    mock.inject({ format: 'anthropic', status: 429, retryAfter: 3 });
    mock.inject({ format: 'anthropic', status: 529 });
    const params = { model: MODEL, max_tokens: 5, messages: [{ role: 'user' as const, content: 'x' }] };
    const rate = await rejects(client.messages.create(params));
    assert.ok(rate instanceof Anthropic.RateLimitError);
    assert.equal(rate.type, 'rate_limit_error');
    assert.equal(rate.headers?.get('retry-after'), '3');
    assert.ok(rate.requestID?.startsWith('req_'));
    const overloaded = await rejects(client.messages.stream(params).finalMessage());
    assert.ok(overloaded instanceof Anthropic.InternalServerError);
    assert.equal(overloaded.status, 529);
    assert.equal(overloaded.type, 'overloaded_error');
  });

  test('models list pages with limit / after_id / has_more / first_id / last_id', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list({ limit: 2 })) ids.push(m.id);
    assert.deepEqual(ids, ['claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-opus-4-1', 'claude-sonnet-4-0', 'claude-3-5-haiku-20241022']);
    assert.equal(mock.requests.filter((r) => r.path === '/anthropic/v1/models').length, 3);
    const page = await client.models.list({ limit: 2, after_id: 'claude-sonnet-4-5' });
    assert.deepEqual(page.data.map((m) => m.id), ['claude-opus-4-1', 'claude-sonnet-4-0']);
    assert.equal(page.has_more, true);
    assert.equal(page.first_id, 'claude-opus-4-1');
    assert.equal(page.last_id, 'claude-sonnet-4-0');
    const before = await client.models.list({ limit: 5, before_id: 'claude-opus-4-1' });
    assert.deepEqual(before.data.map((m) => m.id), ['claude-haiku-4-5', 'claude-sonnet-4-5']);
    assert.equal(before.has_more, false);
    const one = await client.models.retrieve('claude-opus-4-1');
    assert.equal(one.display_name, 'Claude Opus 4.1');
  });
});
