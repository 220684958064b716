import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { GoogleGenAI } from '@google/genai';
import type { ChatChunk, ChatDelta, FinishReason, ToolCall, Usage } from '../../proxy/src/unified/chat.ts';
import { createGeminiStreamEncoder, encodeGeminiSse } from '../../proxy/src/providers/gemini/native/stream.ts';
import { createGeminiStreamTranslator } from '../../proxy/src/providers/gemini/stream.ts';
import type { GeminiGenerateContentResponse } from '../../proxy/src/providers/gemini/types.ts';

const MODEL = 'openai/gpt-4o';
const ID = 'chatcmpl-stream-1';
const meta = { modelVersion: MODEL, responseId: ID };

const chunk = (delta: ChatDelta, finish_reason: FinishReason | null = null, index = 0): ChatChunk => ({
  id: ID,
  object: 'chat.completion.chunk',
  created: 1_750_000_000,
  model: 'gpt-4o-2024-08-06',
  choices: [{ index, delta, finish_reason }],
});
const usageChunk = (usage: Usage): ChatChunk => ({ ...chunk({}), choices: [], usage });

function encode(chunks: ChatChunk[]): GeminiGenerateContentResponse[] {
  const encoder = createGeminiStreamEncoder(MODEL, ID);
  return [...chunks.flatMap((c) => encoder.push(c)), ...encoder.finish()];
}

/** Feeds native events, framed as on the wire, back through the forward translator. */
function decode(events: GeminiGenerateContentResponse[]): ChatChunk[] {
  const translator = createGeminiStreamTranslator({ model: 'ctx-model', id: 'ctx-id', created: 1_750_000_000 });
  const wire = events.map(encodeGeminiSse).join('');
  const datas = wire
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((frame) => {
      assert.ok(frame.startsWith('data: '));
      return frame.slice('data: '.length);
    });
  return [...datas.flatMap((data) => translator.push({ data })), ...translator.finish()];
}

/** What a client assembles from a unified stream (choice 0). */
function assemble(chunks: ChatChunk[]) {
  let content = '';
  let reasoning = '';
  const calls: ToolCall[] = [];
  let finish: FinishReason | null = null;
  let usage: Usage | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const choice of c.choices) {
      content += choice.delta.content ?? '';
      reasoning += choice.delta.reasoning ?? '';
      for (const tc of choice.delta.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (tc.id) call.id = tc.id;
        if (tc.function.name) call.function.name = tc.function.name;
        call.function.arguments += tc.function.arguments ?? '';
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return { content, reasoning, calls, finish, usage };
}

/** An OpenAI-style text stream with usage after the finish chunk (stream_options.include_usage). */
const textStream: ChatChunk[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'The sky ' }),
  chunk({ content: 'is blue.' }),
  chunk({}, 'stop'),
  usageChunk({ prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 }),
];

/** An OpenAI-style tool-call stream: arguments arrive in fragments, two calls by index. */
const toolStream: ChatChunk[] = [
  chunk({ role: 'assistant', content: null }),
  chunk({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'get_time', arguments: '{"tz":' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: '"CET"}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk({ prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 }),
];

describe('createGeminiStreamEncoder', () => {
  it('streams text deltas, then finish reason and usage on the closing event', () => {
    assert.deepEqual(encode(textStream), [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'The sky ' }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'is blue.' }] }, index: 0 }], ...meta },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 6, totalTokenCount: 15 },
        ...meta,
      },
    ]);
  });

  it('emits each function call once its arguments are complete', () => {
    assert.deepEqual(encode(toolStream), [
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'call_A', name: 'get_weather', args: { city: 'Paris' } } }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'call_B', name: 'get_time', args: { tz: 'CET' } } }] }, index: 0 }], ...meta },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 20, totalTokenCount: 70 },
        ...meta,
      },
    ]);
  });

  it('flushes a buffered call when other content starts, and at end of stream without a finish chunk', () => {
    const events = encode([
      chunk({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'a', arguments: '{}' } }] }),
      chunk({ content: 'between' }),
      chunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'b', arguments: '{"x":1}' } }] }),
    ]);
    assert.deepEqual(events, [
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'call_A', name: 'a', args: {} } }, { text: 'between' }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'call_B', name: 'b', args: { x: 1 } } }] }, index: 0 }], ...meta },
    ]);
  });

  it('maps Anthropic-style reasoning deltas and a trailing signature to thought parts', () => {
    const events = encode([
      chunk({ role: 'assistant', reasoning: 'Weighing', reasoning_details: [{ type: 'reasoning.text', text: 'Weighing', index: 0 }] }),
      chunk({ reasoning: ' options.', reasoning_details: [{ type: 'reasoning.text', text: ' options.', index: 0 }] }),
      chunk({ reasoning_details: [{ type: 'reasoning.text', signature: 'RXFzaWc=', index: 0 }] }),
      chunk({ content: 'Option B.' }),
      chunk({}, 'length'),
    ]);
    assert.deepEqual(
      events.map((e) => e.candidates?.[0]),
      [
        { content: { role: 'model', parts: [{ text: 'Weighing', thought: true }] }, index: 0 },
        { content: { role: 'model', parts: [{ text: ' options.', thought: true }] }, index: 0 },
        { content: { role: 'model', parts: [{ text: '', thought: true, thoughtSignature: 'RXFzaWc=' }] }, index: 0 },
        { content: { role: 'model', parts: [{ text: 'Option B.' }] }, index: 0 },
        { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'MAX_TOKENS', index: 0 },
      ],
    );
    // A plain `reasoning` string (no details) is a thought part too.
    assert.deepEqual(encode([chunk({ reasoning: 'hmm' })])[0].candidates?.[0].content?.parts, [{ text: 'hmm', thought: true }]);
  });

  it('keeps candidates apart and closes each with its finish reason', () => {
    const events = encode([
      chunk({ content: 'A' }, null, 0),
      chunk({ content: 'B' }, null, 1),
      chunk({}, 'stop', 0),
      chunk({}, 'content_filter', 1),
    ]);
    assert.deepEqual(events.at(-1), {
      candidates: [
        { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 },
        { content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'SAFETY', index: 1 },
      ],
      ...meta,
    });
  });

  it('sends nothing for an empty stream, and usage alone when only usage came', () => {
    assert.deepEqual(encode([]), []);
    assert.deepEqual(encode([usageChunk({ prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 })]), [
      { usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 0, totalTokenCount: 3 }, ...meta },
    ]);
  });

  it('frames events as the Gemini API does', () => {
    assert.equal(encodeGeminiSse({ candidates: [], responseId: 'r' }), 'data: {"candidates":[],"responseId":"r"}\r\n\r\n');
  });
});

describe('createGeminiStreamEncoder → createGeminiStreamTranslator', () => {
  it('reconstructs a text stream', () => {
    const back = assemble(decode(encode(textStream)));
    assert.deepEqual(back, { content: 'The sky is blue.', reasoning: '', calls: [], finish: 'stop', usage: textStream.at(-1)?.usage });
  });

  it('reconstructs the tool calls of a fragmented tool-call stream', () => {
    const back = assemble(decode(encode(toolStream)));
    assert.deepEqual(back.calls, [
      { id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_B', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
    assert.equal(back.finish, 'tool_calls');
    assert.equal(back.content, '');
    assert.deepEqual(back.usage, { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 });
  });

  it('native → unified → native reproduces a thinking stream with signatures', () => {
    const native: GeminiGenerateContentResponse[] = [
      { candidates: [{ content: { role: 'model', parts: [{ text: '**Sizing it up** ', thought: true }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Six times seven.', thought: true }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'The answer ' }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'is 42.', thoughtSignature: 'c2lnLXRleHQ=' }] }, index: 0 }], ...meta },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 61, thoughtsTokenCount: 44 },
        ...meta,
      },
    ];
    assert.deepEqual(encode(decode(native)), native);
  });

  it('native → unified → native keeps a signed function call', () => {
    const native: GeminiGenerateContentResponse[] = [
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Need the weather.', thought: true }] }, index: 0 }], ...meta },
      {
        candidates: [
          {
            content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 8, totalTokenCount: 38 },
        ...meta,
      },
    ];
    const out = encode(decode(native));
    assert.deepEqual(out, [
      native[0],
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ functionCall: { id: 'call_0_0', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }],
            },
            index: 0,
          },
        ],
        ...meta,
      },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: native[1].usageMetadata,
        ...meta,
      },
    ]);
    // And back again: the same unified tool call and finish.
    const again = assemble(decode(out));
    assert.deepEqual(again.calls, [{ id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    assert.equal(again.finish, 'tool_calls');
  });
});

/** Serves the encoded stream as SSE to @google/genai. */
async function withSseServer<T>(events: GeminiGenerateContentResponse[], run: (ai: GoogleGenAI) => Promise<T>): Promise<T> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      assert.match(req.url ?? '', /:streamGenerateContent\?alt=sse$/);
      res.setHeader('content-type', 'text/event-stream');
      // One write per event, as the gateway flushes them.
      for (const e of events) res.write(encodeGeminiSse(e));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as { port: number };
    return await run(new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: `http://127.0.0.1:${port}/genai` } }));
  } finally {
    server.close();
  }
}

describe('createGeminiStreamEncoder through @google/genai', () => {
  it('generateContentStream yields the text and the final usage', async () => {
    const chunks = await withSseServer(encode(textStream), async (ai) => {
      const out = [];
      for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'Sky colour?' })) out.push(c);
      return out;
    });
    assert.equal(chunks.map((c) => c.text ?? '').join(''), 'The sky is blue.');
    assert.equal(chunks.at(-1)?.candidates?.[0].finishReason, 'STOP');
    assert.equal(chunks.at(-1)?.usageMetadata?.totalTokenCount, 15);
    assert.equal(chunks[0].responseId, ID);
  });

  it('generateContentStream yields complete function calls', async () => {
    const calls = await withSseServer(encode(toolStream), async (ai) => {
      const out = [];
      for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'Weather?' })) out.push(...(c.functionCalls ?? []));
      return out;
    });
    assert.deepEqual(calls, [
      { id: 'call_A', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_B', name: 'get_time', args: { tz: 'CET' } },
    ]);
  });

  it('a chat session records the streamed turn in its history', async () => {
    const history = await withSseServer(encode(textStream), async (ai) => {
      const chat = ai.chats.create({ model: MODEL });
      for await (const _ of await chat.sendMessageStream({ message: 'Sky colour?' })) {
        // drain
      }
      return chat.getHistory();
    });
    // Recorded only when every event had content and one had a finish reason; one entry per event.
    assert.equal(history[0].role, 'user');
    assert.ok(history.length > 1);
    assert.ok(history.slice(1).every((c) => c.role === 'model'));
    assert.equal(
      history
        .slice(1)
        .flatMap((c) => c.parts ?? [])
        .map((p) => p.text ?? '')
        .join(''),
      'The sky is blue.',
    );
  });
});
