import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatChunk } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import type { StreamTranslator } from '../../proxy/src/unified/stream.ts';
import { createGeminiStreamTranslator } from '../../proxy/src/providers/gemini/stream.ts';

const ctx = { model: 'gemini-2.5-flash', id: 'chatcmpl-local', created: 1_750_000_000 };

/** Feeds each payload as one SSE `data:` event, then finishes. */
function run(translator: StreamTranslator, events: unknown[]): ChatChunk[] {
  return [...events.flatMap((e) => translator.push({ data: JSON.stringify(e) })), ...translator.finish()];
}

const base = { id: 'resp-1', object: 'chat.completion.chunk', created: 1_750_000_000, model: 'gemini-2.5-flash-001' } as const;

describe('createGeminiStreamTranslator', () => {
  it('streams text, the finish reason, then the last cumulative usage', () => {
    const chunks = run(createGeminiStreamTranslator(ctx), [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'The sky ' }] }, index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'resp-1',
      },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'is blue.' }] }, index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 },
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'resp-1',
      },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 6, thoughtsTokenCount: 30, totalTokenCount: 45 },
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'resp-1',
      },
    ]);
    assert.deepEqual(chunks, [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'The sky ' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'is blue.' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 9,
          completion_tokens: 36,
          total_tokens: 45,
          completion_tokens_details: { reasoning_tokens: 30 },
        },
      },
    ]);
  });

  it('streams thoughts, complete tool calls counted across events, and finishes with tool_calls', () => {
    const chunks = run(createGeminiStreamTranslator(ctx), [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Need the weather.', thought: true }] }, index: 0 }] },
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }],
            },
            index: 0,
          },
        ],
      },
      {
        candidates: [
          {
            content: { role: 'model', parts: [{ functionCall: { name: 'get_time', args: { tz: 'CET' } } }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 20, totalTokenCount: 70 },
      },
    ]);
    const local = { id: 'chatcmpl-local', object: 'chat.completion.chunk', created: 1_750_000_000, model: 'gemini-2.5-flash' } as const;
    assert.deepEqual(chunks, [
      {
        ...local,
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              reasoning: 'Need the weather.',
              reasoning_details: [{ type: 'reasoning.text', text: 'Need the weather.', index: 0 }],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...local,
        choices: [
          {
            index: 0,
            delta: {
              reasoning_details: [{ type: 'reasoning.encrypted', id: 'call_0_0', data: 'c2ln', index: 1 }],
              tool_calls: [
                { index: 0, id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...local,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 1, id: 'call_0_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }],
            },
            finish_reason: null,
          },
        ],
      },
      { ...local, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { ...local, choices: [], usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 } },
    ]);
  });

  it('carries a signature on an empty closing text part without emitting empty content', () => {
    const chunks = run(createGeminiStreamTranslator(ctx), [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Done.' }] }, index: 0 }] },
      { candidates: [{ content: { role: 'model', parts: [{ text: '', thoughtSignature: 'ZW5k' }] }, finishReason: 'MAX_TOKENS', index: 0 }] },
    ]);
    assert.deepEqual(
      chunks.map((c) => c.choices[0]),
      [
        { index: 0, delta: { role: 'assistant', content: 'Done.' }, finish_reason: null },
        { index: 0, delta: { reasoning_details: [{ type: 'reasoning.encrypted', data: 'ZW5k', index: 0 }] }, finish_reason: null },
        { index: 0, delta: {}, finish_reason: 'length' },
      ],
    );
  });

  it('sends the role once per candidate and keeps candidates apart', () => {
    const chunks = run(createGeminiStreamTranslator(ctx), [
      {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'A1' }] }, index: 0 },
          { content: { role: 'model', parts: [{ text: 'B1' }] }, index: 1 },
        ],
      },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'B2' }] }, finishReason: 'SAFETY', index: 1 }] },
    ]);
    assert.deepEqual(
      chunks.map((c) => c.choices[0]),
      [
        { index: 0, delta: { role: 'assistant', content: 'A1' }, finish_reason: null },
        { index: 1, delta: { role: 'assistant', content: 'B1' }, finish_reason: null },
        { index: 1, delta: { content: 'B2' }, finish_reason: null },
        { index: 1, delta: {}, finish_reason: 'content_filter' },
      ],
    );
  });

  it('emits no usage chunk when none was reported and ignores empty events', () => {
    const t = createGeminiStreamTranslator(ctx);
    assert.deepEqual(t.push({ data: '' }), []);
    assert.equal(t.push({ data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'x' }] } }] }) }).length, 1);
    assert.deepEqual(t.finish(), []);
  });

  it('throws on a blocked prompt and on an in-band error', () => {
    const blocked = createGeminiStreamTranslator(ctx);
    assert.throws(
      () => blocked.push({ data: JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } }) }),
      (err: unknown) => err instanceof GatewayError && err.type === 'content_filter' && err.code === 'PROHIBITED_CONTENT',
    );
    const failing = createGeminiStreamTranslator(ctx);
    assert.throws(
      () =>
        failing.push({
          data: JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }),
        }),
      (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.status, 503);
        assert.equal(err.type, 'UNAVAILABLE');
        assert.equal(err.message, 'The model is overloaded.');
        assert.equal(err.upstream, true);
        assert.equal(err.provider, 'gemini');
        return true;
      },
    );
    assert.throws(() => failing.push({ data: '{"candidates": [' }), (err: unknown) => err instanceof GatewayError && err.status === 502);
  });
});
