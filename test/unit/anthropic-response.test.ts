import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromAnthropicResponse, toFinishReason } from '../../proxy/src/providers/anthropic/response.ts';
import type { AnthropicMessage } from '../../proxy/src/providers/anthropic/types.ts';

const CREATED = 1_750_000_000;

test('text reply with cache usage', () => {
  // Shape as in Anthropic's Messages API reference.
  const msg: AnthropicMessage = {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [
      { type: 'text', text: 'Hi! My name is Claude.' },
      { type: 'text', text: ' How can I help?' },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 2095, output_tokens: 503, cache_creation_input_tokens: 100, cache_read_input_tokens: 1800 },
  };
  assert.deepEqual(fromAnthropicResponse(msg, CREATED), {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    object: 'chat.completion',
    created: CREATED,
    model: 'claude-sonnet-4-5-20250929',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi! My name is Claude. How can I help?' }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 3995,
      completion_tokens: 503,
      total_tokens: 4498,
      prompt_tokens_details: { cached_tokens: 1800 },
    },
  });
});

test('tool_use reply: content stays text, tool_calls carry stringified input', () => {
  const msg: AnthropicMessage = {
    id: 'msg_01Aq9w938a90dw8q',
    type: 'message',
    role: 'assistant',
    model: 'claude-opus-4-1',
    content: [
      { type: 'text', text: "I'll check the weather." },
      { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA', unit: 'celsius' } },
      { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 472, output_tokens: 91, cache_creation_input_tokens: null, cache_read_input_tokens: null },
  };
  const res = fromAnthropicResponse(msg, CREATED);
  assert.deepEqual(res.choices[0], {
    index: 0,
    message: {
      role: 'assistant',
      content: "I'll check the weather.",
      tool_calls: [
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
        },
        { id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    },
    finish_reason: 'tool_calls',
  });
  assert.deepEqual(res.usage, { prompt_tokens: 472, completion_tokens: 91, total_tokens: 563, prompt_tokens_details: { cached_tokens: 0 } });
});

test('tool-only reply has null content', () => {
  const res = fromAnthropicResponse(
    {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: [1, 2] } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    CREATED,
  );
  assert.equal(res.choices[0].message.content, null);
  assert.equal(res.choices[0].message.tool_calls?.[0].function.arguments, '{"a":[1,2]}');
});

test('thinking and redacted_thinking -> reasoning + reasoning_details; server-tool blocks are skipped', () => {
  const msg: AnthropicMessage = {
    id: 'msg_think',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'Let me analyze this step by step...', signature: 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
      { type: 'thinking', thinking: ' Then conclude.', signature: 'sig2' },
      { type: 'server_tool_use' },
      { type: 'text', text: 'Based on my analysis...' },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 50, output_tokens: 300 },
  };
  const { message } = fromAnthropicResponse(msg, CREATED).choices[0];
  assert.deepEqual(message, {
    role: 'assistant',
    content: 'Based on my analysis...',
    reasoning: 'Let me analyze this step by step... Then conclude.',
    reasoning_details: [
      { type: 'reasoning.text', text: 'Let me analyze this step by step...', signature: 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve', index: 0 },
      { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP', index: 1 },
      { type: 'reasoning.text', text: ' Then conclude.', signature: 'sig2', index: 2 },
    ],
  });
});

test('stop reasons map to OpenAI finish reasons', () => {
  assert.equal(toFinishReason('end_turn'), 'stop');
  assert.equal(toFinishReason('stop_sequence'), 'stop');
  assert.equal(toFinishReason('pause_turn'), 'stop');
  assert.equal(toFinishReason('max_tokens'), 'length');
  assert.equal(toFinishReason('model_context_window_exceeded'), 'length');
  assert.equal(toFinishReason('tool_use'), 'tool_calls');
  assert.equal(toFinishReason('refusal'), 'content_filter');
  assert.equal(toFinishReason(null), null);
  assert.equal(toFinishReason('something_new'), 'stop');
});
