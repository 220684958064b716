import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { ResponsesRequestSchema, type ResponsesRequest } from '../../proxy/src/unified/responses.ts';
import { responsesToChat } from '../../proxy/src/unified/responses-bridge/request.ts';
import { encodeReasoningDetails } from '../../proxy/src/unified/responses-bridge/reasoning-codec.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

function rejects(req: ResponsesRequest, param: string, message: RegExp) {
  assert.throws(
    () => responsesToChat(req),
    (err: unknown) => {
      assert.ok(err instanceof GatewayError);
      assert.equal(err.status, 400);
      assert.equal(err.type, 'invalid_request_error');
      assert.equal(err.param, param);
      assert.match(err.message, message);
      return true;
    },
  );
}

test('string input becomes one user message', () => {
  assert.deepEqual(responsesToChat({ model: 'anthropic/claude-sonnet-4-5', input: 'Write a haiku about rain.' }), {
    model: 'anthropic/claude-sonnet-4-5',
    messages: [{ role: 'user', content: 'Write a haiku about rain.' }],
  });
});

test('items with instructions, images, tool history and options map to a chat request', () => {
  const signed = [{ type: 'reasoning.text' as const, text: 'Need weather for both.', signature: 'sig-1', index: 0 }];
  const req: ResponsesRequest = {
    model: 'anthropic/claude-sonnet-4-5',
    fallbacks: ['gemini/gemini-2.5-pro'],
    instructions: 'You are a concise travel assistant.',
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What city is this, and what is the weather in it and in Oslo?' },
          { type: 'input_image', image_url: 'https://example.com/paris.jpg', detail: 'high' },
          { type: 'input_image', file_id: 'file-abc123', detail: 'auto' },
        ],
      },
      {
        type: 'message',
        id: 'msg_prev_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'That is Paris.', annotations: [] }],
      },
      { type: 'reasoning', id: 'rs_prev_0', summary: [{ type: 'summary_text', text: 'Need weather for both.' }], encrypted_content: encodeReasoningDetails(signed) },
      { type: 'function_call', id: 'fc_1', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_paris', output: '{"temp_c":18}' },
      { type: 'function_call_output', call_id: 'call_oslo', output: [{ type: 'input_text', text: '{"temp_c":7}' }] },
      { role: 'developer', content: 'Answer in one sentence.' },
    ],
    tools: [weatherTool],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    max_output_tokens: 1024,
    temperature: 0.3,
    top_p: 0.9,
    reasoning: { effort: 'medium', summary: 'auto' },
    text: {
      format: {
        type: 'json_schema',
        name: 'answer',
        schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        strict: true,
      },
    },
    stream: true,
    store: false,
    metadata: { session: 's-1' },
    user: 'user-42',
  };

  assert.deepEqual(responsesToChat(req), {
    model: 'anthropic/claude-sonnet-4-5',
    fallbacks: ['gemini/gemini-2.5-pro'],
    messages: [
      { role: 'system', content: 'You are a concise travel assistant.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What city is this, and what is the weather in it and in Oslo?' },
          { type: 'image_url', image_url: { url: 'https://example.com/paris.jpg', detail: 'high' } },
          { type: 'file', file: { file_id: 'file-abc123' } },
        ],
      },
      {
        role: 'assistant',
        content: 'That is Paris.',
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
        reasoning_details: signed,
      },
      { role: 'tool', tool_call_id: 'call_paris', content: '{"temp_c":18}' },
      { role: 'tool', tool_call_id: 'call_oslo', content: [{ type: 'text', text: '{"temp_c":7}' }] },
      { role: 'developer', content: 'Answer in one sentence.' },
    ],
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.3,
    top_p: 0.9,
    max_completion_tokens: 1024,
    user: 'user-42',
    parallel_tool_calls: true,
    reasoning_effort: 'medium',
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: weatherTool.parameters,
          strict: true,
        },
      },
    ],
    tool_choice: 'auto',
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'answer',
        schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        strict: true,
      },
    },
  });
});

test('function calls without preceding text form an assistant message with null content', () => {
  const chat = responsesToChat({
    model: 'gemini/gemini-2.5-flash',
    input: [
      { role: 'user', content: 'Weather in Rome?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ],
  });
  assert.deepEqual(chat.messages, [
    { role: 'user', content: 'Weather in Rome?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
  ]);
});

test('reasoning items without our encrypted_content are skipped', () => {
  const chat = responsesToChat({
    model: 'anthropic/claude-sonnet-4-5',
    input: [
      { role: 'user', content: 'Hi' },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'greeting' }], encrypted_content: 'gAAAAABopenai-blob' },
      { role: 'assistant', content: 'Hello!' },
      { type: 'reasoning', id: 'rs_2', summary: [] },
      { role: 'user', content: 'Bye' },
    ],
  });
  assert.deepEqual(chat.messages, [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: 'Bye' },
  ]);
});

test('json_object format and non-stream requests', () => {
  const chat = responsesToChat({ model: 'm', input: 'json please', text: { format: { type: 'json_object' } }, stream: false });
  assert.deepEqual(chat, { model: 'm', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } });
  const plain = responsesToChat({ model: 'm', input: 'x', text: { format: { type: 'text' } }, max_output_tokens: null, temperature: null });
  assert.deepEqual(plain, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
});

test('tool_choice forms', () => {
  const base = { model: 'm', input: 'x', tools: [weatherTool, { ...weatherTool, name: 'get_time' }] };
  assert.deepEqual(responsesToChat({ ...base, tool_choice: { type: 'function', name: 'get_time' } }).tool_choice, {
    type: 'function',
    function: { name: 'get_time' },
  });
  assert.equal(responsesToChat({ ...base, tool_choice: 'required' }).tool_choice, 'required');
  const allowed = responsesToChat({
    ...base,
    tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_time' }] },
  });
  assert.equal(allowed.tool_choice, 'required');
  assert.deepEqual(allowed.tools?.map((t) => t.function.name), ['get_time']);
  rejects({ ...base, tool_choice: { type: 'web_search_preview' } }, 'tool_choice.type', /web_search_preview/);
});

test('hosted tools are refused, naming the tool', () => {
  rejects(
    { model: 'm', input: 'news?', tools: [weatherTool, { type: 'web_search' }] },
    'tools[1].type',
    /tool type 'web_search' is not supported/,
  );
});

test('stateful and unresolvable inputs are refused with their param', () => {
  rejects({ model: 'm', input: 'x', previous_response_id: 'resp_123' }, 'previous_response_id', /previous_response_id/);
  rejects({ model: 'm', input: 'x', background: true }, 'background', /background/);
  rejects({ model: 'm', input: 'x', conversation: 'conv_1' }, 'conversation', /conversation/);
  rejects(
    { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] },
    'input[0].content[0]',
    /image_url or file_id/,
  );
  rejects(
    { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }] },
    'input[0].content[0].file_url',
    /file_url/,
  );
  rejects(
    { model: 'm', input: [{ role: 'user', content: 'x' }, { type: 'reasoning', summary: [], encrypted_content: 'skybridge.reasoning.v1:!!!' }] },
    'input[1].encrypted_content',
    /corrupted/,
  );
  rejects({ model: 'm', input: [{ type: 'reasoning', summary: [] }] }, 'input', /at least one message/);
});

test('the schema accepts SDK-shaped requests and rejects items needing server state', () => {
  const validate = new Ajv({ strict: false }).compile(ResponsesRequestSchema);
  assert.equal(
    validate({
      model: 'm',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'ok' },
      ],
      tools: [weatherTool, { type: 'web_search' }],
      tool_choice: { type: 'function', name: 'get_weather' },
      reasoning: { effort: 'high', summary: 'detailed' },
      include: ['reasoning.encrypted_content'],
      instructions: null,
      truncation: 'auto',
    }),
    true,
  );
  assert.equal(validate({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }), false);
  assert.equal(validate({ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }), false);
  assert.equal(validate({ model: 'm', input: [] }), false);
  assert.equal(validate({ model: 'm' }), false);
});
