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
import type { AttributeSink } from './attribute-sink.ts';

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

/**
 * A span's attributes and name made when it is exported, not when it ends: the request path keeps
 * the facts (values and references it already holds) and the export turns a whole batch of them
 * into attributes at once, off the answer's path.
 */
export interface Deferred {
  /** Writes the span's attributes into `into`; returns its name (undefined: the name it started with). */
  settle(into: Api.Attributes): string | undefined;
}

/**
 * A Deferred whose attributes can also be written straight into the export's encoder, with no
 * attribute object made: `write` gives each attribute once, in the order `settle` sets them.
 */
export interface Writable extends Deferred {
  /** The span's name (undefined: the name it started with). */
  spanName(): string | undefined;
  write(out: AttributeSink): void;
}

const isWritable = (d: Deferred): d is Writable => typeof (d as Partial<Writable>).write === 'function';

/** The parent of one of the gateway's own spans: the span, and an API Context holding it (read only by a sampler that looks at the parent). */
export interface OwnParent {
  readonly span: Api.Span;
  readonly context: Api.Context;
}

/** A span as a parent, its API Context made only if something reads it. */
export class SpanParent implements OwnParent {
  readonly span: Api.Span;
  readonly #api: typeof Api;
  #context: Api.Context | undefined = undefined;

  constructor(api: typeof Api, span: Api.Span) {
    this.#api = api;
    this.span = span;
  }

  get context(): Api.Context {
    return (this.#context ??= this.#api.trace.setSpan(this.#api.ROOT_CONTEXT, this.span));
  }
}

/** Ends a span whose attributes `deferred` makes at export (a span not sampled just ends). */
export function endDeferred(span: Api.Span, deferred: Deferred): void {
  if (span instanceof LeanSpan) span.endDeferred(deferred);
  else span.end();
}

const NO_LINKS: Api.Link[] = [];
const NO_EVENTS: TimedEvent[] = [];
const NOT_ENDED: HrTime = [0, 0];
const NO_DURATION: HrTime = [-1, -1];
const UNSET: Api.SpanStatus = { code: 0 };

const isValue = (v: unknown): v is Api.AttributeValue => {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' || (Array.isArray(v) && v.every((x) => x == null || ['string', 'number', 'boolean'].includes(typeof x)));
};

export class LeanSpan implements Api.Span, ReadableSpan {
  readonly kind: Api.SpanKind;
  readonly parentSpanContext: Api.SpanContext | undefined;
  readonly startTime: HrTime;
  // Shared until set (most spans have no links or events, and end once): read-only to every reader.
  endTime: HrTime = NOT_ENDED;
  duration: HrTime = NO_DURATION;
  status: Api.SpanStatus = UNSET;
  ended = false;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly #context: Api.SpanContext;
  readonly #recorder: Recorder;
  /** Wall clock minus the performance clock at the start (as the SDK's span: times are read on the
   * monotonic clock and shown on the wall clock). */
  readonly #offset: number;
  readonly #attributes: Api.Attributes;
  #name: string;
  #deferred: Deferred | undefined = undefined;
  #links: Api.Link[] | undefined = undefined;
  #events: TimedEvent[] | undefined = undefined;

  constructor(recorder: Recorder, context: Api.SpanContext, name: string, kind: Api.SpanKind, parent: Api.SpanContext | undefined, attributes: Api.Attributes, startTime: Api.TimeInput | undefined) {
    this.#recorder = recorder;
    this.#context = context;
    this.#name = name;
    this.kind = kind;
    this.parentSpanContext = parent;
    this.#attributes = attributes;
    const now = performance.now();
    this.#offset = Date.now() - (ORIGIN + now);
    this.startTime = this.#time(startTime, now);
  }

  get links(): Api.Link[] {
    return this.#links ?? NO_LINKS;
  }

  get events(): TimedEvent[] {
    return this.#events ?? NO_EVENTS;
  }

  get name(): string {
    if (this.#deferred) this.#settle();
    return this.#name;
  }

  get attributes(): Api.Attributes {
    if (this.#deferred) this.#settle();
    return this.#attributes;
  }

  /**
   * For the encoder: the record that writes all of this span's attributes when nothing else set
   * one (else undefined: read `attributes` and `name`). Its name, if it gives none, is `ownName`.
   */
  get writable(): Writable | undefined {
    const d = this.#deferred;
    if (!d || !isWritable(d)) return undefined;
    for (const key in this.#attributes) if (Object.hasOwn(this.#attributes, key)) return undefined;
    return d;
  }

  /** The name as started or updated, before the record's. */
  get ownName(): string {
    return this.#name;
  }

  #settle(): void {
    const d = this.#deferred!;
    this.#deferred = undefined;
    const name = d.settle(this.#attributes);
    if (name !== undefined) this.#name = name;
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
    if (!this.ended && key && value != null && isValue(value)) this.#attributes[key] = Array.isArray(value) ? value.slice() as Api.AttributeValue : value;
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
    (this.#events ??= []).push({ name, time: this.#time(at, performance.now()), ...(!isTime && attributesOrTime && { attributes: { ...(attributesOrTime as Api.Attributes) } }), droppedAttributesCount: 0 });
    return this;
  }

  addLink(link: Api.Link): this {
    if (!this.ended) (this.#links ??= []).push(link);
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
    if (!this.ended) this.#name = name;
    return this;
  }

  /** Ends the span; its attributes and name are made by `deferred` when the export reads them. */
  endDeferred(deferred: Deferred, endTime?: Api.TimeInput): void {
    if (this.ended) return;
    this.#deferred = deferred;
    this.end(endTime);
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
  /** Whether the sampler may look at the parent (the parent-based ones): the others decide on the trace id alone. */
  readonly #readsParent: boolean;

  constructor(api: typeof Api, sampler: Sampler, processor: SpanProcessor, resource: Resource, scopeName: string) {
    this.#api = api;
    this.#sampler = sampler;
    this.#recorder = { resource, processor, scope: { name: scopeName, version: undefined, schemaUrl: undefined } };
    this.#readsParent = !/^(AlwaysOnSampler|AlwaysOffSampler|TraceIdRatioBased\{)/.test(String(sampler));
  }

  startSpan(name: string, options: Api.SpanOptions = {}, context: Api.Context = this.#api.ROOT_CONTEXT): Api.Span {
    const api = this.#api;
    const parent = options.root ? undefined : api.trace.getSpanContext(context);
    const valid = parent && api.trace.isSpanContextValid(parent) ? parent : undefined;
    const attributes: Api.Attributes = {};
    if (options.attributes) {
      for (const key in options.attributes) {
        const v = options.attributes[key];
        if (key && v != null && isValue(v)) attributes[key] = v;
      }
    }
    const links = options.links ?? NO_LINKS;
    const span = this.#start(name, options.kind ?? api.SpanKind.INTERNAL, valid, context, attributes, options.startTime, links);
    if (span instanceof LeanSpan) for (const l of links) span.addLink(l);
    return span;
  }

  /**
   * One of the gateway's own spans: `attributes` is the caller's object, built for this span with
   * plain values, so it is taken as it is (not copied, not checked), and the parent is given as a
   * span context (no API Context is made unless the sampler reads the parent).
   */
  startOwn(name: string, kind: Api.SpanKind, parent: OwnParent | undefined, attributes: Api.Attributes, startTime?: number): Api.Span {
    const context = parent && this.#readsParent ? parent.context : this.#api.ROOT_CONTEXT;
    return this.#start(name, kind, parent?.span.spanContext(), context, attributes, startTime, NO_LINKS);
  }

  #start(name: string, kind: Api.SpanKind, parent: Api.SpanContext | undefined, context: Api.Context, attributes: Api.Attributes, startTime: Api.TimeInput | undefined, links: Api.Link[]): Api.Span {
    const api = this.#api;
    const traceId = parent?.traceId ?? randomHex(16);
    const spanId = randomHex(8);
    const sampling = this.#sampler.shouldSample(context, traceId, name, kind, attributes, links);
    const traceState = sampling.traceState ?? parent?.traceState;
    const sampled = sampling.decision === api.SamplingDecision.RECORD_AND_SAMPLED;
    const spanContext: Api.SpanContext = traceState
      ? { traceId, spanId, traceFlags: sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE, traceState }
      : { traceId, spanId, traceFlags: sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE };
    if (sampling.decision === api.SamplingDecision.NOT_RECORD) return api.trace.wrapSpanContext(spanContext);
    if (sampling.attributes) Object.assign(attributes, sampling.attributes);
    return new LeanSpan(this.#recorder, spanContext, name, kind, parent, attributes, startTime);
  }
}
