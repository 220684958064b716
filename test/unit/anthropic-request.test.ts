import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toAnthropicRequest } from '../../proxy/src/providers/anthropic/request.ts';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const req = (r: Omit<ChatRequest, 'model'>): ChatRequest => ({ model: 'anthropic/claude-sonnet-4-5', ...r });

function assertInvalid(fn: () => unknown, param: string) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof GatewayError);
    assert.equal(e.status, 400);
    assert.equal(e.param, param);
    assert.equal(e.upstream, false);
    return true;
  });
}

test('minimal request: bare model, default max_tokens, user text as a block', () => {
  const out = toAnthropicRequest(req({ messages: [{ role: 'user', content: 'Hello, Claude' }] }), 'claude-sonnet-4-5');
  assert.deepEqual(out, {
    model: 'claude-sonnet-4-5',
    max_tokens: 4096,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello, Claude' }] }],
  });
});

test('system and developer messages become top-level system text blocks', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
      ],
    }),
    'claude-haiku-4-5',
  );
  assert.deepEqual(out.system, [
    { type: 'text', text: 'You are terse.' },
    { type: 'text', text: 'Answer in French.' },
  ]);
  assert.deepEqual(out.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
});

test('sampling fields, stop sequences, user, stream', () => {
  const out = toAnthropicRequest(
    req({
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 100,
      max_completion_tokens: 200,
      stop: ['\n\nHuman:', 'END'],
      user: 'user-42',
      stream: true,
      seed: 7,
      presence_penalty: 0.5,
    }),
    'm',
  );
  assert.equal(out.max_tokens, 200);
  assert.equal(out.temperature, 0.3);
  assert.equal(out.top_p, 0.9);
  assert.deepEqual(out.stop_sequences, ['\n\nHuman:', 'END']);
  assert.deepEqual(out.metadata, { user_id: 'user-42' });
  assert.equal(out.stream, true);
  assert.equal('seed' in out, false);
  assert.equal('presence_penalty' in out, false);
});

test('a single stop string becomes a one-element list; temperature above 1 is clamped', () => {
  const out = toAnthropicRequest(req({ messages: [{ role: 'user', content: 'Hi' }], stop: 'STOP', temperature: 1.7, max_tokens: 64 }), 'm');
  assert.deepEqual(out.stop_sequences, ['STOP']);
  assert.equal(out.temperature, 1);
  assert.equal(out.max_tokens, 64);
});

test('tool round trip: assistant tool_calls -> tool_use, consecutive tool messages -> one user turn of tool_result', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"location":"London","unit":"celsius"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01A', content: '15 degrees' },
        { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '11 degrees' }] },
        { role: 'user', content: 'Thanks, which is warmer?' },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and London?' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { location: 'London', unit: 'celsius' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01A', content: '15 degrees' },
        { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: '11 degrees' }] },
        { type: 'text', text: 'Thanks, which is warmer?' },
      ],
    },
  ]);
});

test('assistant with only tool_calls and null content; empty arguments mean {}', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'What time is it?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'now', input: {} }] });
  assert.deepEqual(out.messages[2], { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '12:00' }] });
});

test('unparseable or non-object tool arguments are rejected with the exact param', () => {
  const messages = (args: string): ChatRequest['messages'] => [
    { role: 'user', content: 'x' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'b', type: 'function', function: { name: 'f', arguments: args } },
      ],
    },
  ];
  assertInvalid(() => toAnthropicRequest(req({ messages: messages('{"location": "Par') }), 'm'), 'messages[1].tool_calls[1].function.arguments');
  assertInvalid(() => toAnthropicRequest(req({ messages: messages('[1,2]') }), 'm'), 'messages[1].tool_calls[1].function.arguments');
});

test('images: data URL -> base64 source with its media type; https URL -> url source', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://upload.wikimedia.org/cat.jpg', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQ' } },
          ],
        },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages[0].content, [
    { type: 'text', text: 'Compare these' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'image', source: { type: 'url', url: 'https://upload.wikimedia.org/cat.jpg' } },
    { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
  ]);
});

test('bad image URLs and audio parts are rejected with the part param', () => {
  assertInvalid(
    () =>
      toAnthropicRequest(
        req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }),
        'm',
      ),
    'messages[0].content[0].image_url.url',
  );
  assertInvalid(
    () =>
      toAnthropicRequest(
        req({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }),
        'm',
      ),
    'messages[0].content[1].image_url.url',
  );
  assertInvalid(
    () =>
      toAnthropicRequest(
        req({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }] }] }),
        'm',
      ),
    'messages[0].content[0]',
  );
});

test('PDF file parts become document blocks', () => {
  const out = toAnthropicRequest(
    req({ messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }] }),
    'm',
  );
  assert.deepEqual(out.messages[0].content, [
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
  ]);
});

test('consecutive same-role messages are merged; empty messages are dropped', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: [{ type: 'text', text: 'two' }] },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'three' },
        { role: 'assistant', content: 'four' },
        { role: 'assistant', content: 'five' },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
        { type: 'text', text: 'three' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'four' }, { type: 'text', text: 'five' }] },
  ]);
});

test('tools: schema passes through, missing parameters default to an empty object schema', () => {
  const schema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };
  const out = toAnthropicRequest(
    req({
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Get the weather', parameters: schema } },
        { type: 'function', function: { name: 'now' } },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.tools, [
    { name: 'get_weather', description: 'Get the weather', input_schema: schema },
    { name: 'now', input_schema: { type: 'object', properties: {} } },
  ]);
  assert.equal(out.tool_choice, undefined);
});

test('tool_choice variants and parallel_tool_calls: false', () => {
  const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
  const choice = (r: Partial<ChatRequest>) =>
    toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], tools, ...r }), 'm').tool_choice;
  assert.deepEqual(choice({ tool_choice: 'auto' }), { type: 'auto' });
  assert.deepEqual(choice({ tool_choice: 'required' }), { type: 'any' });
  assert.deepEqual(choice({ tool_choice: 'none' }), { type: 'none' });
  assert.deepEqual(choice({ tool_choice: { type: 'function', function: { name: 'f' } } }), { type: 'tool', name: 'f' });
  assert.deepEqual(choice({ tool_choice: 'required', parallel_tool_calls: false }), { type: 'any', disable_parallel_tool_use: true });
  assert.deepEqual(choice({ parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
  assert.deepEqual(choice({ tool_choice: 'none', parallel_tool_calls: false }), { type: 'none' });
  assert.equal(choice({ parallel_tool_calls: true }), undefined);
  // Without tools, tool_choice is not sent (Anthropic rejects it).
  const noTools = toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], tool_choice: 'required' }), 'm');
  assert.equal(noTools.tool_choice, undefined);
});

test('thinking: reasoning.max_tokens is the budget; temperature and top_p are dropped', () => {
  const out = toAnthropicRequest(
    req({ messages: [{ role: 'user', content: 'x' }], reasoning: { max_tokens: 10000 }, temperature: 0.5, top_p: 0.9, max_tokens: 16000 }),
    'm',
  );
  assert.deepEqual(out.thinking, { type: 'enabled', budget_tokens: 10000 });
  assert.equal(out.max_tokens, 16000);
  assert.equal(out.temperature, undefined);
  assert.equal(out.top_p, undefined);
});

test('thinking: effort maps to a budget and the default max_tokens grows past it', () => {
  const think = (r: Partial<ChatRequest>) => {
    const out = toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], ...r }), 'm');
    return { thinking: out.thinking, max_tokens: out.max_tokens };
  };
  assert.deepEqual(think({ reasoning_effort: 'low' }), { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 5120 });
  assert.deepEqual(think({ reasoning: { effort: 'medium' } }), { thinking: { type: 'enabled', budget_tokens: 4096 }, max_tokens: 8192 });
  assert.deepEqual(think({ reasoning_effort: 'high' }), { thinking: { type: 'enabled', budget_tokens: 16384 }, max_tokens: 20480 });
  assert.deepEqual(think({ reasoning_effort: 'minimal' }), { thinking: undefined, max_tokens: 4096 });
  assert.deepEqual(think({ reasoning: { effort: 'none' } }), { thinking: undefined, max_tokens: 4096 });
  assert.deepEqual(think({ reasoning: { max_tokens: 0 } }), { thinking: undefined, max_tokens: 4096 });
  // Below Anthropic's minimum the budget is raised to 1024.
  assert.deepEqual(think({ reasoning: { max_tokens: 200 } }), { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 5120 });
  // An effort budget is clamped under an explicit max_tokens.
  assert.deepEqual(think({ reasoning_effort: 'high', max_tokens: 8000 }), { thinking: { type: 'enabled', budget_tokens: 7999 }, max_tokens: 8000 });
});

test('thinking budgets that cannot fit under max_tokens are rejected', () => {
  assertInvalid(
    () => toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], reasoning: { max_tokens: 8000 }, max_tokens: 8000 }), 'm'),
    'reasoning.max_tokens',
  );
  assertInvalid(
    () => toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'low', max_completion_tokens: 1000 }), 'm'),
    'max_completion_tokens',
  );
});

test('assistant reasoning_details replay as thinking / redacted_thinking blocks before the text', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'What is 27 * 453?' },
        {
          role: 'assistant',
          content: '27 * 453 = 12231',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Let me compute 27 * 453.', signature: 'EqQBCgIYAhIM1gbcDa9G', index: 0 },
            { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix', index: 1 },
            { type: 'reasoning.text', text: 'unsigned thoughts are dropped', index: 2 },
          ],
        },
        { role: 'user', content: 'And times 2?' },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages[1], {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Let me compute 27 * 453.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: '27 * 453 = 12231' },
    ],
  });
});

test('streamed reasoning_details fragments sharing an index fold into one thinking block', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          reasoning_details: [
            { type: 'reasoning.text', text: 'First ', index: 0 },
            { type: 'reasoning.text', text: 'thought.', index: 0 },
            { type: 'reasoning.text', signature: 'sig-0', index: 0 },
          ],
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages[1].content, [
    { type: 'thinking', thinking: 'First thought.', signature: 'sig-0' },
    { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
  ]);
});

test('a signature-only detail takes its text from message.reasoning', () => {
  const out = toAnthropicRequest(
    req({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a', reasoning: 'Full thought.', reasoning_details: [{ type: 'reasoning.text', signature: 'sig', index: 0 }] },
      ],
    }),
    'm',
  );
  assert.deepEqual(out.messages[1].content, [
    { type: 'thinking', thinking: 'Full thought.', signature: 'sig' },
    { type: 'text', text: 'a' },
  ]);
});

test('n > 1, tool messages without tool_call_id, and system-only conversations are rejected', () => {
  assertInvalid(() => toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], n: 2 }), 'm'), 'n');
  assert.doesNotThrow(() => toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }], n: 1 }), 'm'));
  assertInvalid(
    () => toAnthropicRequest(req({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', content: 'r' }] }), 'm'),
    'messages[1].tool_call_id',
  );
  assertInvalid(() => toAnthropicRequest(req({ messages: [{ role: 'system', content: 'only system' }] }), 'm'), 'messages');
});
