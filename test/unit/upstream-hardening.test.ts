// Unit checks of the pieces that contain what upstreams send back: the bounded SSE parser, the
// answer-shape checks and the fault mapping, null-as-absent request bodies, client header
// forwarding, metrics label admission and escaping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Registry } from 'prom-client';
import { SseParser } from '../../proxy/src/upstream/sse.ts';
import { createEventStreamDecoder } from '../../proxy/src/providers/bedrock/stream.ts';
import { checkOpenAIChat, objectList, ShapeError } from '../../proxy/src/unified/answer-shape.ts';
import { asUpstreamFault, GatewayError } from '../../proxy/src/unified/errors.ts';
import { dropNulls } from '../../proxy/src/unified/nulls.ts';
import { withClientHeaders } from '../../proxy/src/pipeline/client-headers.ts';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';
import { readOpenAIChunk } from '../../proxy/src/providers/openai/adapter.ts';

test('SSE parser: an event past the limit is a 502 naming the setting, however it arrives', () => {
  const p = new SseParser({ maxEventBytes: 1000, provider: 'openai' });
  assert.deepEqual(p.push('data: ok\n\n'), [{ data: 'ok' }]);
  // One endless line, in small pieces.
  assert.throws(
    () => {
      for (let i = 0; i < 100; i++) p.push(`${i === 0 ? 'data: ' : ''}${'x'.repeat(50)}`);
    },
    (e: GatewayError) => e.status === 502 && e.code === 'upstream_response_too_large' && /max_stream_event_size_mb/.test(e.message) && e.provider === 'openai',
  );
  // Many short data lines of one event.
  const q = new SseParser({ maxEventBytes: 1000 });
  assert.throws(() => q.push('data: 0123456789\n'.repeat(200)), /larger than the limit of 1000 bytes/);
  // Events under the limit still flow after many pieces, CR LF split across pieces included.
  const r = new SseParser({ maxEventBytes: 1000 });
  const out = [...r.push('data: a'), ...r.push('bc\r'), ...r.push('\ndata: d\r'), ...r.push('\r'), ...r.end()];
  assert.deepEqual(out, [{ data: 'abc\nd' }]);
});

test('Bedrock event-stream: a frame announcing more than the limit is refused before it is buffered', () => {
  const d = createEventStreamDecoder({ maxEventBytes: 1024, provider: 'bedrock' });
  const prelude = new Uint8Array(12);
  new DataView(prelude.buffer).setUint32(0, 50 * 1024 * 1024);
  assert.throws(() => d.push(prelude), (e: GatewayError) => e.code === 'upstream_response_too_large' && e.provider === 'bedrock');
});

test('answer shapes: wrong shapes are ShapeErrors, and any translator failure becomes a 502 naming the provider', () => {
  assert.throws(() => checkOpenAIChat({ choices: 'nope' }), ShapeError);
  assert.throws(() => checkOpenAIChat(null), /expected a JSON object, got null/);
  assert.throws(() => checkOpenAIChat({ choices: [{ message: 'x' }] }), /choices\[0\]\.message/);
  assert.doesNotThrow(() => checkOpenAIChat({ choices: [{ message: {} }] }));
  assert.deepEqual(objectList({}, 'candidates', true), []);
  const fromType = asUpstreamFault(new TypeError("Cannot read properties of null (reading 'content')"), 'anthropic');
  assert.equal(fromType.status, 502);
  assert.equal(fromType.type, 'upstream_invalid_response');
  assert.equal(fromType.provider, 'anthropic');
  const named = asUpstreamFault(new GatewayError(502, 'x', { type: 'upstream_invalid_response', upstream: true }), 'gemini');
  assert.equal(named.provider, 'gemini');
  const kept = new GatewayError(400, 'bad', { provider: 'openai' });
  assert.equal(asUpstreamFault(kept, 'x'), kept);
});

test('OpenAI stream chunks: an in-band error is the upstream error, a wrong shape a ShapeError', () => {
  assert.throws(() => readOpenAIChunk('{"error":{"message":"overloaded","type":"server_error"}}'), (e: GatewayError) => e.message === 'overloaded' && e.upstream);
  assert.throws(() => readOpenAIChunk('{"choices":"nope"}'), ShapeError);
  assert.throws(() => readOpenAIChunk('not json'), ShapeError);
  assert.equal(readOpenAIChunk('{"choices":[]}').choices.length, 0);
});

test('null optional fields are absent, one level down too, but not inside lists or client-data maps', () => {
  const body = {
    model: 'm',
    temperature: null,
    stream_options: { include_usage: null },
    reasoning: { effort: null, summary: 'auto' },
    metadata: { note: null },
    messages: [{ role: 'assistant', content: null, tool_calls: [] }],
  };
  assert.deepEqual(dropNulls(body), {
    model: 'm',
    stream_options: {},
    reasoning: { summary: 'auto' },
    metadata: { note: null },
    messages: [{ role: 'assistant', content: null, tool_calls: [] }],
  });
  assert.equal(dropNulls(null), null);
  assert.deepEqual(dropNulls([null]), [null]);
});

test('client headers: anthropic-beta goes to Anthropic only, and only as printable text', () => {
  const up = { method: 'POST' as const, path: '/messages', requestType: 'chat_completion', stream: false };
  assert.deepEqual(withClientHeaders(up, 'anthropic', { 'anthropic-beta': 'a-1,b-2' }).headers, { 'anthropic-beta': 'a-1,b-2' });
  assert.equal(withClientHeaders(up, 'openai', { 'anthropic-beta': 'a-1' }).headers, undefined);
  assert.equal(withClientHeaders(up, 'anthropic', { 'anthropic-beta': 'a\r\nx-evil: 1' }).headers, undefined);
  assert.equal(withClientHeaders(up, 'anthropic', { 'openai-organization': 'org' }), up);
});

test('metrics: a model is its own label only once admitted; prom-client escapes odd label values', async () => {
  const metrics = new Metrics({ processMetrics: false });
  assert.equal(metrics.modelLabel('never-answered-model'), 'other');
  metrics.admitModel('answered-model');
  assert.equal(metrics.modelLabel('answered-model'), 'answered-model');
  assert.equal(metrics.modelLabel(''), '');
  const registry = new Registry();
  const c = new Counter({ name: 't_total', help: 'h', labelNames: ['model'], registers: [registry] });
  c.labels('a"b\\c\nd').inc();
  const text = await registry.metrics();
  assert.ok(text.includes('t_total{model="a\\"b\\\\c\\nd"} 1'), text);
});
