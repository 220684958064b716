import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropicStreamEncoder, encodeAnthropicEvent } from '../../proxy/src/providers/anthropic/native/stream.ts';
import { createAnthropicStreamTranslator } from '../../proxy/src/providers/anthropic/stream.ts';
import type { AnthropicStreamEvent } from '../../proxy/src/providers/anthropic/types.ts';
import type { ChatChunk, ChatDelta, Usage } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { SseParser } from '../../proxy/src/upstream/sse.ts';

const MODEL = 'openai/gpt-4.1';
const MSG_ID = 'msg_gw_01';
const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6';

const chunk = (delta: ChatDelta, finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_750_000_000,
  model: 'gpt-4.1-2025-04-14',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = (usage: Usage): ChatChunk => ({ ...chunk({}), choices: [], usage });

function encode(chunks: ChatChunk[]): AnthropicStreamEvent[] {
  const enc = createAnthropicStreamEncoder(MODEL, MSG_ID);
  return [...chunks.flatMap((c) => enc.push(c)), ...enc.finish()];
}

/** Compact event outline: `type[index]:kind`. */
function outline(events: AnthropicStreamEvent[]): string[] {
  return events.map((e) => {
    switch (e.type) {
      case 'content_block_start':
        return `start[${e.index}]:${e.content_block.type}`;
      case 'content_block_delta':
        return `delta[${e.index}]:${e.delta.type}`;
      case 'content_block_stop':
        return `stop[${e.index}]`;
      case 'message_delta':
        return `message_delta:${e.delta.stop_reason}`;
      default:
        return e.type;
    }
  });
}

const sse = (events: AnthropicStreamEvent[]) => events.map(encodeAnthropicEvent).join('');

/** The events' SSE text read back by the gateway's own Anthropic stream translator. */
function readBack(events: AnthropicStreamEvent[]): ChatChunk[] {
  const parser = new SseParser();
  const t = createAnthropicStreamTranslator({ model: 'x', id: 'x', created: 1 });
  return [...parser.push(sse(events)), ...parser.end()].flatMap((e) => t.push(e)).concat(t.finish());
}

/** What a client would assemble from unified chunks. */
function assemble(chunks: ChatChunk[]) {
  let content = '';
  let reasoning = '';
  const signatures: string[] = [];
  const calls: Array<{ id?: string; name?: string; args: string }> = [];
  let finish: string | null = null;
  let usage: Usage | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      content += ch.delta.content ?? '';
      reasoning += ch.delta.reasoning ?? '';
      for (const d of ch.delta.reasoning_details ?? []) if (d.signature) signatures.push(d.signature);
      for (const tc of ch.delta.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { args: '' });
        call.id ??= tc.id;
        call.name ??= tc.function.name;
        call.args += tc.function.arguments ?? '';
      }
      finish = ch.finish_reason ?? finish;
    }
  }
  return { content, reasoning, signatures, calls, finish, usage };
}

const USAGE: Usage = { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 10 } };

const TEXT_STREAM = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ', world' }),
  chunk({}, 'stop'),
  usageChunk(USAGE),
];

test('text stream: the exact native event sequence', () => {
  assert.deepEqual(encode(TEXT_STREAM), [
    {
      type: 'message_start',
      message: {
        id: MSG_ID,
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ', world' } },
    { type: 'content_block_stop', index: 0 },
    // Usage arrived after the finish chunk and is still reported.
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 12, input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
    },
    { type: 'message_stop' },
  ]);
});

const TOOL_STREAM = [
  chunk({ role: 'assistant', content: null }),
  chunk({ content: 'Checking.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk({ prompt_tokens: 80, completion_tokens: 25, total_tokens: 105 }),
];

test('tool-call stream: text block, then one tool_use block per call with input_json_delta pieces', () => {
  const events = encode(TOOL_STREAM);
  assert.deepEqual(outline(events), [
    'message_start',
    'start[0]:text',
    'delta[0]:text_delta',
    'stop[0]',
    'start[1]:tool_use',
    'delta[1]:input_json_delta',
    'delta[1]:input_json_delta',
    'stop[1]',
    'start[2]:tool_use',
    'delta[2]:input_json_delta',
    'stop[2]',
    'message_delta:tool_use',
    'message_stop',
  ]);
  assert.deepEqual(events[4], {
    type: 'content_block_start',
    index: 1,
    content_block: { type: 'tool_use', id: 'call_A', name: 'get_weather', input: {} },
  });
  assert.deepEqual(events[6], { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ' "Paris"}' } });
});

/** Chunks shaped the way the gateway's Anthropic and OpenAI-compatible translators emit reasoning. */
const THINKING_STREAM = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ reasoning: 'Let me ', reasoning_details: [{ type: 'reasoning.text', text: 'Let me ', index: 0 }] }),
  chunk({ reasoning: 'think.', reasoning_details: [{ type: 'reasoning.text', text: 'think.', index: 0 }] }),
  chunk({ reasoning_details: [{ type: 'reasoning.text', signature: SIG, index: 0 }] }),
  chunk({ reasoning_details: [{ type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix', index: 1 }] }),
  chunk({ content: 'The answer is 4.' }),
  chunk({}, 'stop'),
  usageChunk({ prompt_tokens: 15, completion_tokens: 60, total_tokens: 75 }),
];

test('thinking stream: thinking_delta and signature_delta, a whole redacted block, then text', () => {
  const events = encode(THINKING_STREAM);
  assert.deepEqual(outline(events), [
    'message_start',
    'start[0]:thinking',
    'delta[0]:thinking_delta',
    'delta[0]:thinking_delta',
    'delta[0]:signature_delta',
    'stop[0]',
    'start[1]:redacted_thinking',
    'stop[1]',
    'start[2]:text',
    'delta[2]:text_delta',
    'stop[2]',
    'message_delta:end_turn',
    'message_stop',
  ]);
  assert.deepEqual(events.slice(1, 5), [
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    // The text travels in both `reasoning` and reasoning_details; it is sent once.
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIG } },
  ]);
  assert.deepEqual(events[6], { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' } });
});

test('reasoning-only providers: plain `reasoning` text opens an unsigned thinking block', () => {
  const events = encode([chunk({ reasoning: 'Hmm' }), chunk({ reasoning: '...' }), chunk({ content: 'Yes' }), chunk({}, 'stop')]);
  assert.deepEqual(outline(events), [
    'message_start',
    'start[0]:thinking',
    'delta[0]:thinking_delta',
    'delta[0]:thinking_delta',
    'stop[0]',
    'start[1]:text',
    'delta[1]:text_delta',
    'stop[1]',
    'message_delta:end_turn',
    'message_stop',
  ]);
  // Without a usage chunk the counts are zero, never missing.
  const end = events.at(-2);
  assert.ok(end?.type === 'message_delta');
  assert.deepEqual(end.usage, { output_tokens: 0 });
});

test('the encoded SSE reads back through the forward translator to the same content', () => {
  for (const [name, chunks] of Object.entries({ text: TEXT_STREAM, tool: TOOL_STREAM, thinking: THINKING_STREAM })) {
    const before = assemble(chunks);
    const after = assemble(readBack(encode(chunks)));
    assert.equal(after.content, before.content, name);
    assert.equal(after.reasoning, before.reasoning, name);
    assert.deepEqual(after.signatures, before.signatures, name);
    assert.deepEqual(after.calls, before.calls, name);
    assert.equal(after.finish, before.finish, name);
    const counts = (u: Usage | undefined) => [u?.prompt_tokens, u?.completion_tokens, u?.prompt_tokens_details?.cached_tokens ?? 0];
    assert.deepEqual(counts(after.usage), counts(before.usage), name);
  }
});

test('Anthropic -> unified -> Anthropic reproduces the upstream event sequence', () => {
  const upstream: AnthropicStreamEvent[] = [
    {
      type: 'message_start',
      message: {
        id: MSG_ID,
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Weather needs a tool.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIG } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking.' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
    { type: 'content_block_stop', index: 2 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 40, input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
    { type: 'message_stop' },
  ];
  const chunks = readBack(upstream);
  assert.deepEqual(encode(chunks), upstream);
});

test('fail(): an Anthropic error event; nothing follows', () => {
  const enc = createAnthropicStreamEncoder(MODEL, MSG_ID);
  enc.push(chunk({ content: 'partial' }));
  const events = enc.fail(new GatewayError(529, 'Overloaded', { provider: 'anthropic', upstream: true }));
  assert.deepEqual(events, [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
  assert.equal(encodeAnthropicEvent(events[0]), 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
  assert.deepEqual(enc.push(chunk({ content: 'more' })), []);
  assert.deepEqual(enc.finish(), []);
});

test('an empty stream is still a complete message', () => {
  assert.deepEqual(outline(encode([])), ['message_start', 'message_delta:end_turn', 'message_stop']);
});

// ---- the official SDK as the client --------------------------------------------------------

const sdkStream = (body: string) =>
  new Anthropic({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test/anthropic',
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  }).messages.stream({ model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] });

test('@anthropic-ai/sdk assembles the final message from the encoded stream', async () => {
  const tool = await sdkStream(sse(encode(TOOL_STREAM))).finalMessage();
  assert.equal(tool.id, MSG_ID);
  assert.equal(tool.model, MODEL);
  assert.equal(tool.stop_reason, 'tool_use');
  assert.deepEqual(tool.content, [
    { type: 'text', text: 'Checking.' },
    { type: 'tool_use', id: 'call_A', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_B', name: 'get_time', input: { tz: 'CET' } },
  ]);
  assert.equal(tool.usage.input_tokens, 80);
  assert.equal(tool.usage.output_tokens, 25);

  const thinking = await sdkStream(sse(encode(THINKING_STREAM))).finalMessage();
  assert.deepEqual(thinking.content, [
    { type: 'thinking', thinking: 'Let me think.', signature: SIG },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
    { type: 'text', text: 'The answer is 4.' },
  ]);

  const text = await sdkStream(sse(encode(TEXT_STREAM))).finalMessage();
  assert.deepEqual(text.content, [{ type: 'text', text: 'Hello, world' }]);
  assert.equal(text.usage.cache_read_input_tokens, 10);
});

test('@anthropic-ai/sdk raises the error event', async () => {
  const enc = createAnthropicStreamEncoder(MODEL, MSG_ID);
  const events = [...enc.push(chunk({ content: 'par' })), ...enc.fail(new GatewayError(429, 'rate limited upstream'))];
  await assert.rejects(sdkStream(sse(events)).finalMessage(), (e: unknown) => {
    assert.ok(e instanceof Anthropic.APIError);
    assert.match(e.message, /rate limited upstream/);
    return true;
  });
});
