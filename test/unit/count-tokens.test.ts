// The pure translators behind token counting: chat → Responses input (OpenAI's count endpoint),
// chat → Anthropic count_tokens and Gemini countTokens bodies, and each provider's answer read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import { chatToResponsesInput } from '../../proxy/src/unified/responses-bridge/from-chat.ts';
import { responsesToChat } from '../../proxy/src/unified/responses-bridge/request.ts';
import { normalizeCountTokensBody, toInputTokensBody } from '../../proxy/src/unified/count-tokens.ts';
import { fromAnthropicCountTokens, toAnthropicCountTokensRequest } from '../../proxy/src/providers/anthropic/count-tokens.ts';
import { fromGeminiCountTokens, toGeminiCountTokensRequest } from '../../proxy/src/providers/gemini/count-tokens.ts';
import { fromOpenAICountTokens } from '../../proxy/src/providers/openai/count-tokens.ts';
import type { ResponsesRequest } from '../../proxy/src/unified/responses.ts';

const chat: ChatRequest = {
  model: 'm',
  max_tokens: 50,
  temperature: 0.2,
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
  ],
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
  tool_choice: { type: 'function', function: { name: 'get_weather' } },
};

test('a chat request becomes Responses input items, tools and tool_choice; generation settings stay behind', () => {
  const out = chatToResponsesInput(chat);
  assert.deepEqual(out, {
    input: [
      { type: 'message', role: 'system', content: 'Be brief.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'auto' }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Lima"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }],
    tool_choice: { type: 'function', name: 'get_weather' },
  });
});

test('chat → Responses input → chat keeps the conversation', () => {
  const back = responsesToChat({ model: 'm', ...chatToResponsesInput(chat) } as ResponsesRequest);
  assert.deepEqual(back.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'auto' } }] },
    { role: 'assistant', content: null, tool_calls: chat.messages[2].tool_calls },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
  ]);
});

test('Anthropic count_tokens gets only the fields it takes', () => {
  const up = toAnthropicCountTokensRequest(chat, 'claude-x');
  assert.equal(up.path, '/messages/count_tokens');
  assert.deepEqual(Object.keys(up.body as object).sort(), ['messages', 'model', 'system', 'tool_choice', 'tools']);
  assert.deepEqual(fromAnthropicCountTokens({ input_tokens: 12 }), { input_tokens: 12 });
  assert.throws(() => fromAnthropicCountTokens({}), /not a number/);
});

test('Gemini countTokens wraps the whole request with its model name', () => {
  const up = toGeminiCountTokensRequest(chat, 'gemini-2.5-flash');
  assert.equal(up.path, '/models/gemini-2.5-flash:countTokens');
  const inner = (up.body as { generateContentRequest: Record<string, unknown> }).generateContentRequest;
  assert.equal(inner.model, 'models/gemini-2.5-flash');
  assert.ok(inner.systemInstruction && inner.tools && inner.contents);
  assert.deepEqual(fromGeminiCountTokens({ totalTokens: 9, cachedContentTokenCount: 4 }), { input_tokens: 9, cached_tokens: 4 });
  // proto3 JSON leaves a zero out.
  assert.deepEqual(fromGeminiCountTokens({}), { input_tokens: 0 });
});

test("OpenAI's answer, and the request it is sent", () => {
  assert.deepEqual(fromOpenAICountTokens({ object: 'response.input_tokens', input_tokens: 11 }), { input_tokens: 11 });
  const req = { model: 'openai/gpt-4o', input: 'hi', max_output_tokens: 5, fallbacks: ['x/y'], tools: [] } as unknown as ResponsesRequest;
  assert.deepEqual(toInputTokensBody(req, 'gpt-4o'), { model: 'gpt-4o', input: 'hi', tools: [] });
});

test("the reference gateway's `messages` stands for `input`; neither is a 400", () => {
  assert.deepEqual(normalizeCountTokensBody({ model: 'm', messages: [{ role: 'user', content: 'x' }] }), { model: 'm', input: [{ role: 'user', content: 'x' }] });
  assert.throws(() => normalizeCountTokensBody({ model: 'm' }), /input is required/);
});
