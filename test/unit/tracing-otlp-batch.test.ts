// The OTLP bytes of a batch of the gateway's own spans, made by its tracing stage as requests run
// (plain, governed and cached with a remote parent, failed over, streamed, failed, an agent's, with
// content captured), pinned to what the encoder wrote for them when it was recorded
// (test/unit/fixtures/tracing-otlp-batch.hex): a change to how spans are made or encoded must leave
// the collector's bytes as they were. The random ids and the clock readings are the only parts
// replaced (ids by their order of appearance, times by zeros) before comparing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as api from '@opentelemetry/api';
import { AlwaysOnSampler, ParentBasedSampler, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { RequestContext, type ContextServices } from '../../proxy/src/pipeline/context.ts';
import type { Outcome } from '../../proxy/src/pipeline/outcome.ts';
import type { Stage } from '../../proxy/src/pipeline/stage.ts';
import type { Snapshot } from '../../proxy/src/config/snapshot.ts';
import type { Target } from '../../proxy/src/pipeline/target.ts';
import { LeanTracer } from '../../proxy/src/tracing/tracer.ts';
import { encodeTraceRequest } from '../../proxy/src/tracing/otlp-encode.ts';
import { initTracingFields, tracedStage, tracingStage } from '../../proxy/src/tracing/stage.ts';
import type { Tracing } from '../../proxy/src/tracing/service.ts';
import type { TracingSettings } from '../../proxy/src/tracing/settings.ts';

const FIXTURE = new URL('./fixtures/tracing-otlp-batch.hex', import.meta.url);

function batch(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = { onStart: () => undefined, onEnd: (s) => void ended.push(s), forceFlush: () => Promise.resolve(), shutdown: () => Promise.resolve() };
  const resource = resourceFromAttributes({ 'service.name': 'skybridge', 'deployment.environment': 'tëst' });
  const tracer = new LeanTracer(api, new ParentBasedSampler({ root: new AlwaysOnSampler() }), processor, resource, 'skybridge');
  const sdk = { api, tracer, encoder: 'gateway', flush: () => Promise.resolve(), shutdown: () => Promise.resolve() };
  const tracing = (captureContent: boolean) => ({ settings: { captureContent } as TracingSettings, sdk, live: new Map() }) as unknown as Tracing;
  const plain = tracing(false);
  const content = tracing(true);
  const services = { initContext: initTracingFields } as unknown as ContextServices;
  const target = (provider: string, model: string) => ({ provider: { name: provider }, model }) as unknown as Target;
  const stage = (t: Tracing, name: string, before: Stage['before'], idle?: boolean): Stage => (tracedStage as (s: Stage, t: Tracing) => Stage)({ name, before, ...(idle && { idle: () => true }) }, t);
  const answer = (model: string, reason: string) => ({
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, “world”' }, finish_reason: reason }],
    usage: { prompt_tokens: 12, completion_tokens: 64, total_tokens: 76 },
  });
  const request = (t: Tracing, operation: string, requestId: string, headers: Record<string, string> = {}, extra: Partial<RequestContext> = {}) => {
    const ctx = new RequestContext({ services, snapshot: {} as Snapshot, operation, requestId, headers, http: { req: { method: 'POST', url: '/v1/chat/completions?x=1' } } as never });
    Object.assign(ctx, extra);
    return ctx;
  };

  // 1. Plain: no key, no rule, an answer relayed as text with its parse.
  {
    const traced = tracingStage(plain);
    const ctx = request(plain, 'chat', 'req-plain');
    void traced.before!(ctx);
    ctx.scope = { kind: 'model', model: 'gpt-4o', fallbacks: undefined, body: undefined };
    ctx.requestType = 'chat_completion';
    void stage(plain, 'identify', () => undefined, true).before!(ctx);
    const a = ctx.attempts!.start(target('openai', 'gpt-4o'), 0, 0);
    a.end(200, 'key-1');
    Object.assign(ctx, { provider: 'openai', model: 'gpt-4o', keyId: 'key-1', usage: answer('gpt-4o', 'stop').usage, costMemo: 0.00067 });
    const body = answer('gpt-4o-2024-08-06', 'stop');
    traced.after!(ctx, { kind: 'text', status: 200, text: JSON.stringify(body), parsed: body } as Outcome);
  }
  // 2. A remote parent with tracestate, a virtual key with team and customer, routing rules, a cache hit answering from its stage.
  {
    const traced = tracingStage(plain);
    const ctx = request(plain, 'chat', 'req-governed', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=abc,other=1' }, {
      vk: { record: { id: 'vk-1', name: 'Team key', team_id: 'team-1', customer_id: undefined }, team: { id: 'team-1', name: 'Search', customer_id: 'cust-1' }, customer: { id: 'cust-1', name: 'Acme' } },
      routing: { trail: [{ matched: true, ruleId: 'r-cheap' }, { matched: false, ruleId: 'r-other' }, { matched: true, ruleId: 'r-cheap' }, { matched: true, ruleId: 'r-eu' }], ruleName: 'cheap' },
    } as never);
    void traced.before!(ctx);
    ctx.scope = { kind: 'model', model: 'gpt-4o-mini', fallbacks: undefined, body: undefined };
    ctx.requestType = 'chat_completion';
    const cached = answer('gpt-4o-mini', 'length');
    const hit = { kind: 'json', status: 200, value: cached } as Outcome;
    void stage(plain, 'cache', () => hit).before!(ctx);
    Object.assign(ctx, { provider: 'openai', model: 'gpt-4o-mini', usage: { ...cached.usage, prompt_tokens_details: { cached_tokens: 8 } }, costMemo: 0.5, finalExtra: { cache_debug: { cache_hit: true, hit_type: 'direct' } } });
    traced.after!(ctx, hit);
  }
  // 3. Failed over: the primary answers 503, the fallback (after a retry) answers; a stage that went async.
  {
    const traced = tracingStage(plain);
    const ctx = request(plain, 'chat', 'req-fallback');
    void traced.before!(ctx);
    ctx.scope = { kind: 'model', model: 'claude-3-5-sonnet', fallbacks: undefined, body: undefined };
    ctx.requestType = 'chat_completion';
    void stage(plain, 'limits', () => undefined).before!(ctx);
    const first = ctx.attempts!.start(target('anthropic', 'claude-3-5-sonnet'), 0, 0);
    first.end(503, 'key-a', { type: 'provider_error', message: 'upstream said: “unavailable” ✗', status: 503 } as never);
    const second = ctx.attempts!.start(target('bedrock', 'anthropic.claude-3-5-sonnet'), 1, 1);
    second.end(200, undefined);
    Object.assign(ctx, { provider: 'bedrock', model: 'anthropic.claude-3-5-sonnet', fallbackIndex: 1, retries: 1, usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }, costMemo: 1.25e-7 });
    traced.after!(ctx, { kind: 'json', status: 200, value: { id: 'msg_1', model: 'claude-3-5-sonnet-20241022', stop_reason: 'end_turn' } } as Outcome);
  }
  // 4. Streamed: the taps read relayed chunks.
  {
    const traced = tracingStage(plain);
    const ctx = request(plain, 'chat', 'req-stream');
    void traced.before!(ctx);
    ctx.scope = { kind: 'model', model: 'gpt-4o', fallbacks: undefined, body: undefined };
    ctx.requestType = 'chat_completion_stream';
    ctx.attempts!.start(target('openai', 'gpt-4o'), 0, 0).end(200, 'key-1');
    traced.tap!(ctx, { json: '{"id":"c1","model":"gpt-4o-2024-08-06","choices":[{"delta":{"content":"Hi"}}]}' });
    traced.tap!(ctx, { json: '{"id":"c1","model":"gpt-4o-2024-08-06","choices":[{"delta":{},"finish_reason":"stop"}]}' });
    Object.assign(ctx, { provider: 'openai', model: 'gpt-4o', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, costMemo: 0 });
    traced.after!(ctx, { kind: 'stream', status: 200 } as unknown as Outcome);
  }
  // 5. Failed: a stage throws, the request answers 502.
  {
    const traced = tracingStage(plain);
    const ctx = request(plain, 'embeddings', 'req-failed');
    void traced.before!(ctx);
    ctx.requestType = 'embedding';
    assert.throws(() =>
      stage(plain, 'plan', () => {
        throw Object.assign(new Error('no route to a provider'), { type: 'no_provider', status: 502 });
      }).before!(ctx),
    );
    Object.assign(ctx, { status: 502, error: { type: 'no_provider', code: 'route_missing', status: 502, message: 'no route to a provider' } });
    traced.after!(ctx, { kind: 'error', status: 502 } as unknown as Outcome);
  }
  // 6. An agent request's totals, with content captured.
  {
    const traced = tracingStage(content);
    const ctx = request(content, 'responses', 'req-agent', {}, { parentRequestId: 'req-parent', request: { messages: [{ role: 'user', content: 'Wie spät ist es?' }] } } as never);
    void traced.before!(ctx);
    ctx.scope = { kind: 'model', model: 'gpt-4.1', fallbacks: undefined, body: undefined };
    ctx.requestType = 'responses';
    ctx.attempts!.start(target('azure', 'gpt-4.1'), 0, 0).end(200, 'key-z');
    Object.assign(ctx, { provider: 'azure', model: 'gpt-4.1', turns: { turns: 3, promptTokens: 300, completionTokens: 40, cost: 0.0031, unpriced: false } });
    const body = answer('gpt-4.1', 'stop');
    traced.after!(ctx, { kind: 'json', status: 200, value: body } as Outcome);
  }
  return ended;
}

/** The encoding with its random ids replaced by their order of appearance and its times by zeros. */
function stable(bytes: Uint8Array, spans: readonly ReadableSpan[]): string {
  const out = Buffer.from(bytes);
  const ids: string[] = [];
  for (const s of spans) {
    for (const id of [s.spanContext().traceId, s.spanContext().spanId, s.parentSpanContext?.spanId]) if (id && !ids.includes(id)) ids.push(id);
  }
  const replace = (from: Buffer, to: Buffer) => {
    for (let at = out.indexOf(from); at >= 0; at = out.indexOf(from, at + to.length)) to.copy(out, at);
  };
  ids.forEach((id, i) => replace(Buffer.from(id, 'hex'), Buffer.alloc(id.length / 2, i + 1)));
  const nanos = (t: api.HrTime) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]));
    return b;
  };
  for (const s of spans) for (const t of [s.startTime, s.endTime]) replace(nanos(t), Buffer.alloc(8));
  return out.toString('hex').replace(/(.{128})/g, '$1\n').trim();
}

test('a batch of the gateway\'s spans encodes to the recorded bytes (and to the SDK serializer\'s)', () => {
  const spans = batch();
  assert.equal(spans.length, 14);
  const mine = encodeTraceRequest(spans);
  const got = stable(mine, spans);
  const want = readFileSync(FIXTURE, 'utf8').trim();
  const gotLines = got.split('\n');
  const wantLines = want.split('\n');
  const first = gotLines.findIndex((l, i) => l !== wantLines[i]);
  assert.equal(first === -1 && gotLines.length === wantLines.length, true, `the bytes differ from line ${first + 1}: got ${gotLines[first]}, recorded ${wantLines[first]}`);
  // The SDK serializer reads the same spans (their attributes made on reading) to the same bytes.
  assert.equal(Buffer.compare(Buffer.from(mine), Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!)), 0);
});
