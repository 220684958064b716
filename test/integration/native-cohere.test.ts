// The official cohere-ai SDK (CohereClientV2), unchanged but for its base URL, through /cohere to
// OpenAI-, Anthropic- and Cohere-format upstreams: chat, chatStream, tools, embed, rerank, errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Cohere, CohereClientV2 } from 'cohere-ai';
import { MODELS, mockProvider, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
let co: CohereClientV2;

before(async () => {
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u),
      cohere: mockProvider(u, 'cohere'),
    },
  }));
  co = new CohereClientV2({ token: 'not-needed', environment: `${stack.gateway.url}/cohere`, maxRetries: 0 });
});
after(() => stack?.close());

const weather: Cohere.ToolV2 = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
};

const textOf = (content: Cohere.AssistantMessageResponseContentItem[] | undefined) =>
  (content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

for (const format of ['openai', 'anthropic', 'cohere'] as const) {
  const model = format === 'cohere' ? 'cohere/command-r-plus' : MODELS[format];
  describe(`Cohere SDK to a ${format}-format upstream`, () => {
    test(`chat ${compat('/cohere', 'chat', format)}`, async () => {
      const res = await co.chat({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello from cohere' }], maxTokens: 100 });
      assert.equal(textOf(res.message.content), 'Mock reply to: Hello from cohere');
      assert.equal(res.finishReason, 'COMPLETE');
      assert.ok((res.usage?.tokens?.inputTokens ?? 0) > 0 && (res.usage?.tokens?.outputTokens ?? 0) > 0);
      assert.equal(stack.mock.requests.at(-1)!.format, format);
    });

    test(`chatStream ${compat('/cohere', 'chatStream', format)}`, async () => {
      const stream = await co.chatStream({ model, messages: [{ role: 'user', content: 'stream via cohere' }] });
      const types: string[] = [];
      let text = '';
      let end: Cohere.ChatMessageEndEventDelta | undefined;
      for await (const ev of stream) {
        types.push(ev.type);
        if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
        if (ev.type === 'message-end') end = ev.delta;
      }
      assert.equal(text, 'Mock reply to: stream via cohere');
      assert.equal(types[0], 'message-start');
      assert.equal(types[1], 'content-start');
      assert.ok(types.filter((t) => t === 'content-delta').length >= 2, types.join(','));
      assert.deepEqual(types.slice(-2), ['content-end', 'message-end']);
      assert.equal(end?.finishReason, 'COMPLETE');
      assert.ok((end?.usage?.tokens?.outputTokens ?? 0) > 0);
    });

    test(`tool call, streamed, then the tool result answered ${compat('/cohere', 'chat.tools', format)} ${compat('/cohere', 'chatStream.tools', format)}`, async () => {
      const first = await co.chat({ model, tools: [weather], messages: [{ role: 'user', content: 'weather in Lima' }] });
      assert.equal(first.finishReason, 'TOOL_CALL');
      const call = first.message.toolCalls?.[0];
      assert.equal(call?.function?.name, 'get_weather');
      assert.deepEqual(JSON.parse(call?.function?.arguments ?? ''), { query: 'weather in Lima' });

      const stream = await co.chatStream({ model, tools: [weather], messages: [{ role: 'user', content: 'weather in Rome' }] });
      const types: string[] = [];
      let name = '';
      let args = '';
      for await (const ev of stream) {
        types.push(ev.type);
        if (ev.type === 'tool-call-start') name = ev.delta?.message?.toolCalls?.function?.name ?? '';
        if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
      }
      assert.equal(name, 'get_weather');
      assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
      assert.ok(types.includes('tool-call-start') && types.includes('tool-call-end'), types.join(','));
      assert.equal(types.at(-1), 'message-end');

      const second = await co.chat({
        model,
        tools: [weather],
        messages: [
          { role: 'user', content: 'weather in Lima' },
          { role: 'assistant', toolCalls: first.message.toolCalls, toolPlan: first.message.toolPlan },
          { role: 'tool', toolCallId: call!.id!, content: 'foggy' },
        ],
      });
      assert.match(textOf(second.message.content), /^Tool said: .*foggy/);
    });
  });
}

describe('Cohere embed', () => {
  for (const model of [MODELS.openai, 'cohere/embed-english-v3.0']) {
    test(`embed through ${model.split('/')[0]} ${compat('/cohere', 'embed', model)}`, async () => {
      const res = await co.embed({ model, texts: ['first text', 'second text'], inputType: 'search_document', embeddingTypes: ['float'], outputDimension: 16 });
      const vectors = res.embeddings.float ?? [];
      assert.equal(vectors.length, 2);
      assert.equal(vectors[0].length, 16);
      assert.notDeepEqual(vectors[0], vectors[1]);
      assert.deepEqual(res.texts, ['first text', 'second text']);
      const sent = stack.mock.requests.at(-1)!.body as Record<string, unknown>;
      // Cohere's input_type reaches Cohere and nobody else.
      assert.equal(sent.input_type, model.startsWith('cohere') ? 'search_document' : undefined);
    });
  }
});

describe('Cohere rerank', () => {
  test(`results best first through the unified rerank ${compat('/cohere', 'rerank', 'cohere')}`, async () => {
    const res = await co.rerank({
      model: 'cohere/rerank-v3.5',
      query: 'capital of France',
      documents: ['Berlin is in Germany', 'Paris is the capital of France', 'Bananas are yellow'],
      topN: 2,
    });
    assert.equal(res.results.length, 2);
    assert.equal(res.results[0].index, 1);
    assert.ok(res.results[0].relevanceScore >= res.results[1].relevanceScore);
    assert.equal(res.meta?.billedUnits?.searchUnits, 1);
  });

  test('a provider without rerank is a 400 BadRequestError', async () => {
    const err = await co.rerank({ model: MODELS.openai, query: 'q', documents: ['d'] }).catch((e: unknown) => e);
    assert.ok(err instanceof Cohere.BadRequestError, String(err));
    assert.match((err.body as { message: string }).message, /rerank/);
  });
});

describe('errors in Cohere shape', () => {
  test('an upstream 429 reaches the SDK as TooManyRequestsError', async () => {
    stack.mock.inject({ format: 'anthropic', status: 429 });
    const err = await co.chat({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Cohere.TooManyRequestsError, String(err));
    const body = err.body as { id: string; message: string };
    assert.equal(typeof body.id, 'string');
    assert.ok(body.message);
  });

  test('RAG documents are refused with a 400 naming them', async () => {
    const err = await co
      .chat({ model: MODELS.openai, messages: [{ role: 'user', content: 'x' }], documents: [{ data: { text: 'doc' } }] })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Cohere.BadRequestError, String(err));
    assert.match((err.body as { message: string }).message, /documents/);
  });

  test('an upstream that breaks mid-stream ends with message-end ERROR', async () => {
    stack.mock.inject({ format: 'openai', resetAfterChunks: 3 });
    const stream = await co.chatStream({ model: MODELS.openai, messages: [{ role: 'user', content: 'this stream will break' }] });
    let end: Cohere.ChatMessageEndEventDelta | undefined;
    for await (const ev of stream) if (ev.type === 'message-end') end = ev.delta;
    assert.equal(end?.finishReason, 'ERROR');
    assert.ok(end?.error);
  });
});

describe('framework prefixes', () => {
  test(`/pydanticai/cohere serves chat too ${compat('/pydanticai/cohere', 'chat', 'gemini')}`, async () => {
    const fw = new CohereClientV2({ token: 'x', environment: `${stack.gateway.url}/pydanticai/cohere`, maxRetries: 0 });
    const res = await fw.chat({ model: MODELS.gemini, messages: [{ role: 'user', content: 'framework' }] });
    assert.equal(textOf(res.message.content), 'Mock reply to: framework');
    assert.equal(stack.mock.requests.at(-1)!.format, 'gemini');
  });
});
