import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAnthropicStreamTranslator } from '../../proxy/src/providers/anthropic/stream.ts';
import type { ChatChunk } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import type { SseEvent, StreamTranslator } from '../../proxy/src/unified/stream.ts';

const CTX = { model: 'fallback-model', id: 'chatcmpl-fallback', created: 1_750_000_000 };

/** Builds an SSE event the way Anthropic frames it: `event:` name plus JSON data with the same type. */
const ev = (data: { type: string } & Record<string, unknown>): SseEvent => ({ event: data.type, data: JSON.stringify(data) });

function run(t: StreamTranslator, events: SseEvent[]): ChatChunk[] {
  return [...events.flatMap((e) => t.push(e)), ...t.finish()];
}

const messageStart = (usage: Record<string, unknown>) =>
  ev({
    type: 'message_start',
    message: {
      id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-sonnet-4-5-20250929',
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });

const base = { id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', object: 'chat.completion.chunk', created: CTX.created, model: 'claude-sonnet-4-5-20250929' };
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });

test('text reply: the documented event sequence', () => {
  const chunks = run(createAnthropicStreamTranslator(CTX), [
    messageStart({ input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 10, cache_creation_input_tokens: 5 }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ev({ type: 'ping' }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '!' } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } }),
    ev({ type: 'message_stop' }),
  ]);
  assert.deepEqual(chunks, [
    delta({ role: 'assistant', content: '' }),
    delta({ content: 'Hello' }),
    delta({ content: '!' }),
    delta({}, 'stop'),
    {
      ...base,
      choices: [],
      usage: { prompt_tokens: 40, completion_tokens: 15, total_tokens: 55, prompt_tokens_details: { cached_tokens: 10 } },
    },
  ]);
});

test('tool_use reply: tool indexes count tool blocks, argument pieces concatenate to the input', () => {
  const t = createAnthropicStreamTranslator(CTX);
  const chunks = run(t, [
    messageStart({ input_tokens: 472, output_tokens: 2 }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Okay, let me check.' } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":' } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ' "San Fra' } }),
    ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ncisco, CA", "unit": "fahrenheit"}' } }),
    ev({ type: 'content_block_stop', index: 1 }),
    ev({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} } }),
    ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"tz":"PST"}' } }),
    ev({ type: 'content_block_stop', index: 2 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } }),
    ev({ type: 'message_stop' }),
  ]);
  assert.deepEqual(chunks.slice(0, 8), [
    delta({ role: 'assistant', content: '' }),
    delta({ content: 'Okay, let me check.' }),
    delta({ tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: ' "San Fra' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'ncisco, CA", "unit": "fahrenheit"}' } }] }),
    delta({ tool_calls: [{ index: 1, id: 'toolu_02', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
    delta({ tool_calls: [{ index: 1, function: { arguments: '{"tz":"PST"}' } }] }),
  ]);
  assert.deepEqual(chunks[8], delta({}, 'tool_calls'));
  assert.deepEqual(chunks[9].usage, { prompt_tokens: 472, completion_tokens: 89, total_tokens: 561, prompt_tokens_details: { cached_tokens: 0 } });
  assert.equal(chunks.length, 10);

  // What a client accumulates per tool index parses back to the tool input.
  const args = new Map<number, string>();
  for (const c of chunks) for (const tc of c.choices[0]?.delta.tool_calls ?? []) args.set(tc.index, (args.get(tc.index) ?? '') + (tc.function.arguments ?? ''));
  assert.deepEqual(JSON.parse(args.get(0) ?? ''), { location: 'San Francisco, CA', unit: 'fahrenheit' });
  assert.deepEqual(JSON.parse(args.get(1) ?? ''), { tz: 'PST' });
});

test('thinking reply: reasoning deltas, signature, then text', () => {
  const chunks = run(createAnthropicStreamTranslator(CTX), [
    messageStart({ input_tokens: 20, output_tokens: 1 }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me solve this step by step:\n\n1. First break down 27 * 453' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '\n2. 453 = 400 + 50 + 3' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' } }),
    ev({ type: 'content_block_stop', index: 1 }),
    ev({ type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } }),
    ev({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: '27 * 453 = 12,231' } }),
    ev({ type: 'content_block_stop', index: 2 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 400 } }),
    ev({ type: 'message_stop' }),
  ]);
  assert.deepEqual(chunks, [
    delta({ role: 'assistant', content: '' }),
    delta({
      reasoning: 'Let me solve this step by step:\n\n1. First break down 27 * 453',
      reasoning_details: [{ type: 'reasoning.text', text: 'Let me solve this step by step:\n\n1. First break down 27 * 453', index: 0 }],
    }),
    delta({
      reasoning: '\n2. 453 = 400 + 50 + 3',
      reasoning_details: [{ type: 'reasoning.text', text: '\n2. 453 = 400 + 50 + 3', index: 0 }],
    }),
    delta({ reasoning_details: [{ type: 'reasoning.text', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds', index: 0 }] }),
    delta({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix', index: 1 }] }),
    delta({ content: '27 * 453 = 12,231' }),
    delta({}, 'length'),
    { ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 400, total_tokens: 420, prompt_tokens_details: { cached_tokens: 0 } } },
  ]);
});

test('message_delta input and cache counts supersede message_start', () => {
  const chunks = run(createAnthropicStreamTranslator(CTX), [
    messageStart({ input_tokens: 0, output_tokens: 1 }),
    ev({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 100, cache_read_input_tokens: 50, cache_creation_input_tokens: null, output_tokens: 7 },
    }),
    ev({ type: 'message_stop' }),
  ]);
  assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 150, completion_tokens: 7, total_tokens: 157, prompt_tokens_details: { cached_tokens: 50 } });
});

test('finish() emits the pending usage only when message_stop never came', () => {
  const cut = createAnthropicStreamTranslator(CTX);
  cut.push(messageStart({ input_tokens: 12, output_tokens: 1 }));
  cut.push(ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  cut.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial' } }));
  assert.deepEqual(cut.finish(), [
    { ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13, prompt_tokens_details: { cached_tokens: 0 } } },
  ]);
  assert.deepEqual(cut.finish(), []);

  const whole = createAnthropicStreamTranslator(CTX);
  whole.push(messageStart({ input_tokens: 12, output_tokens: 1 }));
  assert.equal(whole.push(ev({ type: 'message_stop' })).length, 1);
  assert.deepEqual(whole.finish(), []);

  assert.deepEqual(createAnthropicStreamTranslator(CTX).finish(), []);
});

test('error events throw an upstream GatewayError with the status for their type', () => {
  const t = createAnthropicStreamTranslator(CTX);
  t.push(messageStart({ input_tokens: 1, output_tokens: 1 }));
  assert.throws(
    () => t.push(ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })),
    (e: unknown) => {
      assert.ok(e instanceof GatewayError);
      assert.equal(e.status, 529);
      assert.equal(e.message, 'Overloaded');
      assert.equal(e.type, 'overloaded_error');
      assert.equal(e.provider, 'anthropic');
      assert.equal(e.upstream, true);
      return true;
    },
  );
  assert.throws(
    () => createAnthropicStreamTranslator(CTX).push(ev({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } })),
    (e: unknown) => e instanceof GatewayError && e.status === 500 && e.message === 'Internal server error',
  );
  assert.throws(
    () => createAnthropicStreamTranslator(CTX).push({ event: 'message_start', data: '{not json' }),
    (e: unknown) => e instanceof GatewayError && e.status === 502 && e.upstream,
  );
});

test('ping, unknown events and empty data produce nothing; ids fall back to the context', () => {
  const t = createAnthropicStreamTranslator(CTX);
  assert.deepEqual(t.push(ev({ type: 'ping' })), []);
  assert.deepEqual(t.push(ev({ type: 'some_future_event' })), []);
  assert.deepEqual(t.push({ data: '' }), []);
  // A text delta before message_start still forms a valid chunk from the context.
  assert.deepEqual(t.push(ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } })), [
    { id: CTX.id, object: 'chat.completion.chunk', created: CTX.created, model: CTX.model, choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] },
  ]);
});
