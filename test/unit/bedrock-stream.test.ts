// ConverseStream: real event-stream bytes (encoded with the smithy codec) -> events -> unified chunks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { createBedrockStreamTranslator, createEventStreamDecoder } from '../../proxy/src/providers/bedrock/stream.ts';
import type { ChatChunk } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const frame = (eventType: string, payload: unknown): Uint8Array => codec.encode({
  headers: {
    ':event-type': { type: 'string', value: eventType },
    ':content-type': { type: 'string', value: 'application/json' },
    ':message-type': { type: 'string', value: 'event' },
  },
  body: fromUtf8(JSON.stringify(payload)),
});
const exception = (type: string, message: string): Uint8Array => codec.encode({
  headers: {
    ':exception-type': { type: 'string', value: type },
    ':content-type': { type: 'string', value: 'application/json' },
    ':message-type': { type: 'string', value: 'exception' },
  },
  body: fromUtf8(JSON.stringify({ message })),
});
const concat = (parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));

const ctx = { id: 'chatcmpl-x', model: 'anthropic.claude', created: 7 };

/** Feeds the bytes in pieces of `size` (frames split across reads) and translates. */
function run(bytes: Uint8Array, size: number): ChatChunk[] {
  const dec = createEventStreamDecoder();
  const tr = createBedrockStreamTranslator(ctx);
  const out: ChatChunk[] = [];
  for (let i = 0; i < bytes.length; i += size) for (const ev of dec.push(bytes.subarray(i, i + size))) out.push(...tr.push(ev));
  for (const ev of dec.end()) out.push(...tr.push(ev));
  out.push(...tr.finish());
  return out;
}

const TEXT_STREAM = concat([
  frame('messageStart', { role: 'assistant' }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think' } } }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } }),
  frame('contentBlockStop', { contentBlockIndex: 0 }),
  frame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Hello ' } }),
  frame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'world' } }),
  frame('contentBlockStop', { contentBlockIndex: 1 }),
  frame('messageStop', { stopReason: 'end_turn' }),
  frame('metadata', { usage: { inputTokens: 4, outputTokens: 2, totalTokens: 6 }, metrics: { latencyMs: 3 } }),
]);

describe('bedrock event-stream decoding', () => {
  test('decoder yields one event per frame, whatever the read boundaries', () => {
    for (const size of [1, 7, 64, TEXT_STREAM.length]) {
      const dec = createEventStreamDecoder();
      const events = [];
      for (let i = 0; i < TEXT_STREAM.length; i += size) events.push(...dec.push(TEXT_STREAM.subarray(i, i + size)));
      assert.deepEqual(dec.end(), []);
      assert.deepEqual(events.map((e) => e.event), [
        'messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata',
      ]);
      assert.deepEqual(JSON.parse(events[4].data), { contentBlockIndex: 1, delta: { text: 'Hello ' } });
    }
  });

  test('a corrupted frame (bad CRC) or a truncated stream is a 502', () => {
    assert.throws(() => createEventStreamDecoder().push(frame('x', {}).map((b, i) => (i === 20 ? b ^ 0xff : b))), (e: GatewayError) => e.status === 502);
    const dec = createEventStreamDecoder();
    dec.push(TEXT_STREAM.subarray(0, 10));
    assert.throws(() => dec.end(), (e: GatewayError) => e.status === 502);
  });
});

describe('bedrock stream -> unified chunks', () => {
  test('text, reasoning, finish and usage', () => {
    const chunks = run(TEXT_STREAM, 13);
    const deltas = chunks.filter((c) => c.choices.length).map((c) => c.choices[0]);
    assert.deepEqual(deltas[0].delta, { role: 'assistant', content: '' });
    assert.equal(deltas.map((d) => d.delta.content ?? '').join(''), 'Hello world');
    assert.equal(deltas.map((d) => d.delta.reasoning ?? '').join(''), 'think');
    assert.deepEqual(deltas[2].delta.reasoning_details, [{ type: 'reasoning.text', signature: 'sig', index: 0 }]);
    assert.equal(deltas.at(-1)!.finish_reason, 'stop');
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6, prompt_tokens_details: { cached_tokens: 0 } });
    assert.ok(chunks.every((c) => c.id === 'chatcmpl-x' && c.model === 'anthropic.claude' && c.created === 7));
  });

  test('tool use: start with id and name, then argument pieces; tool_calls finish', () => {
    const chunks = run(concat([
      frame('messageStart', { role: 'assistant' }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me look.' } }),
      frame('contentBlockStop', { contentBlockIndex: 0 }),
      frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tu1', name: 'w' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"query":' } } }),
      frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"x"}' } } }),
      frame('contentBlockStop', { contentBlockIndex: 1 }),
      frame('messageStop', { stopReason: 'tool_use' }),
    ]), 5);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(calls[0], { index: 0, id: 'tu1', type: 'function', function: { name: 'w', arguments: '' } });
    assert.equal(calls.map((t) => t.function.arguments).join(''), '{"query":"x"}');
    assert.ok(calls.every((t) => t.index === 0));
    assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'tool_calls');
  });

  test('a stream exception becomes a GatewayError with its status', () => {
    const bytes = concat([frame('messageStart', { role: 'assistant' }), exception('throttlingException', 'slow down')]);
    assert.throws(() => run(bytes, 9), (e: GatewayError) => e.status === 429 && e.message === 'slow down' && e.type === 'ThrottlingException' && e.upstream);
  });
});
