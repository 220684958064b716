import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { fromGeminiResponse } from '../../proxy/src/providers/gemini/response.ts';
import { toGeminiRequest } from '../../proxy/src/providers/gemini/request.ts';
import type { GeminiGenerateContentResponse } from '../../proxy/src/providers/gemini/types.ts';

const ctx = { model: 'gemini-2.5-flash', id: 'chatcmpl-local', created: 1_750_000_000 };

describe('fromGeminiResponse', () => {
  it('maps a text answer, ids, model and usage', () => {
    const res: GeminiGenerateContentResponse = {
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'The sky is blue ' }, { text: 'because of Rayleigh scattering.' }] },
          finishReason: 'STOP',
          index: 0,
          safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
        },
      ],
      usageMetadata: {
        promptTokenCount: 9,
        candidatesTokenCount: 12,
        totalTokenCount: 21,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }],
      },
      modelVersion: 'gemini-2.5-flash-001',
      responseId: 'mJ5oaPDsLtK7nvgPq5TH4QM',
    };
    assert.deepEqual(fromGeminiResponse(res, ctx), {
      id: 'mJ5oaPDsLtK7nvgPq5TH4QM',
      object: 'chat.completion',
      created: 1_750_000_000,
      model: 'gemini-2.5-flash-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'The sky is blue because of Rayleigh scattering.' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 },
    });
  });

  it('falls back to the context id and model and omits absent usage', () => {
    const out = fromGeminiResponse({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }, ctx);
    assert.equal(out.id, 'chatcmpl-local');
    assert.equal(out.model, 'gemini-2.5-flash');
    assert.equal(out.usage, undefined);
  });

  it('separates thoughts into reasoning and keeps signatures in reasoning_details', () => {
    const out = fromGeminiResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: '**Planning**\nThe user wants a haiku.', thought: true },
                { text: 'Autumn moonlight—', thoughtSignature: 'CiQBVKhc7sig' },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 6,
          thoughtsTokenCount: 120,
          cachedContentTokenCount: 4,
          totalTokenCount: 136,
        },
      },
      ctx,
    );
    assert.deepEqual(out.choices[0].message, {
      role: 'assistant',
      content: 'Autumn moonlight—',
      reasoning: '**Planning**\nThe user wants a haiku.',
      reasoning_details: [
        { type: 'reasoning.text', text: '**Planning**\nThe user wants a haiku.' },
        { type: 'reasoning.encrypted', data: 'CiQBVKhc7sig' },
      ],
    });
    assert.deepEqual(out.usage, {
      prompt_tokens: 10,
      completion_tokens: 126,
      total_tokens: 136,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 120 },
    });
  });

  it('maps function calls to tool_calls with Gemini ids or deterministic ones', () => {
    const out = fromGeminiResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnMQ==' },
                { functionCall: { id: 'fc-7', name: 'get_time', args: { tz: 'Europe/Paris', dst: true } } },
                { functionCall: { name: 'ping' } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
      },
      ctx,
    );
    assert.deepEqual(out.choices[0], {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'fc-7', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris","dst":true}' } },
          { id: 'call_0_2', type: 'function', function: { name: 'ping', arguments: '{}' } },
        ],
        reasoning_details: [{ type: 'reasoning.encrypted', id: 'call_0_0', data: 'c2lnMQ==' }],
      },
      finish_reason: 'tool_calls',
    });
  });

  it('maps each finish reason class', () => {
    const finish = (finishReason: string | undefined, calls = false) =>
      fromGeminiResponse(
        {
          candidates: [
            {
              content: { role: 'model', parts: calls ? [{ functionCall: { name: 'f', args: {} } }] : [{ text: 'x' }] },
              ...(finishReason && { finishReason }),
            },
          ],
        },
        ctx,
      ).choices[0].finish_reason;
    assert.equal(finish('STOP'), 'stop');
    assert.equal(finish('STOP', true), 'tool_calls');
    assert.equal(finish('MAX_TOKENS'), 'length');
    assert.equal(finish('MAX_TOKENS', true), 'length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']) {
      assert.equal(finish(reason), 'content_filter', reason);
    }
    assert.equal(finish('OTHER'), 'stop');
    assert.equal(finish('MALFORMED_FUNCTION_CALL'), 'stop');
    assert.equal(finish('LANGUAGE'), 'stop');
    assert.equal(finish(undefined), 'stop');
  });

  it('gives a filtered candidate without content an empty answer', () => {
    const out = fromGeminiResponse({ candidates: [{ finishReason: 'SAFETY', index: 0 }] }, ctx);
    assert.deepEqual(out.choices, [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }]);
  });

  it('returns one choice per candidate, indexed by the candidate', () => {
    const out = fromGeminiResponse(
      {
        candidates: [
          { content: { role: 'model', parts: [{ text: 'A' }] }, finishReason: 'STOP', index: 0 },
          { content: { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP', index: 1 },
        ],
      },
      ctx,
    );
    assert.deepEqual(
      out.choices.map((c) => [c.index, c.message.content, c.message.tool_calls?.[0].id, c.finish_reason]),
      [
        [0, 'A', undefined, 'stop'],
        [1, null, 'call_1_0', 'tool_calls'],
      ],
    );
  });

  it('throws a content_filter error for a prompt blocked before generation', () => {
    assert.throws(
      () =>
        fromGeminiResponse(
          {
            promptFeedback: {
              blockReason: 'SAFETY',
              safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }],
            },
            usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
            modelVersion: 'gemini-2.5-flash',
          },
          ctx,
        ),
      (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.equal(err.status, 400);
        assert.equal(err.type, 'content_filter');
        assert.equal(err.code, 'SAFETY');
        assert.equal(err.provider, 'gemini');
        assert.equal(err.upstream, true);
        assert.equal(err.message, 'prompt blocked by Gemini: SAFETY');
        return true;
      },
    );
  });

  it('round-trips: the unified message replays as the original model turn', () => {
    const parts = [
      { text: 'Let me look that up.', thought: true, thoughtSignature: 'dGhvdWdodA==' },
      { text: 'One moment.', thoughtSignature: 'dGV4dA==' },
      { functionCall: { name: 'search', args: { q: 'gemini', limit: 3 } }, thoughtSignature: 'Y2FsbA==' },
      { functionCall: { name: 'fetch', args: { url: 'https://example.com' } } },
    ];
    const out = fromGeminiResponse({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }] }, ctx);
    const message = out.choices[0].message;
    const request = toGeminiRequest({
      model: 'gemini-2.5-pro',
      messages: [
        { role: 'user', content: 'Find it' },
        message,
        { role: 'tool', tool_call_id: message.tool_calls![0].id, content: '{"hits":1}' },
        { role: 'tool', tool_call_id: message.tool_calls![1].id, content: 'page body' },
      ],
    });
    assert.deepEqual(request.contents, [
      { role: 'user', parts: [{ text: 'Find it' }] },
      { role: 'model', parts },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'search', response: { hits: 1 } } },
          { functionResponse: { name: 'fetch', response: { content: 'page body' } } },
        ],
      },
    ]);
  });
});
