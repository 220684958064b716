// The mock's Cohere v2 dialect, checked with the official `cohere-ai` SDK (and raw HTTP for the wire).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CohereClientV2, CohereError } from 'cohere-ai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { parseSse, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let client: CohereClientV2;

before(async () => {
  mock = await startMockProvider();
  client = new CohereClientV2({ token: 'co-test', baseUrl: `${mock.url}/cohere`, maxRetries: 0 });
});
after(() => mock.close());

const MODEL = 'command-r-plus';
const AUTH = { authorization: 'Bearer co-test' };
const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };

async function rejects(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => assert.fail('expected an error'), (e: unknown) => e);
}

describe('cohere chat', () => {
  test('non-streaming reply with COMPLETE and usage', async () => {
    const res = await client.chat({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there mock' }] });
    assert.equal(res.finishReason, 'COMPLETE');
    const text = res.message.content?.map((c) => (c.type === 'text' ? c.text : '')).join('');
    assert.equal(text, 'Mock reply to: Hello there mock');
    assert.equal(res.usage?.billedUnits?.inputTokens, 5);
    assert.equal(res.usage?.billedUnits?.outputTokens, 6);
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer co-test');
    assert.equal(mock.requests.at(-1)!.path, '/cohere/v2/chat');
  });

  test('streaming: typed events with event: lines, assembled text', async () => {
    const stream = await client.chatStream({ model: MODEL, messages: [{ role: 'user', content: 'stream it now' }] });
    let text = '';
    let finish: string | undefined;
    for await (const ev of stream) {
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    assert.equal(text, 'Mock reply to: stream it now');
    assert.equal(finish, 'COMPLETE');
    const events = parseSse(mock.requests.at(-1)!.responseBody!);
    assert.deepEqual(events.slice(0, 2).map((e) => e.event), ['message-start', 'content-start']);
    assert.deepEqual(events.slice(-2).map((e) => e.event), ['content-end', 'message-end']);
    for (const e of events) assert.equal((JSON.parse(e.data) as { type: string }).type, e.event);
  });

  test('tool call, streamed tool call, then "Tool said"', async () => {
    const first = await client.chat({ model: MODEL, tools: [weather], messages: [{ role: 'user', content: 'weather in Paris' }] });
    assert.equal(first.finishReason, 'TOOL_CALL');
    const call = first.message.toolCalls![0];
    assert.equal(call.function?.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function!.arguments!), { query: 'weather in Paris' });
    assert.ok(first.message.toolPlan);

    const stream = await client.chatStream({ model: MODEL, tools: [weather], messages: [{ role: 'user', content: 'weather in Rome' }] });
    let args = '';
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
    }
    assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
    assert.ok(types.includes('tool-plan-delta') && types.includes('tool-call-start') && types.includes('tool-call-end'));

    const second = await client.chat({
      model: MODEL,
      tools: [weather],
      messages: [
        { role: 'user', content: 'weather in Paris' },
        { role: 'assistant', toolPlan: first.message.toolPlan, toolCalls: first.message.toolCalls },
        { role: 'tool', toolCallId: call.id, content: 'sunny, 21C' },
      ],
    });
    assert.equal(second.finishReason, 'COMPLETE');
    assert.equal(second.message.content?.map((c) => (c.type === 'text' ? c.text : '')).join(''), 'Tool said: sunny, 21C');
  });

  test('strict validation and errors in the {message} shape', async () => {
    const unknownField = await postRaw(`${mock.url}/cohere/v2/chat`, { model: MODEL, messages: [{ role: 'user', content: 'x' }], top_p: 0.5 }, AUTH);
    assert.equal(unknownField.status, 400);
    assert.match((JSON.parse(unknownField.text) as { message: string }).message, /top_p/);
    const orphan = await postRaw(`${mock.url}/cohere/v2/chat`, { model: MODEL, messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }] }, AUTH);
    assert.equal(orphan.status, 400);
    const noAuth = await postRaw(`${mock.url}/cohere/v2/chat`, { model: MODEL, messages: [{ role: 'user', content: 'x' }] }, {});
    assert.equal(noAuth.status, 401);
    const missing = await rejects(client.chat({ model: 'nonexistent-model', messages: [{ role: 'user', content: 'x' }] }));
    assert.ok(missing instanceof CohereError);
    assert.equal(missing.statusCode, 404);
  });

  test('faults are honoured for the cohere format', async () => {
    mock.inject({ format: 'cohere', status: 429, message: 'slow down' });
    const err = await rejects(client.chat({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }));
    assert.ok(err instanceof CohereError);
    assert.equal(err.statusCode, 429);
    assert.equal((err.body as { message: string }).message, 'slow down');
  });
});

describe('cohere embed, rerank, models', () => {
  test('embed: deterministic float vectors; input_type required', async () => {
    const a = await client.embed({ model: 'embed-english-v3.0', texts: ['hello', 'world'], inputType: 'search_document', embeddingTypes: ['float'] });
    const b = await client.embed({ model: 'embed-english-v3.0', texts: ['hello'], inputType: 'search_query', embeddingTypes: ['float'] });
    assert.equal(a.embeddings.float!.length, 2);
    assert.deepEqual(a.embeddings.float![0], b.embeddings.float![0]);
    assert.notDeepEqual(a.embeddings.float![0], a.embeddings.float![1]);
    assert.equal(a.meta?.billedUnits?.inputTokens, 2);
    const noType = await postRaw(`${mock.url}/cohere/v2/embed`, { model: 'embed-english-v3.0', texts: ['x'], embedding_types: ['float'] }, AUTH);
    assert.equal(noType.status, 400);
  });

  test('rerank: word-overlap scores, best first, top_n', async () => {
    const res = await client.rerank({
      model: 'rerank-v3.5',
      query: 'capital of France',
      documents: ['Berlin is in Germany', 'Paris is the capital of France', 'The capital of Spain'],
      topN: 2,
    });
    assert.deepEqual(res.results.map((r) => r.index), [1, 2]);
    assert.ok(res.results[0].relevanceScore > res.results[1].relevanceScore);
  });

  test('models list with endpoints', async () => {
    const res = await client.models.list({ pageSize: 1000 });
    const r = res.models.find((m) => m.name === 'rerank-v3.5');
    assert.deepEqual(r?.endpoints, ['rerank']);
    const page = await client.models.list({ pageSize: 2 });
    assert.equal(page.models.length, 2);
    assert.equal(page.nextPageToken, '2');
  });
});
