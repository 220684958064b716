import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { toAnthropicError } from '../../proxy/src/providers/anthropic/native/error.ts';
import { fromAnthropicRequest } from '../../proxy/src/providers/anthropic/native/request.ts';
import { STOP_REASONS, toAnthropicMessage } from '../../proxy/src/providers/anthropic/native/response.ts';
import { fromAnthropicResponse, toFinishReason } from '../../proxy/src/providers/anthropic/response.ts';
import type { ChatResponse } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6';

const chat = (message: ChatResponse['choices'][number]['message'], finish: string | null, usage?: ChatResponse['usage']): ChatResponse => ({
  id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
  object: 'chat.completion',
  created: 1_741_569_952,
  model: 'gpt-4.1-2025-04-14',
  choices: [{ index: 0, message, finish_reason: finish }],
  ...(usage && { usage }),
});

test('a reasoning + text + tool-call answer becomes a native Message', () => {
  const res = chat(
    {
      role: 'assistant',
      content: 'Let me check the weather.',
      reasoning: 'The user wants Paris weather.',
      reasoning_details: [
        { type: 'reasoning.text', text: 'The user wants Paris weather.', signature: SIG, index: 0 },
        { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix', index: 1 },
      ],
      tool_calls: [
        { id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } },
        { id: 'call_def', type: 'function', function: { name: 'get_time', arguments: '' } },
      ],
    },
    'tool_calls',
    { prompt_tokens: 120, completion_tokens: 45, total_tokens: 165, prompt_tokens_details: { cached_tokens: 100 } },
  );
  assert.deepEqual(toAnthropicMessage(res, 'openai/gpt-4.1'), {
    id: 'msg_B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    type: 'message',
    role: 'assistant',
    model: 'openai/gpt-4.1',
    content: [
      { type: 'thinking', thinking: 'The user wants Paris weather.', signature: SIG },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'Let me check the weather.' },
      { type: 'tool_use', id: 'call_abc', name: 'get_weather', input: { city: 'Paris', unit: 'c' } },
      { type: 'tool_use', id: 'call_def', name: 'get_time', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 45, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
  });
});

test('round trip: fromAnthropicResponse(toAnthropicMessage(r)) keeps content, reasoning, tool calls, usage', () => {
  const r = chat(
    {
      role: 'assistant',
      content: 'Checking both.',
      reasoning: 'Two cities.',
      reasoning_details: [
        { type: 'reasoning.text', text: 'Two cities.', signature: SIG, index: 0 },
        { type: 'reasoning.encrypted', data: 'EmwK', index: 1 },
      ],
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo","days":[1,2]}' } },
      ],
    },
    'tool_calls',
    { prompt_tokens: 300, completion_tokens: 80, total_tokens: 380, prompt_tokens_details: { cached_tokens: 256 } },
  );
  const back = fromAnthropicResponse(toAnthropicMessage(r, 'claude-sonnet-4-5'), r.created);
  assert.deepEqual(back.choices, r.choices);
  assert.deepEqual(back.usage, r.usage);

  for (const finish of ['stop', 'length', 'content_filter']) {
    const plain = chat({ role: 'assistant', content: 'ok' }, finish, { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 });
    const again = fromAnthropicResponse(toAnthropicMessage(plain, 'm'), plain.created);
    assert.deepEqual(again.choices, plain.choices, finish);
    assert.equal(again.usage?.prompt_tokens, 5);
  }
});

test('every stop reason maps back to the finish reason it came from', () => {
  for (const [finish, stop] of Object.entries(STOP_REASONS)) {
    assert.equal(toFinishReason(stop), finish === 'function_call' ? 'tool_calls' : finish, finish);
  }
});

test('stop_reason: tool calls imply tool_use; null and unknown finish reasons end the turn', () => {
  const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
  assert.equal(toAnthropicMessage(chat({ role: 'assistant', content: null, tool_calls: [call] }, 'stop'), 'm').stop_reason, 'tool_use');
  assert.equal(toAnthropicMessage(chat({ role: 'assistant', content: null, tool_calls: [call] }, 'length'), 'm').stop_reason, 'max_tokens');
  assert.equal(toAnthropicMessage(chat({ role: 'assistant', content: 'x' }, null), 'm').stop_reason, 'end_turn');
  assert.equal(toAnthropicMessage(chat({ role: 'assistant', content: 'x' }, 'eos'), 'm').stop_reason, 'end_turn');
});

test('reasoning without details (OpenAI-compatible providers) becomes an unsigned thinking block; no usage -> zeros', () => {
  const msg = toAnthropicMessage(chat({ role: 'assistant', content: '42', reasoning: 'Think.' }, 'stop'), 'deepseek/deepseek-reasoner');
  assert.deepEqual(msg.content, [
    { type: 'thinking', thinking: 'Think.', signature: '' },
    { type: 'text', text: '42' },
  ]);
  assert.deepEqual(msg.usage, { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  // An id that already is a message id is kept.
  assert.equal(toAnthropicMessage({ ...chat({ role: 'assistant', content: 'x' }, 'stop'), id: 'msg_01X' }, 'm').id, 'msg_01X');
});

test("Gemini's id-bound thought signatures survive a client replay through redacted_thinking", () => {
  const details = [
    { type: 'reasoning.text' as const, text: 'Plan: call lookup.', signature: 'gem-sig-1' },
    { type: 'reasoning.encrypted' as const, id: 'call_lookup_0', data: 'gem-sig-2' },
  ];
  const msg = toAnthropicMessage(
    chat(
      {
        role: 'assistant',
        content: null,
        reasoning: 'Plan: call lookup.',
        reasoning_details: details,
        tool_calls: [{ id: 'call_lookup_0', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
      },
      'tool_calls',
    ),
    'gemini/gemini-3-pro',
  );
  assert.deepEqual(msg.content[0], { type: 'thinking', thinking: 'Plan: call lookup.', signature: 'gem-sig-1' });
  assert.equal(msg.content[1].type, 'redacted_thinking');
  // The client sends the turn back as history; the gateway gets the details it produced.
  const replay = fromAnthropicRequest({
    model: 'gemini/gemini-3-pro',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'find x' },
      { role: 'assistant', content: msg.content as never },
    ],
  });
  assert.deepEqual(replay.messages[1].reasoning_details, details);
  assert.deepEqual(replay.messages[1].tool_calls, [{ id: 'call_lookup_0', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }]);
});

test('toAnthropicError: status kept, Anthropic error type by status', () => {
  const cases: Array<[number, string]> = [
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [422, 'invalid_request_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'api_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ];
  for (const [status, type] of cases) {
    const err = new GatewayError(status, `failed with ${status}`, { type: 'server_error', provider: 'openai', upstream: true });
    assert.deepEqual(toAnthropicError(err), { status, body: { type: 'error', error: { type, message: `failed with ${status}` } } }, String(status));
  }
  const unsupported = new GatewayError(400, "operation 'x' is not supported", { type: 'unsupported_operation' });
  assert.equal(toAnthropicError(unsupported).body.error.type, 'invalid_request_error');
});

/** An SDK client whose requests all get `respond`'s answer. */
const sdkClient = (respond: () => Response) =>
  new Anthropic({ apiKey: 'sk-test', baseURL: 'http://gateway.test/anthropic', maxRetries: 0, fetch: async () => respond() });

test('the official SDK reads the message and the errors', async () => {
  const res = chat(
    {
      role: 'assistant',
      content: 'Hi!',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    },
    'tool_calls',
    { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  );
  const body = toAnthropicMessage(res, 'openai/gpt-4.1');
  const client = sdkClient(() => Response.json(body));
  const got = await client.messages.create({ model: 'openai/gpt-4.1', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  assert.deepEqual(got.content, [
    { type: 'text', text: 'Hi!' },
    { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
  ]);
  assert.equal(got.stop_reason, 'tool_use');
  assert.equal(got.usage.input_tokens, 10);

  const { status, body: errBody } = toAnthropicError(new GatewayError(429, 'slow down', { provider: 'openai', upstream: true }));
  const failing = sdkClient(() => Response.json(errBody, { status }));
  await assert.rejects(
    failing.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    (e: unknown) => {
      assert.ok(e instanceof Anthropic.RateLimitError);
      assert.deepEqual(e.error, errBody);
      return true;
    },
  );
});
