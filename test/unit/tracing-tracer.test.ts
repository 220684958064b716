// The gateway's lean tracer (proxy/src/tracing/tracer.ts) against the SDK's own tracer: the same
// calls, made on both, give the span processor the same spans (names, kinds, attributes, status,
// parents, flags, resource and scope; only the random ids and the clock readings differ), and both
// sample alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as api from '@opentelemetry/api';
import { AlwaysOffSampler, InMemorySpanExporter, ParentBasedSampler, AlwaysOnSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler, TracerProvider, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { endDeferred, LeanTracer, SpanParent, type Deferred } from '../../proxy/src/tracing/tracer.ts';

const resource = resourceFromAttributes({ 'service.name': 'skybridge-test' });

interface Pair {
  sdk: { tracer: api.Tracer; spans: () => ReadableSpan[] };
  lean: { tracer: LeanTracer; spans: () => ReadableSpan[] };
}

function pair(sampler: () => Sampler): Pair {
  const sdkOut = new InMemorySpanExporter();
  const provider = new TracerProvider({ resource, sampler: sampler(), spanProcessors: [new SimpleSpanProcessor({ exporter: sdkOut })] });
  const leanOut = new InMemorySpanExporter();
  return {
    sdk: { tracer: provider.getTracer('skybridge'), spans: () => sdkOut.getFinishedSpans() },
    lean: { tracer: new LeanTracer(api, sampler(), new SimpleSpanProcessor({ exporter: leanOut }), resource, 'skybridge'), spans: () => leanOut.getFinishedSpans() },
  };
}

/** The gateway's usual calls: a server span continuing a remote parent, a stage span given its start, a client attempt that fails. */
function request(tracer: Pick<api.Tracer, 'startSpan'>, remote: api.SpanContext | undefined): void {
  const parent = remote ? api.trace.setSpanContext(api.ROOT_CONTEXT, remote) : api.ROOT_CONTEXT;
  const started = performance.now() - 5;
  const span = tracer.startSpan('chat', { kind: api.SpanKind.SERVER, startTime: started, attributes: { 'gen_ai.operation.name': 'chat', 'url.path': '/v1/chat/completions', dropped: undefined } }, parent);
  const context = api.trace.setSpan(parent, span);
  const stage = tracer.startSpan('stage plan', { startTime: performance.now(), attributes: { 'skybridge.stage': 'plan' } }, context);
  stage.setAttribute('skybridge.stage.answered', true);
  stage.end(performance.now());
  const attempt = tracer.startSpan('chat gpt-4o', { kind: api.SpanKind.CLIENT, attributes: { 'skybridge.attempt': 0, 'gen_ai.request.model': 'gpt-4o' } }, context);
  attempt.setAttribute('http.response.status_code', 503);
  attempt.setStatus({ code: api.SpanStatusCode.ERROR, message: 'upstream unavailable' });
  attempt.setStatus({ code: api.SpanStatusCode.UNSET });
  attempt.end();
  span.setAttributes({ 'gen_ai.usage.input_tokens': 12, 'gen_ai.response.finish_reasons': ['stop'], 'skybridge.cost.usd': 0.0125, 'skybridge.cache.hit': false });
  span.updateName('chat gpt-4o');
  span.setStatus({ code: api.SpanStatusCode.OK });
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'after OK: ignored' });
  span.end();
  // Changes after the end are ignored by both.
  span.setAttribute('late', 1);
}

/** What must match: everything but the random ids and the clock. */
function shape(spans: ReadableSpan[]) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
  return spans.map((s) => ({
    name: s.name,
    kind: s.kind,
    attributes: s.attributes,
    status: s.status,
    parent: s.parentSpanContext ? (byId.get(s.parentSpanContext.spanId) ?? `remote ${s.parentSpanContext.spanId}`) : undefined,
    parentRemote: s.parentSpanContext?.isRemote,
    sameTrace: s.spanContext().traceId === spans.at(-1)!.spanContext().traceId,
    flags: s.spanContext().traceFlags,
    traceState: s.spanContext().traceState?.serialize(),
    resource: s.resource.attributes,
    scope: { name: s.instrumentationScope.name, version: s.instrumentationScope.version, schemaUrl: s.instrumentationScope.schemaUrl },
    links: s.links.length,
    events: s.events.length,
    dropped: [s.droppedAttributesCount, s.droppedEventsCount, s.droppedLinksCount],
    ended: s.ended,
    durationOk: s.duration[0] >= 0 && s.duration[1] >= 0,
  }));
}

test('the lean tracer hands the processor the spans the SDK tracer would: fresh trace and a remote parent with tracestate', () => {
  const p = pair(() => new ParentBasedSampler({ root: new AlwaysOnSampler() }));
  const remote: api.SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true, traceState: api.createTraceState('vendor=abc') };
  for (const r of [undefined, remote]) {
    request(p.sdk.tracer, r);
    request(p.lean.tracer, r);
  }
  const sdk = shape(p.sdk.spans());
  const lean = shape(p.lean.spans());
  assert.equal(lean.length, 6);
  assert.deepEqual(lean, sdk);
  // The remote parent's trace is continued, its tracestate kept.
  const continued = p.lean.spans().filter((s) => s.spanContext().traceId === remote.traceId);
  assert.equal(continued.length, 3);
  assert.ok(continued.every((s) => s.spanContext().traceState?.serialize() === 'vendor=abc'));
});

/** The request of `request()` as the gateway's stages make it: own spans, attributes and names made at export. */
function ownRequest(tracer: LeanTracer, remote: api.SpanContext | undefined): void {
  const parent = remote ? new SpanParent(api, api.trace.wrapSpanContext(remote)) : undefined;
  const started = performance.now() - 5;
  const span = tracer.startOwn('chat', api.SpanKind.SERVER, parent, {}, started);
  const request = new SpanParent(api, span);
  const stage = tracer.startOwn('stage plan', api.SpanKind.INTERNAL, request, { 'skybridge.stage': 'plan' }, performance.now());
  stage.setAttribute('skybridge.stage.answered', true);
  stage.end(performance.now());
  const attempt = tracer.startOwn('chat', api.SpanKind.CLIENT, request, {});
  attempt.setStatus({ code: api.SpanStatusCode.ERROR, message: 'upstream unavailable' });
  attempt.setStatus({ code: api.SpanStatusCode.UNSET });
  endDeferred(attempt, settles({ 'skybridge.attempt': 0, 'gen_ai.request.model': 'gpt-4o', 'http.response.status_code': 503 }, 'chat gpt-4o'));
  span.setStatus({ code: api.SpanStatusCode.OK });
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'after OK: ignored' });
  endDeferred(
    span,
    settles({ 'gen_ai.operation.name': 'chat', 'url.path': '/v1/chat/completions', 'gen_ai.usage.input_tokens': 12, 'gen_ai.response.finish_reasons': ['stop'], 'skybridge.cost.usd': 0.0125, 'skybridge.cache.hit': false }, 'chat gpt-4o'),
  );
  span.setAttribute('late', 1);
}

let settled = 0;
function settles(attributes: api.Attributes, name: string): Deferred {
  return {
    settle(into) {
      settled++;
      Object.assign(into, attributes);
      return name;
    },
  };
}

test("the gateway's own spans, their attributes and names made at export, reach the processor as the SDK tracer's spans", () => {
  for (const sampler of [() => new ParentBasedSampler({ root: new AlwaysOnSampler() }), () => new AlwaysOnSampler()]) {
    const p = pair(sampler);
    const remote: api.SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true, traceState: api.createTraceState('vendor=abc') };
    settled = 0;
    for (const r of [undefined, remote]) {
      request(p.sdk.tracer, r);
      ownRequest(p.lean.tracer, r);
    }
    // Nothing is made until the export reads the spans, and then once per span.
    assert.equal(settled, 0);
    const sdk = shape(p.sdk.spans());
    const lean = shape(p.lean.spans());
    assert.equal(settled, 4);
    shape(p.lean.spans());
    assert.equal(settled, 4);
    // The SDK request sets its start attributes first; the attribute order is not what is compared here.
    const sorted = (xs: ReturnType<typeof shape>) => xs.map((x) => ({ ...x, attributes: Object.fromEntries(Object.entries(x.attributes).sort(([a], [b]) => a.localeCompare(b))) }));
    assert.deepEqual(sorted(lean), sorted(sdk));
  }
  // A parent-based sampler sees the parent of an own span: an unsampled remote parent's children are not recorded.
  const p = pair(() => new ParentBasedSampler({ root: new AlwaysOnSampler() }));
  const unsampled = new SpanParent(api, api.trace.wrapSpanContext({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 0, isRemote: true }));
  const span = p.lean.tracer.startOwn('chat', api.SpanKind.SERVER, unsampled, {});
  assert.equal(span.isRecording(), false);
  assert.equal(span.spanContext().traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  const child = p.lean.tracer.startOwn('chat', api.SpanKind.CLIENT, new SpanParent(api, span), {});
  assert.equal(child.spanContext().traceFlags, 0);
  endDeferred(child, settles({}, 'x'));
  endDeferred(span, settles({}, 'x'));
  assert.equal(p.lean.spans().length, 0);
});

test('times: a start given on the performance clock is kept, the end follows it, on the wall clock', () => {
  const p = pair(() => new AlwaysOnSampler());
  const before = Date.now();
  const started = performance.now() - 40;
  const span = p.lean.tracer.startSpan('x', { startTime: started });
  span.end(started + 25);
  const [s] = p.lean.spans();
  const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
  assert.ok(Math.abs(ms(s.startTime) - (before - 40)) < 20, `start ${ms(s.startTime)} vs ${before - 40}`);
  assert.ok(Math.abs(ms(s.duration) - 25) < 0.01, `duration ${ms(s.duration)}`);
  assert.ok(s.startTime[1] < 1e9 && s.endTime[1] < 1e9);
});

test('sampling is the SDK sampler\'s: unsampled spans record nothing but carry their context; a child follows its parent', () => {
  for (const [sampler, expected] of [
    [() => new AlwaysOffSampler(), 0],
    [() => new ParentBasedSampler({ root: new AlwaysOffSampler() }), 0],
    [() => new AlwaysOnSampler(), 2],
  ] as const) {
    const p = pair(sampler);
    const root = p.lean.tracer.startSpan('root');
    const child = p.lean.tracer.startSpan('child', {}, api.trace.setSpan(api.ROOT_CONTEXT, root));
    assert.equal(child.spanContext().traceId, root.spanContext().traceId);
    assert.match(root.spanContext().spanId, /^[0-9a-f]{16}$/);
    assert.match(root.spanContext().traceId, /^[0-9a-f]{32}$/);
    child.end();
    root.end();
    assert.equal(p.lean.spans().length, expected);
    assert.equal(root.isRecording(), false);
    assert.equal(root.spanContext().traceFlags, expected ? 1 : 0);
  }
  // A ratio sampler decides on the trace id, as the SDK's tracer does with the same sampler.
  const ratio = pair(() => new TraceIdRatioBasedSampler(0.5));
  const remote = (traceId: string) => api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId, spanId: '00f067aa0ba902b7', traceFlags: 0, isRemote: true });
  for (const id of ['00000000000000000000000000000001', 'ffffffffffffffffffffffffffffffff', '7fffffff00000000000000000000abcd']) {
    ratio.sdk.tracer.startSpan('r', {}, remote(id)).end();
    ratio.lean.tracer.startSpan('r', {}, remote(id)).end();
  }
  assert.deepEqual(ratio.lean.spans().map((s) => s.spanContext().traceId), ratio.sdk.spans().map((s) => s.spanContext().traceId));
});

test('ids are unique across many spans', () => {
  const p = pair(() => new AlwaysOnSampler());
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) ids.add(p.lean.tracer.startSpan('s').spanContext().spanId);
  assert.equal(ids.size, 2000);
});
