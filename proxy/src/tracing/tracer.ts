// The tracer the gateway's spans are made with: it samples with the SDK's sampler and hands each
// ended span to the SDK's span processor (batching, the OTLP exporters and their serializer), so the
// collector receives what the SDK's own tracer would send. What it leaves out is the SDK tracer's
// per-span work that this gateway never needs: attribute sanitising and limit bookkeeping on every
// set (the gateway sets a fixed set of plain values), self-metrics, the diag checks, a clock offset
// per span and a Math.random id per call. Measured in bench/tracing-paired.ts (docs/observability.md).
import { randomFillSync } from 'node:crypto';
import type * as Api from '@opentelemetry/api';
import type { ReadableSpan, Sampler, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace';
import type { Resource } from '@opentelemetry/resources';

type HrTime = [number, number];

/** What a span needs from the tracer that made it. */
interface Recorder {
  readonly resource: Resource;
  readonly scope: { readonly name: string; readonly version?: string; readonly schemaUrl?: string };
  readonly processor: SpanProcessor;
}

// Random ids from a pool refilled 4 KiB at a time (one system call per ~170 spans).
const POOL = Buffer.allocUnsafe(4096);
let at = POOL.length;

function randomHex(bytes: number): string {
  if (at + bytes > POOL.length) {
    randomFillSync(POOL);
    at = 0;
  }
  const start = at;
  at += bytes;
  for (let i = start; i < at; i++) if (POOL[i] !== 0) return POOL.toString('hex', start, at);
  // All zero is the invalid id (W3C): as the SDK does, make it valid.
  POOL[at - 1] = 1;
  return POOL.toString('hex', start, at);
}

const ORIGIN = performance.timeOrigin;

/** Epoch milliseconds as [seconds, nanoseconds]. */
function hrTime(epochMs: number): HrTime {
  const s = Math.floor(epochMs / 1000);
  const ns = Math.round((epochMs - s * 1000) * 1e6);
  return ns >= 1e9 ? [s + 1, ns - 1e9] : [s, ns];
}

const isValue = (v: unknown): v is Api.AttributeValue => {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' || (Array.isArray(v) && v.every((x) => x == null || ['string', 'number', 'boolean'].includes(typeof x)));
};

export class LeanSpan implements Api.Span, ReadableSpan {
  readonly kind: Api.SpanKind;
  readonly parentSpanContext: Api.SpanContext | undefined;
  readonly attributes: Api.Attributes;
  readonly links: Api.Link[] = [];
  readonly events: TimedEvent[] = [];
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  duration: HrTime = [-1, -1];
  name: string;
  status: Api.SpanStatus = { code: 0 };
  ended = false;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly #context: Api.SpanContext;
  readonly #recorder: Recorder;
  /** Wall clock minus the performance clock at the start (as the SDK's span: times are read on the
   * monotonic clock and shown on the wall clock). */
  readonly #offset: number;

  constructor(recorder: Recorder, context: Api.SpanContext, name: string, kind: Api.SpanKind, parent: Api.SpanContext | undefined, attributes: Api.Attributes, startTime: Api.TimeInput | undefined) {
    this.#recorder = recorder;
    this.#context = context;
    this.name = name;
    this.kind = kind;
    this.parentSpanContext = parent;
    this.attributes = attributes;
    const now = performance.now();
    this.#offset = Date.now() - (ORIGIN + now);
    this.startTime = this.#time(startTime, now);
  }

  get resource(): Resource {
    return this.#recorder.resource;
  }

  get instrumentationScope(): Recorder['scope'] {
    return this.#recorder.scope;
  }

  spanContext(): Api.SpanContext {
    return this.#context;
  }

  setAttribute(key: string, value: Api.AttributeValue): this {
    if (!this.ended && key && value != null && isValue(value)) this.attributes[key] = Array.isArray(value) ? value.slice() as Api.AttributeValue : value;
    return this;
  }

  setAttributes(attributes: Api.Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]!);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Api.Attributes | Api.TimeInput, time?: Api.TimeInput): this {
    if (this.ended) return this;
    const isTime = typeof attributesOrTime === 'number' || attributesOrTime instanceof Date || Array.isArray(attributesOrTime);
    const at = isTime ? (attributesOrTime as Api.TimeInput) : time;
    this.events.push({ name, time: this.#time(at, performance.now()), ...(!isTime && attributesOrTime && { attributes: { ...(attributesOrTime as Api.Attributes) } }), droppedAttributesCount: 0 });
    return this;
  }

  addLink(link: Api.Link): this {
    if (!this.ended) this.links.push(link);
    return this;
  }

  addLinks(links: Api.Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }

  setStatus(status: Api.SpanStatus): this {
    // As the SDK: UNSET changes nothing, OK is final, a message only with ERROR.
    if (this.ended || status.code === 0 || this.status.code === 1) return this;
    this.status = status.code === 2 && typeof status.message === 'string' ? { code: 2, message: status.message } : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: Api.TimeInput): void {
    if (this.ended) return;
    let end = this.#time(endTime, performance.now());
    let d = duration(this.startTime, end);
    if (d[0] < 0) {
      end = [this.startTime[0], this.startTime[1]];
      d = [0, 0];
    }
    this.endTime = end;
    this.duration = d;
    this.ended = true;
    this.#recorder.processor.onEnd(this);
  }

  /** A time input as the SDK reads it: a number not after performance.now() is on the performance
   * clock (the offset applies), a larger one epoch milliseconds; a Date or an HrTime as they are. */
  #time(t: Api.TimeInput | undefined, perfNow: number): HrTime {
    if (t === undefined) return hrTime(ORIGIN + perfNow + this.#offset);
    if (typeof t === 'number') return hrTime(t <= perfNow ? ORIGIN + t + this.#offset : t);
    if (t instanceof Date) return hrTime(t.getTime());
    return t;
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Api.Exception, time?: Api.TimeInput): void {
    const e = typeof exception === 'string' ? { message: exception } : exception;
    const attributes: Api.Attributes = {};
    const type = 'code' in e && e.code !== undefined ? String(e.code) : 'name' in e ? e.name : undefined;
    if (type) attributes['exception.type'] = type;
    if (e.message) attributes['exception.message'] = e.message;
    if ('stack' in e && e.stack) attributes['exception.stacktrace'] = e.stack;
    this.addEvent('exception', attributes, time);
  }
}

function duration(start: HrTime, end: HrTime): HrTime {
  let s = end[0] - start[0];
  let ns = end[1] - start[1];
  if (ns < 0) {
    s -= 1;
    ns += 1e9;
  }
  return [s, ns];
}

/**
 * startSpan as the API's Tracer has it, over the SDK's sampler and span processor. A span that is
 * not sampled is the API's non-recording span carrying its context (so `traceparent` still goes
 * on), as the SDK does. No startActiveSpan: there is no context manager (spans find their parent by
 * request id, service.ts).
 */
export class LeanTracer {
  readonly #api: typeof Api;
  readonly #sampler: Sampler;
  readonly #recorder: Recorder;

  constructor(api: typeof Api, sampler: Sampler, processor: SpanProcessor, resource: Resource, scopeName: string) {
    this.#api = api;
    this.#sampler = sampler;
    this.#recorder = { resource, processor, scope: { name: scopeName, version: undefined, schemaUrl: undefined } };
  }

  startSpan(name: string, options: Api.SpanOptions = {}, context: Api.Context = this.#api.ROOT_CONTEXT): Api.Span {
    const api = this.#api;
    const parent = options.root ? undefined : api.trace.getSpanContext(context);
    const valid = parent && api.trace.isSpanContextValid(parent) ? parent : undefined;
    const traceId = valid?.traceId ?? randomHex(16);
    const spanId = randomHex(8);
    const kind = options.kind ?? api.SpanKind.INTERNAL;
    const attributes: Api.Attributes = {};
    if (options.attributes) {
      for (const key in options.attributes) {
        const v = options.attributes[key];
        if (key && v != null && isValue(v)) attributes[key] = v;
      }
    }
    const sampling = this.#sampler.shouldSample(context, traceId, name, kind, attributes, options.links ?? []);
    const traceState = sampling.traceState ?? valid?.traceState;
    const sampled = sampling.decision === api.SamplingDecision.RECORD_AND_SAMPLED;
    const spanContext: Api.SpanContext = { traceId, spanId, traceFlags: sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE, ...(traceState && { traceState }) };
    if (sampling.decision === api.SamplingDecision.NOT_RECORD) return api.trace.wrapSpanContext(spanContext);
    if (sampling.attributes) Object.assign(attributes, sampling.attributes);
    const span = new LeanSpan(this.#recorder, spanContext, name, kind, valid, attributes, options.startTime);
    for (const l of options.links ?? []) span.addLink(l);
    return span;
  }

}
