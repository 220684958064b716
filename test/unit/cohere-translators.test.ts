// Cohere v2 translators, both ways: chat request/response, stream events, embed, rerank, errors, models.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toCohereRequest } from '../../proxy/src/providers/cohere/request.ts';
import { fromCohereResponse } from '../../proxy/src/providers/cohere/response.ts';
import { createCohereStreamTranslator } from '../../proxy/src/providers/cohere/stream.ts';
import { toCohereEmbedRequest, fromCohereEmbedResponse } from '../../proxy/src/providers/cohere/embeddings.ts';
import { toCohereRerankRequest, fromCohereRerankResponse } from '../../proxy/src/providers/cohere/rerank.ts';
import { fromCohereError } from '../../proxy/src/providers/cohere/error.ts';
import { fromCohereModels } from '../../proxy/src/providers/cohere/models.ts';
import type { ChatChunk, ChatRequest } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const ctx = { model: 'command-r-plus', id: 'chatcmpl-x', created: 1700000000 };
const tool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } };

describe('cohere chat request', () => {
  test('messages, tools, sampling and thinking map onto the v2 body', () => {
    const req: ChatRequest = {
      model: 'cohere/command-r-plus',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] },
        { role: 'assistant', content: null, reasoning: 'plan', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"q":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
      tools: [tool, { type: 'function', function: { name: 'other' } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_completion_tokens: 50,
      top_p: 1,
      stop: 'END',
      seed: 3,
      frequency_penalty: -1,
      presence_penalty: 0.5,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      reasoning: { max_tokens: 2048 },
    };
    const out = toCohereRequest(req, 'command-r-plus');
    assert.deepEqual(out.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] },
      { role: 'assistant', tool_plan: 'plan', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"q":1}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ]);
    assert.deepEqual(out.tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]);
    assert.equal(out.tool_choice, 'REQUIRED');
    assert.equal(out.max_tokens, 50);
    assert.equal(out.p, 0.99);
    assert.deepEqual(out.stop_sequences, ['END']);
    assert.equal(out.seed, 3);
    assert.equal(out.frequency_penalty, 0);
    assert.equal(out.presence_penalty, 0.5);
    assert.deepEqual(out.response_format, { type: 'json_object', json_schema: { type: 'object' } });
    assert.deepEqual(out.thinking, { type: 'enabled', token_budget: 2048 });
    assert.equal('stream' in out, false);
  });

  test('tool_choice none, tools without parameters, audio rejected', () => {
    const out = toCohereRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 't' } }], tool_choice: 'none', reasoning_effort: 'none' }, 'm');
    assert.equal(out.tool_choice, 'NONE');
    assert.deepEqual(out.tools![0].function.parameters, { type: 'object', properties: {} });
    assert.deepEqual(out.thinking, { type: 'disabled' });
    assert.throws(
      () => toCohereRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }, 'm'),
      (e: unknown) => e instanceof GatewayError && e.status === 400,
    );
  });
});

describe('cohere chat response', () => {
  test('text, thinking and usage', () => {
    const out = fromCohereResponse({
      id: 'r1',
      finish_reason: 'MAX_TOKENS',
      message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }] },
      usage: { billed_units: { input_tokens: 4, output_tokens: 2 }, tokens: { input_tokens: 10, output_tokens: 3 } },
    }, ctx);
    assert.equal(out.id, 'r1');
    assert.equal(out.model, 'command-r-plus');
    assert.deepEqual(out.choices[0].message, { role: 'assistant', content: 'Hello there', reasoning: 'hmm' });
    assert.equal(out.choices[0].finish_reason, 'length');
    assert.deepEqual(out.usage, { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
  });

  test('tool calls with a plan', () => {
    const out = fromCohereResponse({
      id: 'r2',
      finish_reason: 'TOOL_CALL',
      message: { role: 'assistant', tool_plan: 'I will call it', tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"query":"x"}' } }] },
      usage: { billed_units: { input_tokens: 4, output_tokens: 2 } },
    }, ctx);
    const m = out.choices[0].message;
    assert.equal(m.content, null);
    assert.equal(m.reasoning, 'I will call it');
    assert.deepEqual(m.tool_calls, [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"query":"x"}' } }]);
    assert.equal(out.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(out.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
  });
});

const ev = (type: string, payload: Record<string, unknown> = {}) => ({ event: type, data: JSON.stringify({ type, ...payload }) });

describe('cohere stream translator', () => {
  test('text stream with thinking, finish and usage', () => {
    const t = createCohereStreamTranslator(ctx);
    const chunks: ChatChunk[] = [
      ev('message-start', { id: 'm1', delta: { message: { role: 'assistant' } } }),
      ev('content-start', { index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } }),
      ev('content-delta', { index: 0, delta: { message: { content: { thinking: 'hmm' } } } }),
      ev('content-end', { index: 0 }),
      ev('content-start', { index: 1, delta: { message: { content: { type: 'text', text: '' } } } }),
      ev('content-delta', { index: 1, delta: { message: { content: { text: 'Hi ' } } } }),
      ev('content-delta', { index: 1, delta: { message: { content: { text: 'there' } } } }),
      ev('content-end', { index: 1 }),
      ev('message-end', { delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 2, output_tokens: 3 } } } }),
      { data: '[DONE]' },
    ].flatMap((e) => t.push(e));
    chunks.push(...t.finish());
    assert.ok(chunks.every((c) => c.id === 'm1'));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(chunks.map((c) => c.choices[0]?.delta.reasoning ?? '').join(''), 'hmm');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Hi there');
    const fin = chunks.find((c) => c.choices[0]?.finish_reason);
    assert.equal(fin?.choices[0].finish_reason, 'stop');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    assert.equal(chunks.filter((c) => c.usage).length, 1);
  });

  test('tool plan and tool call deltas', () => {
    const t = createCohereStreamTranslator(ctx);
    const chunks = [
      ev('message-start', { id: 'm2' }),
      ev('tool-plan-delta', { delta: { message: { tool_plan: 'I will ' } } }),
      ev('tool-call-start', { index: 0, delta: { message: { tool_calls: { id: 'tc1', type: 'function', function: { name: 'get_weather', arguments: '' } } } } }),
      ev('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '{"query":' } } } } }),
      ev('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: '"x"}' } } } } }),
      ev('tool-call-end', { index: 0 }),
      ev('message-end', { delta: { finish_reason: 'TOOL_CALL' } }),
    ].flatMap((e) => t.push(e));
    assert.equal(chunks[1].choices[0].delta.reasoning, 'I will ');
    assert.deepEqual(chunks[2].choices[0].delta.tool_calls, [{ index: 0, id: 'tc1', type: 'function', function: { name: 'get_weather', arguments: '' } }]);
    const args = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((d) => d.function.arguments ?? '').join('');
    assert.equal(args, '{"query":"x"}');
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(t.finish(), []);
  });

  test('an ERROR message-end and bad JSON become gateway errors', () => {
    const t = createCohereStreamTranslator(ctx);
    assert.throws(() => t.push(ev('message-end', { delta: { finish_reason: 'ERROR', error: 'boom' } })), (e: unknown) => e instanceof GatewayError && e.message === 'boom');
    assert.throws(() => createCohereStreamTranslator(ctx).push({ data: '{nope' }), (e: unknown) => e instanceof GatewayError && e.status === 502);
  });
});

describe('cohere embed, rerank, errors, models', () => {
  test('embed request and response', () => {
    assert.deepEqual(toCohereEmbedRequest({ model: 'cohere/e', input: 'hi', dimensions: 256 }, 'e'), {
      model: 'e', texts: ['hi'], input_type: 'search_document', embedding_types: ['float'], output_dimension: 256,
    });
    assert.equal(toCohereEmbedRequest({ model: 'e', input: ['a'], input_type: 'search_query' } as never, 'e').input_type, 'search_query');
    assert.throws(() => toCohereEmbedRequest({ model: 'e', input: [1, 2] }, 'e'), GatewayError);
    const out = fromCohereEmbedResponse({ embeddings: { float: [[0.1, 0.2], [0.3, 0.4]] }, meta: { billed_units: { input_tokens: 2 } } }, 'e');
    assert.deepEqual(out.data.map((d) => d.index), [0, 1]);
    assert.deepEqual(out.data[1].embedding, [0.3, 0.4]);
    assert.deepEqual(out.usage, { prompt_tokens: 2, total_tokens: 2 });
  });

  test('rerank request and response (sorted, documents echoed on request)', () => {
    const req = { model: 'cohere/rerank-v3.5', query: 'q', documents: ['a', { text: 'b', id: 'B' }], top_n: 2, return_documents: true };
    assert.deepEqual(toCohereRerankRequest(req, 'rerank-v3.5'), { model: 'rerank-v3.5', query: 'q', documents: ['a', 'b'], top_n: 2 });
    const out = fromCohereRerankResponse({ id: 'r', results: [{ index: 0, relevance_score: 0.2 }, { index: 1, relevance_score: 0.9 }], meta: { billed_units: { search_units: 1 } } }, req, 'rerank-v3.5');
    assert.deepEqual(out.results, [
      { index: 1, relevance_score: 0.9, document: { text: 'b', id: 'B' } },
      { index: 0, relevance_score: 0.2, document: { text: 'a' } },
    ]);
    assert.equal(out.id, 'r');
    assert.equal(out.usage?.search_units, 1);
  });

  test('errors and models', () => {
    assert.deepEqual(fromCohereError(429, { id: 'e1', message: 'slow' }), { type: 'rate_limit_error', message: 'slow', code: 'e1' });
    assert.deepEqual(fromCohereError(502, '<html>bad gateway</html>'), { type: 'api_error', message: '<html>bad gateway</html>' });
    const page = fromCohereModels({ models: [{ name: 'command-r', endpoints: ['chat'], context_length: 128000 }, { bogus: 1 }], next_page_token: 'n' });
    assert.deepEqual(page, { models: [{ id: 'command-r', context_length: 128000, description: 'endpoints: chat' }], nextPageToken: 'n' });
  });
});
