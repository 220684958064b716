import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { AssistantMessage, ChatChunk, ChatDelta, ChatResponse, FinishReason, Usage } from '../../proxy/src/unified/chat.ts';
import type { ResponsesRequest, ResponsesStreamEvent } from '../../proxy/src/unified/responses.ts';
import { chatToResponses } from '../../proxy/src/unified/responses-bridge/response.ts';
import {
  createResponsesStreamEncoder,
  encodeResponsesEvent,
  mergeReasoningDetails,
} from '../../proxy/src/unified/responses-bridge/stream.ts';

const ids = { responseId: 'resp_stream01', createdAt: 1_760_000_000 };
const MODEL = 'claude-sonnet-4-5-20250929';

function chunk(delta: ChatDelta, finish_reason: FinishReason | null = null): ChatChunk {
  return { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta, finish_reason }] };
}
function usageChunk(usage: Usage): ChatChunk {
  return { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [], usage };
}
function asChat(message: AssistantMessage, finish_reason: FinishReason, usage?: Usage): ChatResponse {
  return { id: 'chatcmpl-9', object: 'chat.completion', created: 1, model: MODEL, choices: [{ index: 0, message, finish_reason }], usage };
}
function run(req: ResponsesRequest, chunks: ChatChunk[]): ResponsesStreamEvent[] {
  const enc = createResponsesStreamEncoder(req, ids);
  return [...chunks.flatMap((c) => enc.push(c)), ...enc.finish()];
}
function assertSequenced(events: ResponsesStreamEvent[]) {
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
  );
}
/** The event interface(s) whose `type` admits T (several types share one interface). */
type EventOf<T extends ResponsesStreamEvent['type']> = ResponsesStreamEvent extends infer E
  ? E extends { type: infer U }
    ? T extends U
      ? E
      : never
    : never
  : never;
function pick<T extends ResponsesStreamEvent['type']>(events: ResponsesStreamEvent[], type: T): EventOf<T>[] {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

const usage: Usage = { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39, prompt_tokens_details: { cached_tokens: 0 } };

test('text stream: exact event sequence, deltas add up, completed equals chatToResponses', () => {
  const req: ResponsesRequest = { model: 'anthropic/claude-sonnet-4-5', input: 'Say hello', stream: true, temperature: 0.5 };
  const events = run(req, [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Hello' }),
    chunk({ content: ', wor' }),
    chunk({ content: 'ld!' }),
    chunk({}, 'stop'),
    usageChunk(usage),
  ]);

  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assertSequenced(events);

  const [created] = pick(events, 'response.created');
  assert.equal(created.response.status, 'in_progress');
  assert.deepEqual(created.response.output, []);
  assert.equal(created.response.usage, null);
  assert.equal(created.response.temperature, 0.5);

  const [added] = pick(events, 'response.output_item.added');
  assert.deepEqual(added.item, { id: 'msg_stream01_0', type: 'message', status: 'in_progress', role: 'assistant', content: [] });
  assert.deepEqual(pick(events, 'response.content_part.added')[0].part, { type: 'output_text', text: '', annotations: [] });

  const deltas = pick(events, 'response.output_text.delta');
  assert.deepEqual(deltas.map((d) => [d.item_id, d.output_index, d.content_index]), [
    ['msg_stream01_0', 0, 0],
    ['msg_stream01_0', 0, 0],
    ['msg_stream01_0', 0, 0],
  ]);
  const [done] = pick(events, 'response.output_text.done');
  assert.equal(deltas.map((d) => d.delta).join(''), done.text);
  assert.equal(done.text, 'Hello, world!');

  const [completed] = pick(events, 'response.completed');
  assert.deepEqual(completed.response, chatToResponses(asChat({ role: 'assistant', content: 'Hello, world!' }, 'stop', usage), req, ids));
  assert.deepEqual(pick(events, 'response.output_item.done')[0].item, completed.response.output[0]);
});

test('tool-call stream: items close in order and arguments accumulate', () => {
  const req: ResponsesRequest = {
    model: 'openai-compatible/qwen',
    input: 'Weather in Paris and Oslo?',
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
  };
  const events = run(req, [
    chunk({ role: 'assistant', content: null }),
    chunk({ content: 'Checking.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }),
    chunk({}, 'tool_calls'),
    usageChunk(usage),
  ]);

  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assertSequenced(events);

  assert.deepEqual(pick(events, 'response.output_item.added')[1].item, {
    id: 'fc_stream01_1',
    type: 'function_call',
    status: 'in_progress',
    call_id: 'call_A',
    name: 'get_weather',
    arguments: '',
  });
  assert.deepEqual(
    pick(events, 'response.function_call_arguments.done').map((e) => [e.item_id, e.output_index, e.arguments]),
    [
      ['fc_stream01_1', 1, '{"city":"Paris"}'],
      ['fc_stream01_2', 2, '{"city":"Oslo"}'],
    ],
  );

  const expected = chatToResponses(
    asChat(
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      'tool_calls',
      usage,
    ),
    req,
    ids,
  );
  assert.deepEqual(pick(events, 'response.completed')[0].response, expected);
});

test('reasoning stream: summary events, signature carried when included', () => {
  const req: ResponsesRequest = { model: 'm', input: 'Think, then answer', include: ['reasoning.encrypted_content'] };
  const events = run(req, [
    chunk({ role: 'assistant' }),
    chunk({ reasoning: 'The user ', reasoning_details: [{ type: 'reasoning.text', text: 'The user ', index: 0 }] }),
    chunk({ reasoning: 'wants 42.', reasoning_details: [{ type: 'reasoning.text', text: 'wants 42.', index: 0 }] }),
    chunk({ reasoning_details: [{ type: 'reasoning.text', signature: 'EqQBCkYI', index: 0 }] }),
    chunk({ content: '42' }, 'stop'),
  ]);
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assertSequenced(events);
  assert.deepEqual(pick(events, 'response.reasoning_summary_text.done')[0], {
    type: 'response.reasoning_summary_text.done',
    item_id: 'rs_stream01_0',
    output_index: 0,
    summary_index: 0,
    text: 'The user wants 42.',
    sequence_number: 6,
  });
  const details = [{ type: 'reasoning.text' as const, text: 'The user wants 42.', signature: 'EqQBCkYI', index: 0 }];
  const expected = chatToResponses(
    asChat({ role: 'assistant', content: '42', reasoning: 'The user wants 42.', reasoning_details: details }, 'stop'),
    req,
    ids,
  );
  assert.deepEqual(pick(events, 'response.completed')[0].response, expected);
  assert.ok(expected.output[0].type === 'reasoning' && expected.output[0].encrypted_content);
});

test('finish_reason length ends with response.incomplete', () => {
  const req: ResponsesRequest = { model: 'm', input: 'long story', max_output_tokens: 16 };
  const events = run(req, [chunk({ content: 'Once upon a time' }), chunk({}, 'length')]);
  const last = events.at(-1);
  assert.equal(last?.type, 'response.incomplete');
  assert.ok(last?.type === 'response.incomplete');
  assert.equal(last.response.status, 'incomplete');
  assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
  const [message] = pick(events, 'response.output_item.done');
  assert.ok(message.item.type === 'message');
  assert.equal(message.item.status, 'incomplete');
  assert.deepEqual(last.response, chatToResponses(asChat({ role: 'assistant', content: 'Once upon a time' }, 'length'), req, ids));
});

test('fail() emits error then response.failed, and the encoder is closed afterwards', () => {
  const enc = createResponsesStreamEncoder({ model: 'm', input: 'x' }, ids);
  const first = enc.push(chunk({ content: 'Partial' }));
  const failed = enc.fail({ message: 'upstream connection reset', code: 'server_error' });
  const events = [...first, ...failed];
  assert.deepEqual(failed.map((e) => e.type), ['error', 'response.failed']);
  assertSequenced(events);
  assert.deepEqual(failed[0], {
    type: 'error',
    code: 'server_error',
    message: 'upstream connection reset',
    param: null,
    sequence_number: 5,
  });
  assert.ok(failed[1].type === 'response.failed');
  assert.equal(failed[1].response.status, 'failed');
  assert.deepEqual(failed[1].response.error, { code: 'server_error', message: 'upstream connection reset' });
  assert.deepEqual(failed[1].response.output, [
    {
      id: 'msg_stream01_0',
      type: 'message',
      status: 'incomplete',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Partial', annotations: [] }],
    },
  ]);
  assert.deepEqual(enc.push(chunk({ content: 'late' })), []);
  assert.deepEqual(enc.finish(), []);
});

test('an empty stream still opens and completes the response', () => {
  const events = run({ model: 'fallback-model', input: 'x' }, []);
  assert.deepEqual(events.map((e) => e.type), ['response.created', 'response.in_progress', 'response.completed']);
  const last = events[2];
  assert.ok(last.type === 'response.completed');
  assert.deepEqual(last.response.output, []);
  assert.equal(last.response.model, 'fallback-model');
});

test('encodeResponsesEvent frames SSE as OpenAI does', () => {
  const ev: ResponsesStreamEvent = {
    type: 'response.output_text.delta',
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    delta: 'Hi',
    logprobs: [],
    sequence_number: 4,
  };
  assert.equal(
    encodeResponsesEvent(ev),
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"sequence_number":4}\n\n',
  );
});

test('mergeReasoningDetails grows pieces by index', () => {
  assert.deepEqual(
    mergeReasoningDetails(
      [{ type: 'reasoning.text', text: 'a', index: 0 }],
      [
        { type: 'reasoning.text', text: 'b', index: 0 },
        { type: 'reasoning.text', signature: 's', index: 0 },
        { type: 'reasoning.encrypted', data: 'xyz' },
      ],
    ),
    [
      { type: 'reasoning.text', text: 'ab', signature: 's', index: 0 },
      { type: 'reasoning.encrypted', data: 'xyz' },
    ],
  );
});

test('the official SDK parses the SSE output into the same response', async () => {
  const req: ResponsesRequest = { model: 'm', input: 'Weather?', stream: true, include: ['reasoning.encrypted_content'] };
  const events = run(req, [
    chunk({ role: 'assistant', reasoning: 'Need a tool.' }),
    chunk({ content: 'Let me check.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ':"Rome"}' } }] }, 'tool_calls'),
    usageChunk(usage),
  ]);
  const body = events.map(encodeResponsesEvent).join('');
  const client = new OpenAI({
    apiKey: 'unused',
    baseURL: 'http://gateway.invalid/v1',
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  });
  const stream = client.responses.stream({ model: 'm', input: 'Weather?' });
  const seen: string[] = [];
  stream.on('event', (e) => seen.push(e.type));
  const final = await stream.finalResponse();

  assert.deepEqual(seen, events.map((e) => e.type));
  const ours = events.at(-1);
  assert.ok(ours?.type === 'response.completed');
  assert.equal(final.id, 'resp_stream01');
  assert.equal(final.status, 'completed');
  assert.equal(final.output_text, 'Let me check.');
  assert.deepEqual(final.usage, ours.response.usage);
  assert.deepEqual(
    final.output.map((item) => (item.type === 'function_call' ? [item.type, item.call_id, item.name, item.arguments] : [item.type, item.id])),
    [
      ['reasoning', 'rs_stream01_0'],
      ['message', 'msg_stream01_1'],
      ['function_call', 'call_1', 'get_weather', '{"city":"Rome"}'],
    ],
  );
});
