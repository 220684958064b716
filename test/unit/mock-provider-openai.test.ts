// The mock's OpenAI dialect, checked with the official `openai` SDK (and raw HTTP where the SDK hides the wire).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { OPENAI_AUTH, parseSse, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let client: OpenAI;

before(async () => {
  mock = await startMockProvider();
  client = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'sk-test', maxRetries: 0 });
});
after(() => mock.close());

const weather: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
};

describe('openai chat completions', () => {
  test('non-streaming reply echoes the last user message with word-count usage', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there mock' }],
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'gpt-4o');
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello there mock');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.deepEqual(
      [res.usage?.prompt_tokens, res.usage?.completion_tokens, res.usage?.total_tokens],
      [5, 6, 11], // "Be brief. Hello there mock" / "Mock reply to: Hello there mock"
    );
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.format, 'openai');
    assert.equal(seen.path, '/openai/v1/chat/completions');
    assert.equal(seen.headers.authorization, 'Bearer sk-test');
    assert.equal((seen.body as { model: string }).model, 'gpt-4o');
  });

  test('streaming: word deltas, then a usage chunk with empty choices when include_usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, 'Mock reply to: stream this please');
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.content).length >= 5, 'several content deltas');
    assert.equal(chunks.at(-2)?.choices[0].finish_reason, 'stop');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage?.completion_tokens, 6);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null), 'other chunks carry usage: null');
    assert.ok(mock.requests.at(-1)!.responseBody!.endsWith('data: [DONE]\n\n'));
  });

  test('streaming without include_usage has no usage field at all', async () => {
    const raw = await postRaw(`${mock.url}/openai/v1/chat/completions`, {
      model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'x' }],
    }, OPENAI_AUTH);
    assert.match(raw.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseSse(raw.text);
    assert.equal(events.at(-1)!.data, '[DONE]');
    for (const e of events.slice(0, -1)) assert.equal('usage' in (JSON.parse(e.data) as object), false);
  });

  test('tools: a call to the first tool, then "Tool said" once the tool answered', async () => {
    const first = await client.chat.completions.create({
      model: 'gpt-4o', tools: [weather], messages: [{ role: 'user', content: 'weather in Paris' }],
    });
    const msg = first.choices[0].message;
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.equal(msg.content, null);
    const call = msg.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'weather in Paris' });

    const second = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weather],
      messages: [{ role: 'user', content: 'weather in Paris' }, msg, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' }],
    });
    assert.equal(second.choices[0].message.content, 'Tool said: sunny, 21C');
    assert.equal(second.choices[0].finish_reason, 'stop');
  });

  test('streamed tool call arguments reassemble from several pieces', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o', tools: [weather], stream: true, messages: [{ role: 'user', content: 'weather in Rome' }],
    });
    let args = '';
    let pieces = 0;
    let name = '';
    let finish: string | null = null;
    for await (const c of stream) {
      for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
        name += tc.function?.name ?? '';
        if (tc.function?.arguments) pieces++;
        args += tc.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(name, 'get_weather');
    assert.ok(pieces >= 2);
    assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
    assert.equal(finish, 'tool_calls');
  });

  test('reasoning_effort adds reasoning_tokens to usage only', async () => {
    const res = await client.chat.completions.create({
      model: 'o4-mini', reasoning_effort: 'low', messages: [{ role: 'user', content: 'think hard' }],
    });
    assert.equal(res.choices[0].message.content, 'Mock reply to: think hard');
    assert.equal(res.usage?.completion_tokens_details?.reasoning_tokens, 4); // "Thinking about: think hard"
    assert.equal(res.usage?.completion_tokens, 5 + 4);
  });

  test('images are counted in the reply', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{
        role: 'user',
        content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }],
      }],
    });
    assert.equal(res.choices[0].message.content, 'Mock reply to: what is this [images: 1]');
  });

  test('max_tokens truncates with finish_reason length; stop sequences cut', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o', max_tokens: 3, messages: [{ role: 'user', content: 'a b c' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to:');
    assert.equal(res.choices[0].finish_reason, 'length');
    const cut = await client.chat.completions.create({ model: 'gpt-4o', stop: ['reply'], messages: [{ role: 'user', content: 'x' }] });
    assert.equal(cut.choices[0].message.content, 'Mock ');
    assert.equal(cut.choices[0].finish_reason, 'stop');
  });
});

describe('openai validation and auth', () => {
  test('missing messages, unknown parameters and orphan tool messages are 400s', async () => {
    const missing = await client.chat.completions.create({ model: 'gpt-4o' } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.BadRequestError);
    assert.equal(missing.param, 'messages');
    assert.equal(missing.code, 'missing_required_parameter');

    const unknown = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], max_output_tokens: 5 } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.BadRequestError);
    assert.match(unknown.message, /Unrecognized request argument supplied: max_output_tokens/);

    const orphan = await client.chat.completions.create({
      model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_1', content: 'r' }],
    }).catch((e: unknown) => e);
    assert.ok(orphan instanceof OpenAI.BadRequestError);
    assert.match(orphan.message, /must be a response to a preceeding message with 'tool_calls'/);

    const unanswered = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: 'y' },
      ],
    }).catch((e: unknown) => e);
    assert.ok(unanswered instanceof OpenAI.BadRequestError);
    assert.match(unanswered.message, /did not have response messages: call_9/);

    const badPart = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'image', source: {} }] as unknown as OpenAI.Chat.ChatCompletionContentPart[] }],
    }).catch((e: unknown) => e);
    assert.ok(badPart instanceof OpenAI.BadRequestError);
    assert.equal(badPart.code, 'invalid_value');
  });

  test('malformed JSON is a 400 in the OpenAI error shape', async () => {
    const raw = await postRaw(`${mock.url}/openai/v1/chat/completions`, '{"model": ', OPENAI_AUTH);
    assert.equal(raw.status, 400);
    const body = JSON.parse(raw.text) as { error: { message: string; type: string; param: null; code: null } };
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /could not parse the JSON body/);
    assert.ok('param' in body.error && 'code' in body.error);
    assert.equal(mock.requests.at(-1)!.body, undefined);
  });

  test('missing and invalid keys are 401s', async () => {
    const none = await postRaw(`${mock.url}/openai/v1/chat/completions`, { model: 'gpt-4o', messages: [] }, {});
    assert.equal(none.status, 401);
    const bad = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'invalid-key-123456', maxRetries: 0 });
    const err = await bad.models.list().catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.code, 'invalid_api_key');
  });

  test('unknown model is a 404 model_not_found', async () => {
    const err = await client.chat.completions.create({ model: 'nonexistent-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
    assert.equal(err.code, 'model_not_found');
  });

  test('an injected 429 raises RateLimitError with Retry-After', async () => {
    mock.inject({ format: 'openai', status: 429, retryAfter: 7 });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.status, 429);
    assert.equal(err.headers?.get('retry-after'), '7');
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.type, 'requests');
  });
});

describe('openai other endpoints', () => {
  test('embeddings: deterministic 8-dim vectors, base64 (SDK default) equals float', async () => {
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['first', 'second'], encoding_format: 'float' });
    assert.equal(floats.object, 'list');
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0].embedding.length, 8);
    assert.notDeepEqual(floats.data[0].embedding, floats.data[1].embedding);
    const norm = Math.hypot(...floats.data[0].embedding);
    assert.ok(Math.abs(norm - 1) < 1e-5);
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'first' }); // SDK asks base64, decodes
    assert.equal((mock.requests.at(-1)!.body as { encoding_format: string }).encoding_format, 'base64');
    assert.deepEqual(decoded.data[0].embedding, floats.data[0].embedding);
    assert.equal(floats.usage.prompt_tokens, 2);
    const dims = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 4, encoding_format: 'float' });
    assert.equal(dims.data[0].embedding.length, 4);
  });

  test('models list and retrieve', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.ok(ids.includes('gpt-4o') && ids.includes('gpt-4o-mini') && ids.includes('text-embedding-3-small'));
    const one = await client.models.retrieve('gpt-4o');
    assert.equal(one.object, 'model');
    const err = await client.models.retrieve('nope').catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError);
  });

  test('legacy completions, plain and streamed', async () => {
    const res = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    assert.equal(res.object, 'text_completion');
    assert.equal(res.choices[0].text, 'Mock reply to: Say hi');
    assert.equal(res.usage?.prompt_tokens, 2);
    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', stream: true });
    let text = '';
    let n = 0;
    for await (const c of stream) {
      text += c.choices[0]?.text ?? '';
      n++;
    }
    assert.equal(text, 'Mock reply to: Say hi');
    assert.ok(n >= 4);
  });

  test('responses: object and streamed events with sequence numbers', async () => {
    const res = await client.responses.create({ model: 'gpt-4o', instructions: 'Be nice.', input: 'hello responses' });
    assert.equal(res.object, 'response');
    assert.equal(res.status, 'completed');
    assert.equal(res.output_text, 'Mock reply to: hello responses');
    assert.equal(res.usage?.input_tokens, 4);

    const stream = await client.responses.create({ model: 'gpt-4o', input: [{ role: 'user', content: 'stream responses' }], stream: true });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.deepEqual(seqs, seqs.map((_, i) => i));
    assert.equal(text, 'Mock reply to: stream responses');
    const item = completed?.output.find((o): o is OpenAI.Responses.ResponseOutputMessage => o.type === 'message');
    assert.deepEqual(item?.content.map((c) => (c.type === 'output_text' ? c.text : '')), ['Mock reply to: stream responses']);
    assert.equal(completed?.usage?.output_tokens, 5);
    assert.ok(parseSse(mock.requests.at(-1)!.responseBody!).every((e) => e.event && e.event === (JSON.parse(e.data) as { type: string }).type));
  });

  test('responses: function tools and function_call_output', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: false }];
    const res = await client.responses.create({ model: 'gpt-4o', input: 'find cats', tools });
    const call = res.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
    assert.equal(call?.name, 'lookup');
    assert.deepEqual(JSON.parse(call!.arguments), { query: 'find cats' });
    const next = await client.responses.create({
      model: 'gpt-4o', tools,
      input: [{ role: 'user', content: 'find cats' }, call!, { type: 'function_call_output', call_id: call!.call_id, output: '3 cats' }],
    });
    assert.equal(next.output_text, 'Tool said: 3 cats');
  });

  test('the OpenAI routes are also served at the root', async () => {
    const root = new OpenAI({ baseURL: `${mock.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const res = await root.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'root' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: root');
    assert.equal(mock.requests.at(-1)!.path, '/v1/chat/completions');
  });
});
