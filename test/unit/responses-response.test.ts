import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AssistantMessage, ChatResponse, FinishReason, Usage } from '../../proxy/src/unified/chat.ts';
import type { ResponsesRequest } from '../../proxy/src/unified/responses.ts';
import { chatToResponses } from '../../proxy/src/unified/responses-bridge/response.ts';
import { responsesToChat } from '../../proxy/src/unified/responses-bridge/request.ts';

const ids = { responseId: 'resp_01JABCDEF', createdAt: 1_760_000_000 };

function chat(message: AssistantMessage, finish_reason: FinishReason, usage?: Usage): ChatResponse {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_760_000_001,
    model: 'claude-sonnet-4-5-20250929',
    choices: [{ index: 0, message, finish_reason }],
    usage,
  };
}

/** The echo of a request that set nothing beyond model and input. */
const defaults = {
  id: 'resp_01JABCDEF',
  object: 'response',
  created_at: 1_760_000_000,
  background: false,
  error: null,
  instructions: null,
  max_output_tokens: null,
  model: 'claude-sonnet-4-5-20250929',
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: null,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  truncation: 'disabled',
  user: null,
  metadata: {},
};

test('text response maps to a completed message item with usage', () => {
  const res = chat({ role: 'assistant', content: 'Rain on the window.' }, 'stop', {
    prompt_tokens: 25,
    completion_tokens: 7,
    total_tokens: 32,
    prompt_tokens_details: { cached_tokens: 16 },
  });
  assert.deepEqual(chatToResponses(res, { model: 'anthropic/claude-sonnet-4-5', input: 'haiku' }, ids), {
    ...defaults,
    status: 'completed',
    incomplete_details: null,
    output: [
      {
        id: 'msg_01JABCDEF_0',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Rain on the window.', annotations: [] }],
      },
    ],
    usage: {
      input_tokens: 25,
      input_tokens_details: { cached_tokens: 16 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 32,
    },
  });
});

test('tool calls map to function_call items after the text, and request settings are echoed', () => {
  const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }];
  const req: ResponsesRequest = {
    model: 'anthropic/claude-sonnet-4-5',
    input: 'Weather in Paris and Oslo?',
    instructions: 'Be brief.',
    tools,
    tool_choice: 'required',
    parallel_tool_calls: true,
    max_output_tokens: 500,
    temperature: 0.2,
    top_p: 1,
    metadata: { trace: 't1' },
    user: 'u1',
    store: true,
    reasoning: { effort: 'low' },
  };
  const res = chat(
    {
      role: 'assistant',
      content: 'Checking both.',
      tool_calls: [
        { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_02', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      ],
    },
    'tool_calls',
    {
      prompt_tokens: 120,
      completion_tokens: 60,
      total_tokens: 180,
      completion_tokens_details: { reasoning_tokens: 12 },
    },
  );
  assert.deepEqual(chatToResponses(res, req, ids), {
    ...defaults,
    status: 'completed',
    incomplete_details: null,
    instructions: 'Be brief.',
    max_output_tokens: 500,
    temperature: 0.2,
    top_p: 1,
    tools,
    tool_choice: 'required',
    metadata: { trace: 't1' },
    user: 'u1',
    reasoning: { effort: 'low', summary: null },
    output: [
      {
        id: 'msg_01JABCDEF_0',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }],
      },
      {
        id: 'fc_01JABCDEF_1',
        type: 'function_call',
        status: 'completed',
        call_id: 'toolu_01',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      {
        id: 'fc_01JABCDEF_2',
        type: 'function_call',
        status: 'completed',
        call_id: 'toolu_02',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
      },
    ],
    usage: {
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 60,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 180,
    },
  });
});

test('reasoning comes first as a summary; encrypted_content only when included, and it replays', () => {
  const details = [{ type: 'reasoning.text' as const, text: 'User wants a number.', signature: 'EqQBCkYI', index: 0 }];
  const res = chat({ role: 'assistant', content: '42', reasoning: 'User wants a number.', reasoning_details: details }, 'stop');

  const plain = chatToResponses(res, { model: 'm', input: 'answer?' }, ids);
  assert.deepEqual(plain.output, [
    { id: 'rs_01JABCDEF_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'User wants a number.' }] },
    {
      id: 'msg_01JABCDEF_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: '42', annotations: [] }],
    },
  ]);
  assert.equal(plain.usage, null);

  const included = chatToResponses(res, { model: 'm', input: 'answer?', include: ['reasoning.encrypted_content'] }, ids);
  const reasoning = included.output[0];
  assert.equal(reasoning.type, 'reasoning');
  assert.match(reasoning.encrypted_content ?? '', /^skybridge\.reasoning\.v1:/);

  // The client replays the output as input next turn: the signature comes back as reasoning_details.
  const next = responsesToChat({
    model: 'm',
    input: [{ role: 'user', content: 'answer?' }, ...included.output, { role: 'user', content: 'why?' }],
  });
  assert.deepEqual(next.messages, [
    { role: 'user', content: 'answer?' },
    { role: 'assistant', content: '42', reasoning_details: details },
    { role: 'user', content: 'why?' },
  ]);
});

test('finish_reason length makes the response and its last item incomplete', () => {
  const res = chat({ role: 'assistant', content: 'The history of Rome begins' }, 'length', {
    prompt_tokens: 10,
    completion_tokens: 16,
    total_tokens: 26,
  });
  const out = chatToResponses(res, { model: 'm', input: 'history of Rome', max_output_tokens: 16 }, ids);
  assert.equal(out.status, 'incomplete');
  assert.deepEqual(out.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(out.max_output_tokens, 16);
  assert.deepEqual(out.output, [
    {
      id: 'msg_01JABCDEF_0',
      type: 'message',
      status: 'incomplete',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'The history of Rome begins', annotations: [] }],
    },
  ]);
});

test('content_filter is incomplete with reason content_filter; a refusal is a refusal part', () => {
  const res = chat({ role: 'assistant', content: null, refusal: 'I cannot help with that.' }, 'content_filter');
  const out = chatToResponses(res, { model: 'm', input: 'x' }, ids);
  assert.equal(out.status, 'incomplete');
  assert.deepEqual(out.incomplete_details, { reason: 'content_filter' });
  assert.deepEqual(out.output, [
    {
      id: 'msg_01JABCDEF_0',
      type: 'message',
      status: 'incomplete',
      role: 'assistant',
      content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
    },
  ]);
});
