// The cohere provider behind the unified endpoints, against the mock's Cohere v2 dialect.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
const MODEL = 'cohere/command-r-plus';

before(async () => {
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u),
      cohere: mockProvider(u, 'cohere'),
    },
  }));
});
after(() => stack.close());

const weather: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
};

async function postJson(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${stack.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('cohere via the unified API', () => {
  test(`chat, non-streaming ${compat('/v1', 'chat', 'cohere')}`, async () => {
    const res = await stack.client.chat.completions.create({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello cohere' }], max_tokens: 100 });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello cohere');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.equal(res.model, 'command-r-plus');
    assert.ok(res.usage && res.usage.completion_tokens === 5);
    const seen = stack.mock.requests.at(-1)!;
    assert.equal(seen.path, '/cohere/v2/chat');
    assert.equal(seen.headers.authorization, 'Bearer sk-cohere-test');
    assert.deepEqual((seen.body as { messages: unknown }).messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello cohere' }]);
  });

  test(`chat, streaming with usage ${compat('/v1', 'chat.stream', 'cohere')}`, async () => {
    const stream = await stack.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'stream please' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage;
    }
    assert.equal(text, 'Mock reply to: stream please');
    assert.equal(finish, 'stop');
    assert.ok(usage && usage.prompt_tokens > 0);
  });

  test(`a tool call, then the tool result answered ${compat('/v1', 'chat.tools', 'cohere')} ${compat('/v1', 'chat.tools.stream', 'cohere')}`, async () => {
    const first = await stack.client.chat.completions.create({ model: MODEL, tools: [weather], messages: [{ role: 'user', content: 'weather in Oslo' }] });
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'weather in Oslo' });

    const streamed = await stack.client.chat.completions.create({ model: MODEL, tools: [weather], messages: [{ role: 'user', content: 'weather in Rome' }], stream: true });
    let args = '';
    for await (const c of streamed) for (const d of c.choices[0]?.delta.tool_calls ?? []) args += d.function?.arguments ?? '';
    assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });

    const second = await stack.client.chat.completions.create({
      model: MODEL,
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather in Oslo' },
        first.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: 'snowing' },
      ],
    });
    assert.equal(second.choices[0].message.content, 'Tool said: snowing');
  });

  test(`embeddings ${compat('/v1', 'embeddings', 'cohere')}`, async () => {
    const res = await stack.client.embeddings.create({ model: 'cohere/embed-english-v3.0', input: ['alpha', 'beta'] });
    assert.equal(res.data.length, 2);
    assert.equal(res.data[0].embedding.length, 8);
    assert.equal(res.usage.prompt_tokens, 2);
    const body = stack.mock.requests.at(-1)!.body as { input_type: string; embedding_types: string[] };
    assert.equal(body.input_type, 'search_document');
    assert.deepEqual(body.embedding_types, ['float']);
  });

  test('/v1/rerank returns results sorted by relevance', async () => {
    const docs = ['Berlin is in Germany', 'Paris is the capital of France', { text: 'Madrid is the capital of Spain' }];
    const res = await postJson('/v1/rerank', { model: 'cohere/rerank-v3.5', query: 'capital of France', documents: docs, return_documents: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const results = res.body.results as { index: number; relevance_score: number; document?: { text: string } }[];
    assert.deepEqual(results.map((r) => r.index), [1, 2, 0]);
    for (let i = 1; i < results.length; i++) assert.ok(results[i - 1].relevance_score >= results[i].relevance_score);
    assert.deepEqual(results[0].document, { text: 'Paris is the capital of France' });
    assert.equal(res.body.model, 'rerank-v3.5');
    assert.equal((res.body.extra_fields as { provider: string }).provider, 'cohere');
    assert.deepEqual(stack.mock.requests.at(-1)!.body, { model: 'rerank-v3.5', query: 'capital of France', documents: ['Berlin is in Germany', 'Paris is the capital of France', 'Madrid is the capital of Spain'] });

    const top = await postJson('/openai/v1/rerank', { model: 'cohere/rerank-v3.5', query: 'capital', documents: ['a capital', 'none'], top_n: 1 });
    assert.equal((top.body.results as unknown[]).length, 1);
  });

  test('rerank on a provider without it is an unsupported operation; bad bodies are 400', async () => {
    const res = await postJson('/v1/rerank', { model: 'openai/gpt-4o', query: 'q', documents: ['a'] });
    assert.equal(res.status, 400);
    assert.equal((res.body.error as { type: string }).type, 'unsupported_operation');
    const invalid = await postJson('/v1/rerank', { model: 'cohere/rerank-v3.5', query: '', documents: [] });
    assert.equal(invalid.status, 400);
  });

  test('upstream errors keep their status and message', async () => {
    stack.mock.inject({ format: 'cohere', status: 429, message: 'trial key limit' });
    const err = await stack.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).then(
      () => assert.fail('expected an error'),
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
    assert.equal(err.status, 429);
    assert.match(err.message, /trial key limit/);
  });

  test('models are listed under the cohere prefix', async () => {
    const list = await stack.client.models.list();
    const ids = list.data.map((m) => m.id);
    assert.ok(ids.includes('cohere/command-r-plus'));
    assert.ok(ids.includes('cohere/rerank-v3.5'));
  });
});
