// The gateway's OTLP encoder (proxy/src/tracing/otlp-encode.ts) writes, byte for byte, what the
// SDK's ProtobufTraceSerializer writes for the same spans: the request, attempt and stage spans the
// gateway makes, and spans using what it rarely or never sets (events, links, arrays, doubles,
// negative numbers, non-ASCII text, a status message, a remote parent, a tracestate), in batches
// large enough for multi-byte lengths; and the exporters the SDK builds send the encoder's bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '@opentelemetry/api';
import { AlwaysOnSampler, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { endDeferred, LeanTracer } from '../../proxy/src/tracing/tracer.ts';
import { encodeTraceRequest } from '../../proxy/src/tracing/otlp-encode.ts';
import { startSdk } from '../../proxy/src/tracing/sdk.ts';
import { tracingSettings } from '../../proxy/src/tracing/settings.ts';

function spans(count: number): ReadableSpan[] {
  const out = new InMemorySpanExporter();
  const resource = resourceFromAttributes({ 'service.name': 'skybridge', 'deployment.environment': 'tëst', 'host.cpus': 2 });
  const tracer = new LeanTracer(api, new ParentBasedSampler({ root: new AlwaysOnSampler() }), new SimpleSpanProcessor({ exporter: out }), resource, 'skybridge');
  const remote = api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true, traceState: api.createTraceState('vendor=abc,other=1') });
  for (let i = 0; i < count; i++) {
    const root = tracer.startSpan('chat', { kind: api.SpanKind.SERVER, startTime: performance.now() - 3, attributes: { 'gen_ai.operation.name': 'chat', 'url.path': '/v1/chat/completions' } }, i % 2 ? remote : api.ROOT_CONTEXT);
    const ctx = api.trace.setSpan(api.ROOT_CONTEXT, root);
    const attempt = tracer.startSpan('chat gpt-4o', { kind: api.SpanKind.CLIENT, attributes: { 'skybridge.attempt': i, 'skybridge.fallback_index': 0 } }, ctx);
    attempt.setAttribute('http.response.status_code', i % 3 ? 200 : 503);
    if (i % 3 === 0) attempt.setStatus({ code: api.SpanStatusCode.ERROR, message: 'upstream said: “unavailable” ✗' });
    attempt.end();
    const stage = tracer.startSpan('stage plan', { attributes: { 'skybridge.stage': 'plan' } }, ctx);
    stage.addEvent('decided', { 'rule.ids': ['a', 'b'], 'weight': 0.25 });
    stage.addLink({ context: { traceId: 'aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb', spanId: 'cccccccccccccccc', traceFlags: 1, isRemote: true }, attributes: { why: 'batch' } });
    stage.end();
    const attributes: api.Attributes = {
      'skybridge.request.id': `req-${i}-${'x'.repeat(i % 200)}`,
      'gen_ai.usage.input_tokens': 12 + i,
      'skybridge.cost.usd': 0.000125 * (i + 1),
      'skybridge.cache.hit': i % 2 === 0,
      'gen_ai.response.finish_reasons': ['stop', 'length'],
      'skybridge.negative': -5 - i,
      'skybridge.big': 2 ** 40 + i,
      'gen_ai.output.messages': 'ünïcödé ' + '😀'.repeat(i % 50),
    };
    // Every fourth request span as the gateway ends it: attributes and name made when read (at export).
    if (i % 4 === 3) {
      endDeferred(root, {
        settle(into) {
          Object.assign(into, attributes);
          return 'chat gpt-4o';
        },
      });
    } else {
      root.setAttributes(attributes);
      root.end();
    }
  }
  return out.getFinishedSpans();
}

test('the encoder writes the bytes of the SDK serializer: one span set, and a batch of 300 requests', () => {
  for (const n of [1, 300]) {
    const batch = spans(n);
    const mine = encodeTraceRequest(batch);
    const sdk = ProtobufTraceSerializer.serializeRequest(batch)!;
    assert.ok(mine.length > 100 * n, `${mine.length} bytes`);
    assert.equal(Buffer.compare(Buffer.from(mine), Buffer.from(sdk)), 0, `${n} requests: the encodings differ`);
  }
});

test('consecutive exports do not share a buffer: an earlier request keeps its bytes', () => {
  const a = encodeTraceRequest(spans(2));
  const copy = Buffer.from(a);
  encodeTraceRequest(spans(40));
  assert.equal(Buffer.compare(Buffer.from(a), copy), 0);
});

test('the HTTP/protobuf and gRPC exporters the gateway builds send through the encoder', async () => {
  for (const protocol of ['http', 'grpc']) {
    const settings = tracingSettings({ plugins: [{ name: 'otel', enabled: true, config: { collector_url: protocol === 'http' ? 'http://127.0.0.1:9/v1/traces' : '127.0.0.1:9', protocol } }] }, {})!;
    const sdk = startSdk(settings);
    assert.equal(sdk.encoder, 'gateway', `${protocol}: the exporter kept the SDK serializer`);
    await sdk.shutdown();
  }
});
