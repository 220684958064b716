// Bedrock Converse translators: unified request -> Converse body, Converse answer / errors -> unified.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { toBedrockRequest } from '../../proxy/src/providers/bedrock/request.ts';
import { fromBedrockResponse } from '../../proxy/src/providers/bedrock/response.ts';
import { fromBedrockError, statusForBedrockErrorType } from '../../proxy/src/providers/bedrock/error.ts';
import { bedrockAdapter } from '../../proxy/src/providers/bedrock/adapter.ts';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const req = (r: Omit<ChatRequest, 'model'>): ChatRequest => ({ model: 'm', ...r });

describe('unified -> bedrock request', () => {
  test('system, inference config, image, tools and tool choice', () => {
    const out = toBedrockRequest(req({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }] },
      ],
      max_completion_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      stop: 'END',
      tools: [{ type: 'function', function: { name: 'look', description: 'Look', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'look' } },
    }));
    assert.deepEqual(out, {
      messages: [{ role: 'user', content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: PIXEL } } }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 50, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'look', description: 'Look', inputSchema: { json: { type: 'object', properties: {} } } } }],
        toolChoice: { tool: { name: 'look' } },
      },
    });
  });

  test('assistant tool calls and tool results (merged into one user turn)', () => {
    const out = toBedrockRequest(req({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [
          { id: 't1', type: 'function', function: { name: 'w', arguments: '{"query":"Paris"}' } },
          { id: 't2', type: 'function', function: { name: 'w', arguments: '' } },
        ] },
        { role: 'tool', tool_call_id: 't1', content: 'sunny' },
        { role: 'tool', tool_call_id: 't2', content: 'rainy' },
      ],
      tools: [{ type: 'function', function: { name: 'w' } }],
      tool_choice: 'required',
    }));
    assert.deepEqual(out.messages, [
      { role: 'user', content: [{ text: 'Weather?' }] },
      { role: 'assistant', content: [
        { toolUse: { toolUseId: 't1', name: 'w', input: { query: 'Paris' } } },
        { toolUse: { toolUseId: 't2', name: 'w', input: {} } },
      ] },
      { role: 'user', content: [
        { toolResult: { toolUseId: 't1', content: [{ text: 'sunny' }], status: 'success' } },
        { toolResult: { toolUseId: 't2', content: [{ text: 'rainy' }], status: 'success' } },
      ] },
    ]);
    assert.deepEqual(out.toolConfig?.toolChoice, { any: {} });
    assert.deepEqual(out.toolConfig?.tools[0].toolSpec.inputSchema, { json: { type: 'object', properties: {} } });
  });

  test('tool_choice none drops the tools; n > 1, audio and image URLs are rejected', () => {
    const none = toBedrockRequest(req({ messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'w' } }], tool_choice: 'none' }));
    assert.equal(none.toolConfig, undefined);
    assert.throws(() => toBedrockRequest(req({ messages: [{ role: 'user', content: 'hi' }], n: 2 })), GatewayError);
    assert.throws(() => toBedrockRequest(req({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] })), GatewayError);
    assert.throws(() => toBedrockRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] })), /base64 data: URLs/);
  });

  test('adapter: model id is URL-encoded in the path; streaming uses converse-stream', () => {
    const up = bedrockAdapter.chatRequest(req({ messages: [{ role: 'user', content: 'hi' }] }), 'anthropic.claude-3-5-sonnet-20240620-v1:0', true);
    assert.equal(up.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
    assert.equal(bedrockAdapter.chatRequest(req({ messages: [{ role: 'user', content: 'hi' }] }), 'x', false).path, '/model/x/converse');
  });
});

describe('bedrock response -> unified', () => {
  const ctx = { id: 'chatcmpl-1', model: 'anthropic.claude', created: 1 };

  test('text, reasoning and usage', () => {
    const res = fromBedrockResponse({
      output: { message: { role: 'assistant', content: [
        { reasoningContent: { reasoningText: { text: 'hmm', signature: 'sig' } } },
        { text: 'Hello' },
        { text: ' world' },
      ] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13, cacheReadInputTokens: 2 },
    }, ctx);
    assert.equal(res.choices[0].message.content, 'Hello world');
    assert.equal(res.choices[0].message.reasoning, 'hmm');
    assert.deepEqual(res.choices[0].message.reasoning_details, [{ type: 'reasoning.text', text: 'hmm', signature: 'sig', index: 0 }]);
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.deepEqual(res.usage, { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 2 } });
    assert.equal(res.id, 'chatcmpl-1');
    assert.equal(res.model, 'anthropic.claude');
  });

  test('tool use and stop reasons', () => {
    const res = fromBedrockResponse({
      output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tu1', name: 'w', input: { query: 'x' } } }] } },
      stopReason: 'tool_use',
    }, ctx);
    assert.equal(res.choices[0].message.content, null);
    assert.deepEqual(res.choices[0].message.tool_calls, [{ id: 'tu1', type: 'function', function: { name: 'w', arguments: '{"query":"x"}' } }]);
    assert.equal(res.choices[0].finish_reason, 'tool_calls');
    for (const [reason, finish] of [['max_tokens', 'length'], ['guardrail_intervened', 'content_filter'], ['content_filtered', 'content_filter'], ['stop_sequence', 'stop']]) {
      assert.equal(fromBedrockResponse({ output: { message: { role: 'assistant', content: [] } }, stopReason: reason }, ctx).choices[0].finish_reason, finish);
    }
  });
});

describe('bedrock errors', () => {
  test('exception name from x-amzn-errortype, message from the body', () => {
    assert.deepEqual(
      fromBedrockError(429, { message: 'Too many requests' }, { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }),
      { type: 'ThrottlingException', message: 'Too many requests' },
    );
    assert.deepEqual(fromBedrockError(400, { __type: 'com.amazon.bedrock#ValidationException', Message: 'bad' }), { type: 'ValidationException', message: 'bad' });
    assert.deepEqual(fromBedrockError(503, '<html>oops</html>'), { type: 'ServiceUnavailableException', message: '<html>oops</html>' });
    assert.equal(fromBedrockError(500, undefined).message, 'bedrock returned HTTP 500');
  });

  test('stream exception names map to statuses', () => {
    assert.equal(statusForBedrockErrorType('throttlingException'), 429);
    assert.equal(statusForBedrockErrorType('validationException'), 400);
    assert.equal(statusForBedrockErrorType('serviceUnavailableException'), 503);
    assert.equal(statusForBedrockErrorType('somethingNew'), 500);
  });
});
