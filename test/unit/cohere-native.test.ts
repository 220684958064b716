// The /cohere reverse translators: native v2 chat, embed and rerank requests -> unified, unified
// answers and chunks -> native answers and v2 stream events, errors; each checked by a round trip
// through the forward translators.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromCohereChatRequest, fromCohereEmbedRequest, fromCohereRerankRequest } from '../../proxy/src/providers/cohere/native/request.ts';
import { toCohereChatResponse, toCohereEmbedResponse, toCohereRerankResponse } from '../../proxy/src/providers/cohere/native/response.ts';
import { createCohereStreamEncoder, encodeCohereEvent } from '../../proxy/src/providers/cohere/native/stream.ts';
import { toCohereError } from '../../proxy/src/providers/cohere/native/error.ts';
import { toCohereRequest } from '../../proxy/src/providers/cohere/request.ts';
import { fromCohereResponse } from '../../proxy/src/providers/cohere/response.ts';
import { createCohereStreamTranslator } from '../../proxy/src/providers/cohere/stream.ts';
import { fromCohereEmbedResponse, toCohereEmbedRequest } from '../../proxy/src/providers/cohere/embeddings.ts';
import { fromCohereRerankResponse, toCohereRerankRequest } from '../../proxy/src/providers/cohere/rerank.ts';
import { fromCohereError } from '../../proxy/src/providers/cohere/error.ts';
import type { CohereChatRequest, CohereStreamEvent } from '../../proxy/src/providers/cohere/types.ts';
import type { ChatChunk, ChatDelta, ChatRequest, ChatResponse, Usage } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { SseParser } from '../../proxy/src/upstream/sse.ts';

function rejects(fn: () => unknown, param: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.param, param);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('fromCohereChatRequest', () => {
  test('reads messages, tools and sampling fields; drops Cohere-only delivery knobs', () => {
    const req = fromCohereChatRequest({
      model: 'anthropic/claude-sonnet-4-5',
      stream: false,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          tool_plan: 'I will call get_weather.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"q":"Lima"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'foggy' }, { type: 'document', document: { data: { temp: 14 } } }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'W', parameters: { type: 'object' } } }],
      tool_choice: 'REQUIRED',
      max_tokens: 100,
      temperature: 0.2,
      p: 0.8,
      k: 40,
      stop_sequences: ['END'],
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      response_format: { type: 'json_object', json_schema: { type: 'object' } },
      thinking: { type: 'enabled', token_budget: 512 },
      safety_mode: 'CONTEXTUAL',
      citation_options: { mode: 'FAST' },
    });
    assert.deepEqual(req, {
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"q":"Lima"}' } }],
          reasoning: 'I will call get_weather.',
        },
        { role: 'tool', tool_call_id: 'c1', content: 'foggy\n{"temp":14}' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'W', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.8,
      stop: ['END'],
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object' } } },
      reasoning: { max_tokens: 512 },
    });
  });

  test('a stream asks for usage, which message-end reports', () => {
    const req = fromCohereChatRequest({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(req.stream_options, { include_usage: true });
  });

  test('refuses what it cannot honour, naming the field', () => {
    rejects(() => fromCohereChatRequest({ messages: [{ role: 'user', content: 'x' }] }), 'model');
    rejects(() => fromCohereChatRequest({ model: 'm', messages: [] }), 'messages');
    rejects(() => fromCohereChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], documents: ['doc'] }), 'documents', /RAG/);
    rejects(() => fromCohereChatRequest({ model: 'm', messages: [{ role: 'chatbot', content: 'x' }] }), 'messages[0].role');
    rejects(() => fromCohereChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: 'AUTO' }), 'tool_choice');
    rejects(() => fromCohereChatRequest({ model: 'm', messages: [{ role: 'tool', content: 'x' }] }), 'messages[0].tool_call_id');
  });

  test('round trip: a request the forward translator wrote comes back unchanged', () => {
    const native: CohereChatRequest = {
      model: 'command-r-plus',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'weather?' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }], tool_plan: 'call f' },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
        { role: 'assistant', content: 'It is done.' },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'REQUIRED',
      max_tokens: 50,
      temperature: 0.4,
      p: 0.5,
      stop_sequences: ['x'],
      seed: 3,
      response_format: { type: 'json_object' },
      thinking: { type: 'enabled', token_budget: 256 },
    };
    const unified = fromCohereChatRequest(native);
    assert.deepEqual(toCohereRequest(unified, 'command-r-plus'), native);
  });

  test('round trip: a unified request survives forward then reverse', () => {
    const unified: ChatRequest = {
      model: 'cohere/command-r',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] },
      ],
      temperature: 0.1,
      max_tokens: 9,
    };
    assert.deepEqual(fromCohereChatRequest(toCohereRequest(unified, unified.model)), unified);
  });
});

const response = (message: ChatResponse['choices'][0]['message'], finish: string, usage?: Usage): ChatResponse => ({
  id: 'resp-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, message, finish_reason: finish }],
  ...(usage ? { usage } : {}),
});

describe('toCohereChatResponse', () => {
  test('text answer with thinking content and usage in both forms', () => {
    const res = toCohereChatResponse(response({ role: 'assistant', content: 'Hi!', reasoning: 'greet' }, 'stop', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }));
    assert.deepEqual(res, {
      id: 'resp-1',
      finish_reason: 'COMPLETE',
      message: {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'greet' },
          { type: 'text', text: 'Hi!' },
        ],
      },
      usage: { billed_units: { input_tokens: 5, output_tokens: 2 }, tokens: { input_tokens: 5, output_tokens: 2 } },
    });
  });

  test('tool calls carry the reasoning as tool_plan and finish TOOL_CALL even after a plain stop', () => {
    const res = toCohereChatResponse(
      response({ role: 'assistant', content: null, reasoning: 'use f', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop'),
    );
    assert.equal(res.finish_reason, 'TOOL_CALL');
    assert.equal(res.message.tool_plan, 'use f');
    assert.equal(res.message.content, undefined);
    assert.deepEqual(res.message.tool_calls, [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }]);
    assert.equal(toCohereChatResponse(response({ role: 'assistant', content: 'x' }, 'length')).finish_reason, 'MAX_TOKENS');
  });

  test('round trip through fromCohereResponse keeps text, reasoning, tool calls, finish and tokens', () => {
    for (const original of [
      response({ role: 'assistant', content: 'Answer', reasoning: 'because' }, 'stop', { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 }),
      response(
        { role: 'assistant', content: null, reasoning: 'plan', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        'tool_calls',
        { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 },
      ),
      response({ role: 'assistant', content: 'cut' }, 'length', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }),
    ]) {
      const back = fromCohereResponse(toCohereChatResponse(original), { id: 'other', model: original.model, created: original.created });
      assert.deepEqual(back, original);
    }
  });
});

const chunk = (delta: ChatDelta, finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = (usage: Usage): ChatChunk => ({ ...chunk({}), choices: [], usage });

function encode(chunks: ChatChunk[], toolPlan: boolean): CohereStreamEvent[] {
  const enc = createCohereStreamEncoder('msg-1', toolPlan);
  return [...chunks.flatMap((c) => enc.push(c)), ...enc.finish()];
}

/** The events as SSE text, read back by the gateway's own Cohere stream translator. */
function readBack(events: CohereStreamEvent[]): ChatChunk[] {
  const parser = new SseParser();
  const t = createCohereStreamTranslator({ model: 'x', id: 'x', created: 1 });
  return [...parser.push(events.map(encodeCohereEvent).join('')), ...parser.end()].flatMap((e) => t.push(e)).concat(t.finish());
}

function assemble(chunks: ChatChunk[]) {
  let content = '';
  let reasoning = '';
  const calls: Array<{ id?: string; name?: string; args: string }> = [];
  let finish: string | null = null;
  let usage: Usage | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      content += ch.delta.content ?? '';
      reasoning += ch.delta.reasoning ?? '';
      for (const tc of ch.delta.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { args: '' });
        call.id ??= tc.id;
        call.name ??= tc.function.name;
        call.args += tc.function.arguments ?? '';
      }
      finish = ch.finish_reason ?? finish;
    }
  }
  return { content, reasoning, calls, finish, usage };
}

describe('Cohere stream encoder', () => {
  const textChunks = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ reasoning: 'Hmm, ' }),
    chunk({ reasoning: 'ok.' }),
    chunk({ content: 'Hello ' }),
    chunk({ content: 'there.' }),
    chunk({}, 'stop'),
    usageChunk({ prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 }),
  ];
  const toolChunks = [
    chunk({ reasoning: 'I will ' }),
    chunk({ reasoning: 'call a.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
    usageChunk({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }),
  ];

  test('thinking then text content blocks, then message-end with finish and usage', () => {
    const events = encode(textChunks, false);
    assert.deepEqual(
      events.map((e) => e.type),
      ['message-start', 'content-start', 'content-delta', 'content-delta', 'content-end', 'content-start', 'content-delta', 'content-delta', 'content-end', 'message-end'],
    );
    assert.deepEqual(events[1], { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } });
    assert.deepEqual(events[5], { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: '' } } } });
    assert.deepEqual(events.at(-1), {
      type: 'message-end',
      delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 8, output_tokens: 4 }, tokens: { input_tokens: 8, output_tokens: 4 } } },
    });
  });

  test('with tools offered, reasoning is the tool plan, then tool-call-start/delta/end per call', () => {
    const events = encode(toolChunks, true);
    assert.deepEqual(
      events.map((e) => e.type),
      ['message-start', 'tool-plan-delta', 'tool-plan-delta', 'tool-call-start', 'tool-call-delta', 'tool-call-delta', 'tool-call-end', 'tool-call-start', 'tool-call-delta', 'tool-call-end', 'message-end'],
    );
    assert.deepEqual(events[3], {
      type: 'tool-call-start',
      index: 0,
      delta: { message: { tool_calls: { id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } } } },
    });
    assert.equal((events.at(-1) as { delta: { finish_reason: string } }).delta.finish_reason, 'TOOL_CALL');
  });

  test('round trip: the forward translator reads the same answers back', () => {
    const text = assemble(readBack(encode(textChunks, false)));
    assert.equal(text.content, 'Hello there.');
    assert.equal(text.reasoning, 'Hmm, ok.');
    assert.equal(text.finish, 'stop');
    assert.equal(text.usage?.prompt_tokens, 8);
    const tools = assemble(readBack(encode(toolChunks, true)));
    assert.equal(tools.reasoning, 'I will call a.');
    assert.deepEqual(tools.calls, [
      { id: 'call_a', name: 'a', args: '{"x":1}' },
      { id: 'call_b', name: 'b', args: '{}' },
    ]);
    assert.equal(tools.finish, 'tool_calls');
  });

  test('a failure after the 200 ends with message-end ERROR, which the forward translator throws from', () => {
    const enc = createCohereStreamEncoder('msg-1', false);
    const events = [...enc.push(chunk({ content: 'par' })), ...enc.fail(new GatewayError(502, 'upstream broke'))];
    assert.deepEqual(events.slice(-2), [{ type: 'content-end', index: 0 }, { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'upstream broke' } }]);
    assert.deepEqual(enc.finish(), []);
    assert.throws(() => readBack(events), (err: unknown) => err instanceof GatewayError && err.message === 'upstream broke');
  });

  test('SSE framing names the event', () => {
    assert.equal(encodeCohereEvent({ type: 'content-end', index: 2 }), 'event: content-end\ndata: {"type":"content-end","index":2}\n\n');
  });
});

describe('embed', () => {
  test('texts, dimensions and Cohere-only fields; round trip through the forward translator', () => {
    const req = fromCohereEmbedRequest({ model: 'cohere/embed-v4.0', texts: ['a', 'b'], input_type: 'search_query', embedding_types: ['float'], output_dimension: 256, truncate: 'END' });
    assert.deepEqual(req, { model: 'cohere/embed-v4.0', input: ['a', 'b'], dimensions: 256, input_type: 'search_query', truncate: 'END' });
    assert.deepEqual(toCohereEmbedRequest(req, 'embed-v4.0'), {
      model: 'embed-v4.0',
      texts: ['a', 'b'],
      input_type: 'search_query',
      embedding_types: ['float'],
      output_dimension: 256,
      truncate: 'END',
    });
  });

  test('refuses images and quantised types', () => {
    rejects(() => fromCohereEmbedRequest({ model: 'm', images: ['data:image/png;base64,AA=='] }), 'images');
    rejects(() => fromCohereEmbedRequest({ model: 'm', texts: ['a'], embedding_types: ['int8'] }), 'embedding_types');
    rejects(() => fromCohereEmbedRequest({ model: 'm', texts: [] }), 'texts');
  });

  test('response: float vectors in input order (base64 decoded), billed tokens; round trip', () => {
    const b64 = Buffer.alloc(8);
    b64.writeFloatLE(0.5, 0);
    b64.writeFloatLE(-1, 4);
    const native = toCohereEmbedResponse(
      {
        object: 'list',
        model: 'text-embedding-3-small',
        data: [
          { object: 'embedding', index: 1, embedding: b64.toString('base64') },
          { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
        ],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      },
      ['a', 'b'],
      'emb-1',
    );
    assert.deepEqual(native.embeddings.float, [[0.1, 0.2], [0.5, -1]]);
    assert.deepEqual(native.texts, ['a', 'b']);
    const back = fromCohereEmbedResponse(native, 'm');
    assert.deepEqual(back.data.map((d) => d.embedding), [[0.1, 0.2], [0.5, -1]]);
    assert.deepEqual(back.usage, { prompt_tokens: 4, total_tokens: 4 });
  });
});

describe('rerank', () => {
  test('request round trip through the forward translator', () => {
    const req = fromCohereRerankRequest({ model: 'cohere/rerank-v3.5', query: 'q', documents: ['a', { text: 'b' }], top_n: 1, max_tokens_per_doc: 100 });
    assert.deepEqual(req, { model: 'cohere/rerank-v3.5', query: 'q', documents: ['a', 'b'], top_n: 1, max_tokens_per_doc: 100 });
    assert.deepEqual(toCohereRerankRequest(req, 'rerank-v3.5'), { model: 'rerank-v3.5', query: 'q', documents: ['a', 'b'], top_n: 1, max_tokens_per_doc: 100 });
    rejects(() => fromCohereRerankRequest({ model: 'm', query: 'q', documents: [''] }), 'documents[0]');
  });

  test('response: index and score only, best first as given; round trip', () => {
    const unified = { id: 'r1', model: 'rerank-v3.5', results: [{ index: 1, relevance_score: 0.9, document: { text: 'b' } }, { index: 0, relevance_score: 0.1 }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, search_units: 1 } };
    const native = toCohereRerankResponse(unified, 'fresh');
    assert.deepEqual(native, { id: 'r1', results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.1 }], meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } });
    const back = fromCohereRerankResponse(native, { model: 'm', query: 'q', documents: ['a', 'b'] }, 'rerank-v3.5');
    assert.deepEqual(back, { ...unified, results: [{ index: 1, relevance_score: 0.9 }, { index: 0, relevance_score: 0.1 }] });
  });
});

describe('toCohereError', () => {
  test('{id, message} with the status kept; an upstream Cohere id passes on', () => {
    const e = toCohereError(new GatewayError(429, 'slow down', { upstream: true, provider: 'openai' }));
    assert.equal(e.status, 429);
    assert.equal(e.body.message, 'slow down');
    assert.match(e.body.id, /^[0-9a-f-]{36}$/);
    assert.equal(toCohereError(new GatewayError(400, 'bad', { upstream: true, provider: 'cohere', code: 'abc-123' })).body.id, 'abc-123');
  });

  test('round trip: the forward error reader gets the message back', () => {
    const e = toCohereError(new GatewayError(404, 'model not found'));
    const back = fromCohereError(e.status, JSON.stringify(e.body));
    assert.equal(back.message, 'model not found');
    assert.equal(back.type, 'not_found_error');
    assert.equal(back.code, e.body.id);
  });
});
