import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { GoogleGenAI } from '@google/genai';
import type { ChatResponse } from '../../proxy/src/unified/chat.ts';
import type { EmbeddingResponse } from '../../proxy/src/unified/embeddings.ts';
import { GatewayError, invalidRequest, unsupportedOperation } from '../../proxy/src/unified/errors.ts';
import { toGeminiResponse } from '../../proxy/src/providers/gemini/native/response.ts';
import { toGeminiEmbedResponse } from '../../proxy/src/providers/gemini/native/embeddings.ts';
import { toGeminiError } from '../../proxy/src/providers/gemini/native/error.ts';
import { fromGeminiResponse } from '../../proxy/src/providers/gemini/response.ts';
import { fromGeminiEmbedResponse } from '../../proxy/src/providers/gemini/embeddings.ts';
import type { GeminiGenerateContentResponse } from '../../proxy/src/providers/gemini/types.ts';

const ctx = { model: 'fallback', id: 'fallback-id', created: 1_750_000_000 };

/** An answer as an OpenAI-format provider gives it: reasoning, text and two tool calls. */
const toolAnswer: ChatResponse = {
  id: 'chatcmpl-abc123',
  object: 'chat.completion',
  created: 1_750_000_000,
  model: 'gpt-4o-2024-08-06',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Checking both.',
        reasoning: 'The user wants weather and time.',
        tool_calls: [
          { id: 'call_Xy1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_Xy2', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: {
    prompt_tokens: 120,
    completion_tokens: 80,
    total_tokens: 200,
    prompt_tokens_details: { cached_tokens: 64 },
    completion_tokens_details: { reasoning_tokens: 30 },
  },
};

describe('toGeminiResponse', () => {
  it('maps thoughts, text, function calls, finish reason and usage', () => {
    assert.deepEqual(toGeminiResponse(toolAnswer, 'openai/gpt-4o'), {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'The user wants weather and time.', thought: true },
              { text: 'Checking both.' },
              { functionCall: { id: 'call_Xy1', name: 'get_weather', args: { city: 'Paris' } } },
              { functionCall: { id: 'call_Xy2', name: 'get_time', args: { tz: 'Europe/Paris' } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 120,
        candidatesTokenCount: 50,
        totalTokenCount: 200,
        thoughtsTokenCount: 30,
        cachedContentTokenCount: 64,
      },
      modelVersion: 'openai/gpt-4o',
      responseId: 'chatcmpl-abc123',
    });
  });

  it('puts signatures back on thought, text and functionCall parts', () => {
    const res = toGeminiResponse(
      {
        ...toolAnswer,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Here.',
              reasoning: 'think',
              reasoning_details: [
                { type: 'reasoning.text', text: 'think', signature: 'c2lnLTE=' },
                { type: 'reasoning.encrypted', id: 'call_1', data: 'c2lnLTI=' },
                { type: 'reasoning.encrypted', data: 'c2lnLTM=' },
              ],
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      'm',
    );
    assert.deepEqual(res.candidates?.[0].content?.parts, [
      { text: 'think', thought: true, thoughtSignature: 'c2lnLTE=' },
      { text: 'Here.', thoughtSignature: 'c2lnLTM=' },
      { functionCall: { id: 'call_1', name: 'f', args: {} }, thoughtSignature: 'c2lnLTI=' },
    ]);
  });

  it('maps each finish reason and gives a filtered, empty candidate no content', () => {
    const finish = (finish_reason: ChatResponse['choices'][number]['finish_reason'], content: string | null = 'x') =>
      toGeminiResponse({ ...toolAnswer, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason }] }, 'm')
        .candidates?.[0];
    assert.equal(finish('stop')?.finishReason, 'STOP');
    assert.equal(finish('length')?.finishReason, 'MAX_TOKENS');
    assert.equal(finish('tool_calls')?.finishReason, 'STOP');
    assert.equal(finish('content_filter')?.finishReason, 'SAFETY');
    assert.equal(finish('something_new')?.finishReason, 'OTHER');
    assert.equal(finish(null)?.finishReason, undefined);
    assert.deepEqual(finish('content_filter', null), { finishReason: 'SAFETY', index: 0 });
    assert.deepEqual(finish('stop', ''), { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 });
  });

  it('returns one candidate per choice and no usage when none was reported', () => {
    const res = toGeminiResponse(
      {
        id: 'r',
        object: 'chat.completion',
        created: 0,
        model: 'x',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'A' }, finish_reason: 'stop' },
          { index: 1, message: { role: 'assistant', content: 'B' }, finish_reason: 'length' },
        ],
      },
      'm',
    );
    assert.deepEqual(
      res.candidates?.map((c) => [c.index, c.content?.parts, c.finishReason]),
      [
        [0, [{ text: 'A' }], 'STOP'],
        [1, [{ text: 'B' }], 'MAX_TOKENS'],
      ],
    );
    assert.equal(res.usageMetadata, undefined);
  });
});

describe('toGeminiResponse ↔ fromGeminiResponse', () => {
  it('unified → native → unified keeps content, tool calls, reasoning and usage', () => {
    const back = fromGeminiResponse(toGeminiResponse(toolAnswer, 'openai/gpt-4o'), ctx);
    assert.equal(back.id, 'chatcmpl-abc123');
    assert.equal(back.model, 'openai/gpt-4o');
    assert.deepEqual(back.choices[0].message.content, 'Checking both.');
    assert.deepEqual(back.choices[0].message.tool_calls, toolAnswer.choices[0].message.tool_calls);
    assert.equal(back.choices[0].message.reasoning, 'The user wants weather and time.');
    assert.equal(back.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(back.usage, toolAnswer.usage);
  });

  it('native → unified → native reproduces a Gemini answer with signatures', () => {
    const native: GeminiGenerateContentResponse = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: '**Planning** I will look up the weather.', thought: true, thoughtSignature: 'c2lnLXQ=' },
              { text: 'Let me check.', thoughtSignature: 'c2lnLXRleHQ=' },
              { functionCall: { id: 'fc-1', name: 'get_weather', args: { city: 'Paris', days: [1, 2] } }, thoughtSignature: 'c2lnLWM=' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 75, candidatesTokenCount: 21, totalTokenCount: 160, thoughtsTokenCount: 64 },
      modelVersion: 'gemini-2.5-pro',
      responseId: 'tZ5oaKXxA8',
    };
    assert.deepEqual(toGeminiResponse(fromGeminiResponse(native, ctx), 'gemini-2.5-pro'), native);
  });
});

describe('toGeminiResponse through @google/genai', () => {
  it('is parsed by the SDK: text, thoughts, function calls and usage', async () => {
    const body = toGeminiResponse(toolAnswer, 'openai/gpt-4o');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: `http://127.0.0.1:${port}/genai` } });
      const res = await ai.models.generateContent({ model: 'openai/gpt-4o', contents: 'Weather and time in Paris?' });
      // (res.text would work too, but logs a warning about the function-call parts.)
      assert.deepEqual(
        res.candidates?.[0].content?.parts?.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text),
        ['Checking both.'],
      );
      assert.deepEqual(res.functionCalls, [
        { id: 'call_Xy1', name: 'get_weather', args: { city: 'Paris' } },
        { id: 'call_Xy2', name: 'get_time', args: { tz: 'Europe/Paris' } },
      ]);
      assert.equal(res.candidates?.[0].content?.parts?.[0].thought, true);
      assert.equal(res.candidates?.[0].finishReason, 'STOP');
      assert.equal(res.usageMetadata?.totalTokenCount, 200);
      assert.equal(res.usageMetadata?.thoughtsTokenCount, 30);
      assert.equal(res.modelVersion, 'openai/gpt-4o');
      assert.equal(res.responseId, 'chatcmpl-abc123');
    } finally {
      server.close();
    }
  });
});

describe('toGeminiEmbedResponse', () => {
  const embeddings: EmbeddingResponse = {
    object: 'list',
    data: [
      { object: 'embedding', index: 1, embedding: [0.5, -0.25] },
      { object: 'embedding', index: 0, embedding: [0.125, 1] },
    ],
    model: 'text-embedding-3-small',
    usage: { prompt_tokens: 4, total_tokens: 4 },
  };

  it('answers batchEmbedContents in input order and round-trips through fromGeminiEmbedResponse', () => {
    const body = toGeminiEmbedResponse('batchEmbedContents', embeddings);
    assert.deepEqual(body, { embeddings: [{ values: [0.125, 1] }, { values: [0.5, -0.25] }] });
    assert.deepEqual(
      fromGeminiEmbedResponse('batchEmbedContents', body, 'm', undefined).data.map((d) => d.embedding),
      [
        [0.125, 1],
        [0.5, -0.25],
      ],
    );
  });

  it('answers embedContent with one embedding, decoding base64 vectors', () => {
    const base64 = Buffer.from(new Float32Array([0.5, -2]).buffer).toString('base64');
    assert.deepEqual(
      toGeminiEmbedResponse('embedContent', { ...embeddings, data: [{ object: 'embedding', index: 0, embedding: base64 }] }),
      { embedding: { values: [0.5, -2] } },
    );
  });
});

describe('toGeminiError', () => {
  it("maps HTTP statuses to Google's canonical codes", () => {
    const cases: Array<[number, string]> = [
      [400, 'INVALID_ARGUMENT'],
      [401, 'UNAUTHENTICATED'],
      [403, 'PERMISSION_DENIED'],
      [404, 'NOT_FOUND'],
      [429, 'RESOURCE_EXHAUSTED'],
      [500, 'INTERNAL'],
      [502, 'UNAVAILABLE'],
      [503, 'UNAVAILABLE'],
      [504, 'DEADLINE_EXCEEDED'],
    ];
    for (const [status, name] of cases) {
      assert.deepEqual(toGeminiError(new GatewayError(status, `failed ${status}`)), {
        status,
        body: { error: { code: status, message: `failed ${status}`, status: name } },
      });
    }
    assert.equal(toGeminiError(invalidRequest('bad', 'contents')).body.error.status, 'INVALID_ARGUMENT');
    assert.equal(toGeminiError(unsupportedOperation('openai', 'embeddings')).status, 400);
  });

  it('is what the SDK raises as an ApiError', async () => {
    const { status, body } = toGeminiError(new GatewayError(429, 'Rate limit reached for gpt-4o', { upstream: true }));
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const ai = new GoogleGenAI({
        apiKey: 'test-key',
        httpOptions: { baseUrl: `http://127.0.0.1:${port}/genai`, retryOptions: { attempts: 1 } },
      });
      await assert.rejects(ai.models.generateContent({ model: 'm', contents: 'hi' }), (err: unknown) => {
        assert.equal((err as { status?: number }).status, 429);
        assert.match((err as Error).message, /RESOURCE_EXHAUSTED/);
        assert.match((err as Error).message, /Rate limit reached/);
        return true;
      });
    } finally {
      server.close();
    }
  });
});
