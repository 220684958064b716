import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageCreateParams } from '@anthropic-ai/sdk/resources/messages';
import { fromAnthropicRequest, type AnthropicNativeRequest } from '../../proxy/src/providers/anthropic/native/request.ts';
import { toAnthropicRequest } from '../../proxy/src/providers/anthropic/request.ts';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6';

/** What @anthropic-ai/sdk sends; the SDK's own param type proves the fixture is valid. */
const native = (r: MessageCreateParams) => r as unknown as AnthropicNativeRequest;

function assertInvalid(fn: () => unknown, param: string) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.param, param);
    return true;
  });
}

test('a full agent turn: system, images, thinking, tool_use / tool_result history, tools', () => {
  const req = native({
    model: 'openai/gpt-5',
    max_tokens: 8192,
    system: [
      { type: 'text', text: 'You are a weather assistant.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer in Celsius.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/sky.jpg' } },
          { type: 'text', text: 'What is the weather where these were taken?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should check both cities.', signature: SIG },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
          { type: 'text', text: 'Let me look that up.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Oslo', unit: 'c' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here you go.' },
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18°C, sunny' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01B',
            content: [
              { type: 'text', text: '4°C' },
              { type: 'text', text: ', snow' },
            ],
            is_error: false,
          },
        ],
      },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
      },
    ],
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    thinking: { type: 'enabled', budget_tokens: 2048 },
    stop_sequences: ['###'],
    metadata: { user_id: 'user-42' },
    stream: true,
  });
  // Older clients still send sampling knobs newer SDK types dropped; top_k has no unified equivalent.
  Object.assign(req, { top_k: 40 });
  const expected: ChatRequest = {
    model: 'openai/gpt-5',
    messages: [
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are a weather assistant.' },
          { type: 'text', text: 'Answer in Celsius.' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/sky.jpg' } },
          { type: 'text', text: 'What is the weather where these were taken?' },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me look that up.',
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' } },
        ],
        reasoning: 'I should check both cities.',
        reasoning_details: [
          { type: 'reasoning.text', text: 'I should check both cities.', signature: SIG },
          { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
        ],
      },
      // Tool results come first, then what else the user said.
      { role: 'tool', tool_call_id: 'toolu_01A', content: '18°C, sunny' },
      { role: 'tool', tool_call_id: 'toolu_01B', content: '4°C, snow' },
      { role: 'user', content: [{ type: 'text', text: 'Here you go.' }] },
    ],
    max_tokens: 8192,
    stop: ['###'],
    user: 'user-42',
    reasoning: { max_tokens: 2048 },
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
        },
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    stream: true,
    stream_options: { include_usage: true },
  };
  assert.deepEqual(fromAnthropicRequest(req), expected);
});

test('round trip: toAnthropicRequest(fromAnthropicRequest(x)) === x', () => {
  const x = native({
    model: 'claude-sonnet-4-5',
    max_tokens: 16000,
    system: [{ type: 'text', text: 'Be precise.' }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQSkZJRg==' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the sizes first.', signature: SIG },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
          { type: 'text', text: 'Measuring.' },
          { type: 'tool_use', id: 'toolu_1', name: 'measure', input: { which: ['a', 'b'], precise: true } },
          { type: 'tool_use', id: 'toolu_2', name: 'noop', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"a":3,"b":4}' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [
              { type: 'text', text: 'screenshot:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            ],
          },
          { type: 'text', text: 'And now?' },
        ],
      },
    ],
    tools: [
      { name: 'measure', description: 'Measure things', input_schema: { type: 'object', properties: { which: { type: 'array' } } } },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'tool', name: 'measure', disable_parallel_tool_use: true },
    thinking: { type: 'enabled', budget_tokens: 4096 },
    stop_sequences: ['END'],
    metadata: { user_id: 'u-1' },
    stream: true,
  });
  assert.deepEqual(toAnthropicRequest(fromAnthropicRequest(x), 'claude-sonnet-4-5'), x);

  // Without thinking, sampling parameters survive too (typed loosely: the current SDK no longer
  // declares them, older clients still send them).
  const y: AnthropicNativeRequest = {
    model: 'claude-haiku-4-5',
    max_tokens: 512,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    temperature: 0.3,
    top_p: 0.9,
    tools: [{ name: 't', input_schema: { type: 'object', properties: {} } }],
    tool_choice: { type: 'any' },
  };
  assert.deepEqual(toAnthropicRequest(fromAnthropicRequest(y), 'claude-haiku-4-5'), y);
});

test('string system and string content stay strings; model and fallbacks pass through', () => {
  const out = fromAnthropicRequest({
    model: 'gemini/gemini-2.5-flash',
    max_tokens: 100,
    system: 'You are terse.',
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Bye' },
    ],
    fallbacks: ['openai/gpt-4.1-mini', 'anthropic/claude-haiku-4-5'],
  });
  assert.deepEqual(out, {
    model: 'gemini/gemini-2.5-flash',
    fallbacks: ['openai/gpt-4.1-mini', 'anthropic/claude-haiku-4-5'],
    max_tokens: 100,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'Bye' },
    ],
  });
});

test('tool_choice variants', () => {
  const base = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
  assert.equal(fromAnthropicRequest({ ...base, tool_choice: { type: 'auto' } }).tool_choice, 'auto');
  assert.equal(fromAnthropicRequest({ ...base, tool_choice: { type: 'any' } }).tool_choice, 'required');
  assert.equal(fromAnthropicRequest({ ...base, tool_choice: { type: 'none' } }).tool_choice, 'none');
  const named = fromAnthropicRequest({ ...base, tool_choice: { type: 'tool', name: 'f' } });
  assert.deepEqual(named.tool_choice, { type: 'function', function: { name: 'f' } });
  assert.equal(named.parallel_tool_calls, undefined);
  assert.equal(fromAnthropicRequest({ ...base, tool_choice: { type: 'any', disable_parallel_tool_use: true } }).parallel_tool_calls, false);
});

test('thinking: enabled budget, adaptive with output_config.effort, disabled', () => {
  const base = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
  assert.deepEqual(fromAnthropicRequest({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning, { max_tokens: 1024 });
  assert.deepEqual(fromAnthropicRequest({ ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }).reasoning, { effort: 'xhigh' });
  assert.deepEqual(fromAnthropicRequest({ ...base, thinking: { type: 'adaptive' } }).reasoning, { effort: 'medium' });
  assert.equal(fromAnthropicRequest({ ...base, thinking: { type: 'disabled' } }).reasoning, undefined);
  assert.deepEqual(fromAnthropicRequest({ ...base, output_config: { effort: 'low' } }).reasoning, { effort: 'low' });
});

test('output_config.format (structured output) becomes a json_schema response_format', () => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
  const out = fromAnthropicRequest({
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'x' }],
    output_config: { format: { type: 'json_schema', schema } },
  });
  assert.deepEqual(out.response_format, { type: 'json_schema', json_schema: { name: 'output', schema } });
});

test('documents: base64 PDF -> file part (title as filename), plain text -> text part', () => {
  const out = fromAnthropicRequest(
    native({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
          ],
        },
      ],
    }),
  );
  assert.deepEqual(out.messages[0].content, [
    { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' } },
    { type: 'text', text: 'plain notes' },
  ]);
});

test('unsupported blocks, tools and shapes are refused with the offending param', () => {
  const base = { model: 'm', max_tokens: 10 };
  const msgs = (content: unknown): AnthropicNativeRequest =>
    ({ ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content }] }) as AnthropicNativeRequest;

  // A tool_result in an assistant turn, server-tool blocks, unknown kinds.
  assertInvalid(() => fromAnthropicRequest(msgs([{ type: 'tool_result', tool_use_id: 'x', content: 'y' }])), 'messages[1].content[0].type');
  assertInvalid(
    () => fromAnthropicRequest(msgs([{ type: 'text', text: 'a' }, { type: 'server_tool_use', id: 's', name: 'web_search', input: {} }])),
    'messages[1].content[1].type',
  );
  assertInvalid(() => fromAnthropicRequest(msgs([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }])), 'messages[1].content[0].type');
  assertInvalid(
    () => fromAnthropicRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 't', signature: 's' }] }] }),
    'messages[0].content[0].type',
  );
  assertInvalid(
    () => fromAnthropicRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }),
    'messages[0].content[0].type',
  );
  assertInvalid(
    () => fromAnthropicRequest(native({ ...base, messages: [{ role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }] })),
    'messages[0].content[0].type',
  );
  // Files API references have no unified equivalent.
  assertInvalid(
    () => fromAnthropicRequest(native({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] })),
    'messages[0].content[0].source.type',
  );
  // Inside a tool_result.
  assertInvalid(
    () =>
      fromAnthropicRequest(
        native({
          ...base,
          messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] }] }],
        }),
      ),
    'messages[0].content[0].content[0].type',
  );
  // Anthropic server tools only work on Anthropic's own servers.
  assertInvalid(
    () => fromAnthropicRequest(native({ ...base, messages: [{ role: 'user', content: 'q' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })),
    'tools[0].type',
  );
  assertInvalid(() => fromAnthropicRequest({ ...base, messages: [] }), 'messages');
  assertInvalid(() => fromAnthropicRequest({ ...base, messages: [{ role: 'system', content: 'x' }] } as unknown as AnthropicNativeRequest), 'messages[0].role');
  assertInvalid(() => fromAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'x' }], fallbacks: [''] }), 'fallbacks');
});

test('an assistant turn with only tool_use has null content', () => {
  const out = fromAnthropicRequest({
    model: 'm',
    max_tokens: 10,
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'w', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9' }] },
    ],
  });
  assert.deepEqual(out.messages.slice(1), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'w', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_9', content: '' },
  ]);
});
