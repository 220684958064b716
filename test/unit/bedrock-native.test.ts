// The /bedrock reverse translators: native Converse request -> unified, unified answer and chunks
// -> native Converse response and ConverseStream frames, errors, InvokeModel; each checked by a
// round trip through the forward translators (../request.ts, ../response.ts, ../stream.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { fromBedrockConverseRequest } from '../../proxy/src/providers/bedrock/native/request.ts';
import { toBedrockConverseResponse } from '../../proxy/src/providers/bedrock/native/response.ts';
import { bedrockStreamError, createBedrockStreamEncoder, encodeBedrockEvent, type BedrockNativeEvent } from '../../proxy/src/providers/bedrock/native/stream.ts';
import { eventFrame, exceptionFrame, frameBytes } from '../../proxy/src/providers/bedrock/native/eventstream.ts';
import { streamExceptionType, toBedrockError } from '../../proxy/src/providers/bedrock/native/error.ts';
import { encodeInvokeChunk, fromInvokeRequest, invokeBodyFormat, withInvocationMetrics } from '../../proxy/src/providers/bedrock/native/invoke.ts';
import { toBedrockRequest } from '../../proxy/src/providers/bedrock/request.ts';
import { fromBedrockResponse } from '../../proxy/src/providers/bedrock/response.ts';
import { createBedrockStreamTranslator, createEventStreamDecoder } from '../../proxy/src/providers/bedrock/stream.ts';
import { fromBedrockError } from '../../proxy/src/providers/bedrock/error.ts';
import type { BedrockConverseRequest } from '../../proxy/src/providers/bedrock/types.ts';
import { routeBedrockModel } from '../../proxy/src/endpoints/native/bedrock.ts';
import type { ChatChunk, ChatDelta, ChatRequest, ChatResponse, Usage } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQ=';

function rejects(fn: () => unknown, param: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.param, param);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('fromBedrockConverseRequest', () => {
  test('reads system, content blocks, tool results first, config and tools', () => {
    const req = fromBedrockConverseRequest(
      {
        system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }],
        messages: [
          {
            role: 'user',
            content: [
              { text: 'Look at this' },
              { image: { format: 'png', source: { bytes: PNG } } },
              { document: { format: 'pdf', name: 'report', source: { bytes: PDF } } },
              { document: { format: 'txt', name: 'notes', source: { bytes: Buffer.from('plain notes').toString('base64') } } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'thinking...', signature: 'sig1' } } },
              { text: 'Let me check.' },
              { toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Lima' } } },
            ],
          },
          { role: 'user', content: [{ text: 'and quickly' }, { toolResult: { toolUseId: 'tu_1', content: [{ text: 'foggy' }, { json: { c: 14 } }] } }] },
        ],
        inferenceConfig: { maxTokens: 256, temperature: 0.3, topP: 0.9, stopSequences: ['END'] },
        toolConfig: {
          tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object' } } } }, { cachePoint: { type: 'default' } }],
          toolChoice: { any: {} },
        },
        additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2048 } },
        requestMetadata: { team: 'search' },
      },
      'openai/gpt-4o',
      false,
    );
    assert.deepEqual(req, {
      model: 'openai/gpt-4o',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at this' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' } },
            { type: 'text', text: 'plain notes' },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lima"}' } }],
          reasoning: 'thinking...',
          reasoning_details: [{ type: 'reasoning.text', text: 'thinking...', index: 0, signature: 'sig1' }],
        },
        { role: 'tool', tool_call_id: 'tu_1', content: 'foggy{"c":14}' },
        { role: 'user', content: [{ type: 'text', text: 'and quickly' }] },
      ],
      max_tokens: 256,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } }],
      tool_choice: 'required',
      reasoning: { max_tokens: 2048 },
    });
  });

  test('a stream asks for usage, which the metadata event needs', () => {
    const req = fromBedrockConverseRequest({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, 'm', true);
    assert.equal(req.stream, true);
    assert.deepEqual(req.stream_options, { include_usage: true });
  });

  test('refuses what other providers cannot honour, naming the field', () => {
    const msg = { role: 'user', content: [{ text: 'x' }] };
    rejects(() => fromBedrockConverseRequest({ messages: [] }, 'm', false), 'messages');
    rejects(() => fromBedrockConverseRequest({ messages: [msg], guardrailConfig: { guardrailIdentifier: 'g' } }, 'm', false), 'guardrailConfig');
    rejects(
      () => fromBedrockConverseRequest({ messages: [{ role: 'user', content: [{ image: { format: 'png', source: { s3Location: { uri: 's3://b/k' } } } }] }] }, 'm', false),
      'messages[0].content[0].image.source.s3Location',
    );
    rejects(() => fromBedrockConverseRequest({ messages: [{ role: 'system', content: [] }] }, 'm', false), 'messages[0].role');
    rejects(() => fromBedrockConverseRequest({ messages: [{ role: 'user', content: [{ video: {} }] }] }, 'm', false), 'messages[0].content[0]', /video/);
    rejects(() => fromBedrockConverseRequest({ messages: [msg], inferenceConfig: { maxTokens: 0 } }, 'm', false), 'inferenceConfig.maxTokens');
    rejects(() => fromBedrockConverseRequest({ messages: [msg], toolConfig: { tools: [], toolChoice: { some: {} } } }, 'm', false), 'toolConfig.toolChoice');
  });

  test('round trip: a request the forward translator wrote comes back unchanged', () => {
    const native: BedrockConverseRequest = {
      messages: [
        { role: 'user', content: [{ text: 'weather?' }, { image: { format: 'jpeg', source: { bytes: PNG } } }] },
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'need a tool', signature: 'sig' } } },
            { text: 'Checking.' },
            { toolUse: { toolUseId: 't1', name: 'get_weather', input: { q: 'Lima' } } },
          ],
        },
        { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'foggy' }], status: 'success' } }] },
      ],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5, stopSequences: ['x'] },
      toolConfig: { tools: [{ toolSpec: { name: 'get_weather', description: 'W', inputSchema: { json: { type: 'object' } } } }], toolChoice: { tool: { name: 'get_weather' } } },
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
    };
    assert.deepEqual(toBedrockRequest(fromBedrockConverseRequest(native, 'm', false)), native);
  });

  test('round trip: a unified request survives forward then reverse', () => {
    const unified: ChatRequest = {
      model: 'bedrock/anthropic.claude',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'sys' }] },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: 'calling', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
      max_tokens: 50,
      top_p: 0.5,
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'auto',
    };
    assert.deepEqual(fromBedrockConverseRequest(toBedrockRequest(unified), unified.model, false), unified);
  });
});

const response = (message: ChatResponse['choices'][0]['message'], finish: string, usage?: Usage): ChatResponse => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, message, finish_reason: finish }],
  ...(usage ? { usage } : {}),
});

describe('toBedrockConverseResponse', () => {
  test('text, reasoning, tool use, stop reason, usage with cache reads apart, latency', () => {
    const res = toBedrockConverseResponse(
      response(
        {
          role: 'assistant',
          content: 'Let me look.',
          reasoning: 'hmm',
          reasoning_details: [{ type: 'reasoning.text', text: 'hmm', signature: 's1', index: 0 }],
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
        },
        'stop',
        { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37, prompt_tokens_details: { cached_tokens: 10 } },
      ),
      42,
    );
    assert.deepEqual(res, {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'hmm', signature: 's1' } } },
            { text: 'Let me look.' },
            { toolUse: { toolUseId: 'call_1', name: 'lookup', input: { q: 'x' } } },
          ],
        },
      },
      // The provider said stop, but the turn called a tool: Bedrock clients need tool_use.
      stopReason: 'tool_use',
      usage: { inputTokens: 20, outputTokens: 7, totalTokens: 37, cacheReadInputTokens: 10 },
      metrics: { latencyMs: 42 },
    });
  });

  test('round trip through fromBedrockResponse keeps content, finish and tokens', () => {
    const original = response(
      {
        role: 'assistant',
        content: 'Answer',
        reasoning: 'because',
        reasoning_details: [{ type: 'reasoning.text', text: 'because', signature: 'sig', index: 0 }],
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      'tool_calls',
      { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } },
    );
    const back = fromBedrockResponse(toBedrockConverseResponse(original, 1), { id: original.id, model: original.model, created: original.created });
    assert.deepEqual(back, original);
  });

  test('finish reasons map to Bedrock stop reasons; an empty answer is one empty text block', () => {
    assert.equal(toBedrockConverseResponse(response({ role: 'assistant', content: 'x' }, 'length'), 0).stopReason, 'max_tokens');
    assert.equal(toBedrockConverseResponse(response({ role: 'assistant', content: 'x' }, 'content_filter'), 0).stopReason, 'content_filtered');
    const empty = toBedrockConverseResponse(response({ role: 'assistant', content: null }, 'stop'), 0);
    assert.deepEqual(empty.output?.message?.content, [{ text: '' }]);
    assert.deepEqual(empty.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });
});

const chunk = (delta: ChatDelta, finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = (usage: Usage): ChatChunk => ({ ...chunk({}), choices: [], usage });

function encode(chunks: ChatChunk[]): BedrockNativeEvent[] {
  const enc = createBedrockStreamEncoder(() => 5, 'gw');
  return [...chunks.flatMap((c) => enc.push(c)), ...enc.finish()];
}

const outline = (events: BedrockNativeEvent[]) =>
  events.map((e) => {
    if (e.type === 'contentBlockDelta') return `delta[${e.payload.contentBlockIndex}]:${Object.keys(e.payload.delta ?? {})[0]}`;
    if (e.type === 'contentBlockStart') return `start[${e.payload.contentBlockIndex}]`;
    if (e.type === 'contentBlockStop') return `stop[${e.payload.contentBlockIndex}]`;
    return e.type;
  });

/** The events as event-stream bytes, read back by the gateway's own decoder and ConverseStream translator. */
function readBack(events: BedrockNativeEvent[], pieceSize = 7): ChatChunk[] {
  const bytes = frameBytes(events.map(encodeBedrockEvent).join(''));
  const dec = createEventStreamDecoder();
  const tr = createBedrockStreamTranslator({ id: 'x', model: 'x', created: 1 });
  const out: ChatChunk[] = [];
  for (let i = 0; i < bytes.length; i += pieceSize) for (const ev of dec.push(bytes.subarray(i, i + pieceSize))) out.push(...tr.push(ev));
  return [...out, ...tr.finish()];
}

function assemble(chunks: ChatChunk[]) {
  let content = '';
  let reasoning = '';
  const calls: Array<{ id?: string; name?: string; args: string }> = [];
  let finish: string | null = null;
  let usage: Usage | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      content += ch.delta.content ?? '';
      reasoning += ch.delta.reasoning ?? '';
      for (const tc of ch.delta.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { args: '' });
        call.id ??= tc.id;
        call.name ??= tc.function.name;
        call.args += tc.function.arguments ?? '';
      }
      finish = ch.finish_reason ?? finish;
    }
  }
  return { content, reasoning, calls, finish, usage };
}

describe('ConverseStream encoder', () => {
  const chunks = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ reasoning: 'Let me ', reasoning_details: [{ type: 'reasoning.text', text: 'Let me ', index: 0 }] }),
    chunk({ reasoning: 'think.', reasoning_details: [{ type: 'reasoning.text', text: 'think.', index: 0 }] }),
    chunk({ reasoning_details: [{ type: 'reasoning.text', signature: 'sig', index: 0 }] }),
    chunk({ content: 'Hello ' }),
    chunk({ content: 'there.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
    usageChunk({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }),
  ];

  test('one block at a time, tool uses opened with contentBlockStart, then messageStop and metadata', () => {
    const events = encode(chunks);
    assert.deepEqual(outline(events), [
      'messageStart',
      'delta[0]:reasoningContent',
      'delta[0]:reasoningContent',
      'delta[0]:reasoningContent',
      'stop[0]',
      'delta[1]:text',
      'delta[1]:text',
      'stop[1]',
      'start[2]',
      'delta[2]:toolUse',
      'delta[2]:toolUse',
      'stop[2]',
      'start[3]',
      'delta[3]:toolUse',
      'stop[3]',
      'messageStop',
      'metadata',
    ]);
    assert.deepEqual(events.at(-2), { type: 'messageStop', payload: { stopReason: 'tool_use' } });
    assert.deepEqual(events.at(-1), { type: 'metadata', payload: { usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 }, metrics: { latencyMs: 5 } } });
  });

  test('round trip: frames split across reads decode to the same answer', () => {
    const back = assemble(readBack(encode(chunks)));
    assert.equal(back.content, 'Hello there.');
    assert.equal(back.reasoning, 'Let me think.');
    assert.deepEqual(back.calls, [
      { id: 'call_a', name: 'a', args: '{"x":1}' },
      { id: 'call_b', name: 'b', args: '{}' },
    ]);
    assert.equal(back.finish, 'tool_calls');
    assert.equal(back.usage?.prompt_tokens, 9);
    assert.equal(back.usage?.completion_tokens, 4);
  });

  test('an empty stream still starts and ends properly', () => {
    assert.deepEqual(outline(encode([])), ['messageStart', 'messageStop', 'metadata']);
  });

  test('a failure mid-stream is an exception frame the forward decoder throws from', () => {
    const bytes = frameBytes(bedrockStreamError(new GatewayError(429, 'slow down')));
    const [ev] = createEventStreamDecoder().push(bytes);
    assert.equal(ev.event, 'exception:throttlingException');
    assert.throws(
      () => createBedrockStreamTranslator({ id: 'x', model: 'x', created: 1 }).push(ev),
      (err: unknown) => err instanceof GatewayError && err.status === 429 && err.message === 'slow down',
    );
  });
});

describe('event-stream frames', () => {
  test('event frames carry the headers the SDK dispatches on, and valid CRCs', () => {
    const msg = codec.decode(frameBytes(eventFrame('messageStart', { role: 'assistant' })));
    assert.equal(msg.headers[':event-type'].value, 'messageStart');
    assert.equal(msg.headers[':message-type'].value, 'event');
    assert.equal(msg.headers[':content-type'].value, 'application/json');
    assert.deepEqual(JSON.parse(toUtf8(msg.body)), { role: 'assistant' });
  });

  test('exception frames name the stream union member', () => {
    const msg = codec.decode(frameBytes(exceptionFrame('validationException', 'bad')));
    assert.equal(msg.headers[':message-type'].value, 'exception');
    assert.equal(msg.headers[':exception-type'].value, 'validationException');
    assert.deepEqual(JSON.parse(toUtf8(msg.body)), { message: 'bad' });
  });

  test('non-ASCII text survives the latin1 transport', () => {
    const msg = codec.decode(frameBytes(eventFrame('contentBlockDelta', { delta: { text: 'naïve 日本 🚀' } })));
    assert.equal((JSON.parse(toUtf8(msg.body)) as { delta: { text: string } }).delta.text, 'naïve 日本 🚀');
  });

  test('the stream exception member follows the status', () => {
    const type = (status: number, invoke = false) => streamExceptionType(new GatewayError(status, 'x'), invoke);
    assert.equal(type(429), 'throttlingException');
    assert.equal(type(503), 'serviceUnavailableException');
    assert.equal(type(400), 'validationException');
    assert.equal(type(500), 'internalServerException');
    assert.equal(type(502), 'modelStreamErrorException');
    assert.equal(type(504), 'modelStreamErrorException');
    assert.equal(type(504, true), 'modelTimeoutException');
  });
});

describe('toBedrockError', () => {
  test('message body, exception name in x-amzn-errortype, status kept', () => {
    const e = toBedrockError(new GatewayError(429, 'Too many requests', { upstream: true, provider: 'openai' }));
    assert.equal(e.status, 429);
    assert.deepEqual(e.body, { message: 'Too many requests' });
    assert.match(e.headers['x-amzn-errortype'], /^ThrottlingException:/);
    assert.match(toBedrockError(new GatewayError(400, 'bad')).headers['x-amzn-errortype'], /^ValidationException:/);
    assert.match(toBedrockError(new GatewayError(404, 'no')).headers['x-amzn-errortype'], /^ResourceNotFoundException:/);
    assert.match(toBedrockError(new GatewayError(503, 'down')).headers['x-amzn-errortype'], /^ServiceUnavailableException:/);
  });

  test('round trip: the forward error reader gets name and message back', () => {
    for (const status of [400, 403, 404, 408, 424, 429, 500, 503]) {
      const e = toBedrockError(new GatewayError(status, `failed ${status}`));
      const back = fromBedrockError(e.status, JSON.stringify(e.body), e.headers);
      assert.equal(back.message, `failed ${status}`);
      assert.equal(e.headers['x-amzn-errortype'].split(':')[0], back.type);
    }
  });
});

describe('InvokeModel', () => {
  test('Claude model ids and provider/model ids take the Anthropic body; other families do not', () => {
    for (const id of ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'openai/gpt-4o', 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2']) {
      assert.equal(invokeBodyFormat(id), 'anthropic', id);
    }
    for (const id of ['amazon.titan-text-express-v1', 'meta.llama3-8b-instruct-v1:0', 'cohere.command-r-v1:0']) assert.equal(invokeBodyFormat(id), undefined, id);
  });

  test('the Claude body becomes a unified request; anthropic_version and anthropic_beta are dropped', () => {
    const req = fromInvokeRequest(
      { anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['x'], max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] },
      'bedrock/anthropic.claude-v2',
      'anthropic.claude-v2',
      true,
    );
    assert.deepEqual(req, {
      model: 'bedrock/anthropic.claude-v2',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('refuses other families and bodies without max_tokens', () => {
    rejects(() => fromInvokeRequest({ inputText: 'x' }, 'm', 'amazon.titan-text-express-v1', false), 'modelId', /Anthropic Claude Messages/);
    rejects(() => fromInvokeRequest({ messages: [] }, 'm', 'openai/gpt-4o', false), 'max_tokens');
  });

  test('chunk events carry base64 JSON bytes; message_stop gets the invocation metrics', () => {
    let t = 0;
    const metrics = withInvocationMetrics(() => (t += 10));
    const start = metrics({ type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 7, output_tokens: 0 } } });
    metrics({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } });
    const stop = metrics({ type: 'message_stop' });
    assert.equal(start.type, 'message_start');
    assert.deepEqual((stop as unknown as Record<string, unknown>)['amazon-bedrock-invocationMetrics'], { inputTokenCount: 7, outputTokenCount: 3, invocationLatency: 20, firstByteLatency: 10 });

    const msg = codec.decode(frameBytes(encodeInvokeChunk(stop)));
    assert.equal(msg.headers[':event-type'].value, 'chunk');
    const payload = JSON.parse(toUtf8(msg.body)) as { bytes: string };
    assert.equal((JSON.parse(Buffer.from(payload.bytes, 'base64').toString('utf8')) as { type: string }).type, 'message_stop');
  });
});

describe('routeBedrockModel', () => {
  const withBedrock = new Map<string, unknown>([['openai', {}], ['bedrock', {}]]);
  const withoutBedrock = new Map<string, unknown>([['openai', {}], ['anthropic', {}]]);
  test('provider/model ids are kept; Bedrock ids go to the bedrock provider when there is one', () => {
    assert.equal(routeBedrockModel(withBedrock, 'openai/gpt-4o'), 'openai/gpt-4o');
    assert.equal(routeBedrockModel(withBedrock, 'anthropic.claude-v2'), 'bedrock/anthropic.claude-v2');
    assert.equal(routeBedrockModel(withBedrock, 'arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude'), 'bedrock/arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude');
    // A known provider that is not configured keeps its prefix, so the error names it.
    assert.equal(routeBedrockModel(withBedrock, 'gemini/gemini-2.5-flash'), 'gemini/gemini-2.5-flash');
  });

  test('without a bedrock provider, bare ids follow the bare-model rules', () => {
    assert.equal(routeBedrockModel(withoutBedrock, 'claude-sonnet-4-5'), 'claude-sonnet-4-5');
    assert.equal(routeBedrockModel(withoutBedrock, 'anthropic.claude-v2'), 'anthropic.claude-v2');
  });
});
