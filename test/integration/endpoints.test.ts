// The other unified endpoints: models, embeddings, text completions, responses.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MODELS } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

describe('GET /v1/models', () => {
  test('lists every provider under provider/model ids', async () => {
    const ids: string[] = [];
    for await (const m of stack.client.models.list()) ids.push(m.id);
    assert.ok(ids.includes('openai/gpt-4o'));
    assert.ok(ids.includes('anthropic/claude-sonnet-4-5'));
    assert.ok(ids.includes('gemini/gemini-2.5-flash'));
    assert.ok(ids.every((id) => /^(openai|anthropic|gemini)\//.test(id)));
  });

  test('provider filter and page_size/page_token paging', async () => {
    const all = (await (await fetch(`${stack.gateway.url}/v1/models?provider=gemini`)).json()) as { data: { id: string; owned_by: string }[] };
    assert.ok(all.data.length >= 3);
    assert.ok(all.data.every((m) => m.id.startsWith('gemini/') && m.owned_by === 'gemini'));
    const seen: string[] = [];
    let token = '';
    for (let i = 0; i < 20; i++) {
      const page = (await (await fetch(`${stack.gateway.url}/v1/models?provider=gemini&page_size=2${token ? `&page_token=${token}` : ''}`)).json()) as {
        data: { id: string }[];
        next_page_token?: string;
      };
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((m) => m.id));
      if (!page.next_page_token) break;
      token = page.next_page_token;
    }
    assert.deepEqual(seen, all.data.map((m) => m.id));
  });

  test('bad paging parameters are 400s naming the parameter', async () => {
    const res = await fetch(`${stack.gateway.url}/v1/models?page_size=-1`);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'page_size');
    const unknown = await fetch(`${stack.gateway.url}/v1/models?provider=nope`);
    assert.equal(unknown.status, 400);
  });
});

describe('POST /v1/embeddings', () => {
  for (const model of ['openai/text-embedding-3-small', 'gemini/text-embedding-004']) {
    test(`${model}: float vectors, one per input ${compat('/v1', 'embeddings', model)}`, async () => {
      const res = await stack.client.embeddings.create({ model, input: ['first text', 'second text'], encoding_format: 'float' });
      assert.equal(res.data.length, 2);
      assert.equal(res.data[1].index, 1);
      assert.ok(res.data[0].embedding.length > 0 && res.data[0].embedding.every((x) => typeof x === 'number'));
      assert.notDeepEqual(res.data[0].embedding, res.data[1].embedding);
    });

    test(`${model}: base64 decodes to the same floats`, async () => {
      const floats = await stack.client.embeddings.create({ model, input: 'same text', encoding_format: 'float' });
      const raw = (await (
        await fetch(`${stack.gateway.url}/v1/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, input: 'same text', encoding_format: 'base64' }),
        })
      ).json()) as { data: { embedding: string }[] };
      const buf = Buffer.from(raw.data[0].embedding, 'base64');
      const decoded = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
      assert.equal(decoded.length, floats.data[0].embedding.length);
      decoded.forEach((v, i) => assert.ok(Math.abs(v - floats.data[0].embedding[i]) < 1e-6));
    });
  }

  test('anthropic has no embeddings: unsupported operation naming provider and operation', async () => {
    const err = await stack.client.embeddings.create({ model: 'anthropic/claude-sonnet-4-5', input: 'x' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /operation 'embeddings' is not supported by provider 'anthropic'/);
  });
});

describe('POST /v1/completions', () => {
  test(`native text completion on an OpenAI-format provider ${compat('/v1', 'completions', 'openai')}`, async () => {
    const res = await stack.client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
    assert.equal(res.object, 'text_completion');
    assert.equal(res.choices[0].text.trim().length > 0, true);
    assert.equal(stack.mock.requests.at(-1)!.path, '/openai/v1/completions');
  });

  test(`streaming native text completion ${compat('/v1', 'completions.stream', 'openai')}`, async () => {
    const stream = await stack.client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hi', stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.text ?? '';
    assert.ok(text.length > 0);
  });

  test('without convert_text_to_chat a provider lacking text completion answers unsupported', async () => {
    const err = await stack.client.completions.create({ model: MODELS.anthropic, prompt: 'hi' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /text_completion' is not supported by provider 'anthropic'/);
    assert.equal((err.error as { error?: { type?: string } }).error?.type ?? (err as { type?: string }).type, 'unsupported_operation');
  });
});

describe('POST /v1/responses', () => {
  test(`native on OpenAI ${compat('/v1', 'responses', 'openai')}`, async () => {
    const res = await stack.client.responses.create({ model: MODELS.openai, input: 'Hello responses' });
    assert.equal(res.object, 'response');
    assert.equal(stack.mock.requests.at(-1)!.path, '/openai/v1/responses');
    assert.ok(res.output_text.length > 0);
  });

  for (const format of ['anthropic', 'gemini'] as const) {
    test(`bridged over chat on ${format} ${compat('/v1', 'responses', format)}`, async () => {
      const res = await stack.client.responses.create({ model: MODELS[format], input: 'Hello responses', instructions: 'Be nice' });
      assert.equal(res.object, 'response');
      assert.equal(res.status, 'completed');
      assert.equal(res.output_text, 'Mock reply to: Hello responses');
      assert.ok(res.usage && res.usage.input_tokens > 0);
    });

    test(`bridged stream on ${format}: ordered events ending in response.completed ${compat('/v1', 'responses.stream', format)}`, async () => {
      const stream = await stack.client.responses.create({ model: MODELS[format], input: 'Stream responses', stream: true });
      const types: string[] = [];
      const seqs: number[] = [];
      let text = '';
      for await (const ev of stream) {
        types.push(ev.type);
        seqs.push(ev.sequence_number);
        if (ev.type === 'response.output_text.delta') text += ev.delta;
      }
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      assert.ok(types.includes('response.output_text.delta'));
      assert.deepEqual(seqs, seqs.map((_, i) => i));
      assert.equal(text, 'Mock reply to: Stream responses');
    });
  }

  test(`bridged function call on anthropic ${compat('/v1', 'responses.tools', 'anthropic')}`, async () => {
    const res = await stack.client.responses.create({
      model: MODELS.anthropic,
      input: 'weather in Oslo',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { query: { type: 'string' } } }, strict: false }],
    });
    const call = res.output.find((o) => o.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { query: 'weather in Oslo' });
  });
});

describe('OpenAI-format prefixes', () => {
  for (const base of ['/openai', '/openai/v1', '/litellm/v1', '/langchain/v1', '/pydanticai/v1']) {
    test(`the openai SDK with base URL ${base} reaches any provider ${compat(base, 'chat', 'gemini')} ${compat(base, 'chat.stream', 'anthropic')}`, async () => {
      const client = new OpenAI({ baseURL: `${stack.gateway.url}${base}`, apiKey: 'x', maxRetries: 0 });
      const res = await client.chat.completions.create({ model: MODELS.gemini, messages: [{ role: 'user', content: `via ${base}` }] });
      assert.equal(res.choices[0].message.content, `Mock reply to: via ${base}`);
      const stream = await client.chat.completions.create({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'streamed' }], stream: true });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      assert.equal(text, 'Mock reply to: streamed');
    });
  }
});
