// Tracing as a stage and hooks, never inside the runner: the tracing stage runs first (its `after`
// last) and holds the request's span; every other stage's `before` is wrapped in a span of its own
// (identify, plan, limits, the cache lookup, the MCP stage with its agent turns), and each upstream
// attempt gets a client span through invoke's AttemptWatcher, whose context goes upstream as
// `traceparent`. A request whose client sent a valid `traceparent` continues that trace.
// On the answer's path only ids, times and the facts the context holds are taken: the request and
// attempt spans' attributes are made at export (attributes.ts RequestRecord, AttemptRecord).
import type { Span } from '@opentelemetry/api';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Stage } from '../pipeline/stage.ts';
import type { AttemptWatch, AttemptWatcher } from '../pipeline/invoke.ts';
import type { Target } from '../pipeline/target.ts';
import type { GatewayError } from '../unified/errors.ts';
import { AttemptRecord, genAiOperation, RequestRecord, type StreamFacts } from './attributes.ts';
import { parseTraceparent, traceHeaders } from './traceparent.ts';
import { endDeferred, SpanParent, type OwnParent } from './tracer.ts';
import type { Live, Tracing, TracingService } from './service.ts';

declare module '../pipeline/context.ts' {
  interface ContextServices {
    /** Present on every gateway; does nothing (and loads nothing) while tracing is off. */
    tracing?: TracingService;
  }
  interface RequestContext {
    /** The request's span, when tracing is on for its snapshot. */
    trace: RequestTrace | undefined;
    /** Watches the upstream attempts (pipeline/invoke.ts). */
    attempts: AttemptWatcher | undefined;
  }
}

/**
 * A traced request: its span (the parent of its stage and attempt spans), the stage running now,
 * whose span is made only when something needs it, and what the stream taps saw. It watches the
 * request's upstream attempts itself (no watcher object per request).
 */
export class RequestTrace extends SpanParent implements Live, AttemptWatcher {
  readonly #t: Tracing;
  /** Whether the request is sampled (its span records). */
  readonly recording: boolean;
  readonly #operation: string;
  /** What the stream taps saw. */
  facts: StreamFacts | undefined = undefined;
  /** The stage whose `before` runs now (its span's name and the stage's), and when it started. */
  #stageName: string | undefined = undefined;
  #stage = '';
  #stageStarted = 0;
  #stageSpan: SpanParent | undefined = undefined;

  constructor(t: Tracing, span: Span, operation: string) {
    super(t.sdk.api, span);
    this.#t = t;
    this.recording = span.isRecording();
    this.#operation = operation;
  }

  /** The span a span started inside the request's work now is the child of: the running stage's, else the request's. */
  current(): OwnParent {
    return this.#stageName === undefined ? this : this.#openStage();
  }

  /** A stage's `before` starts: its span is made later, if at all. */
  enterStage(spanName: string, stage: string): void {
    this.#stageName = spanName;
    this.#stage = stage;
    this.#stageStarted = performance.now();
    this.#stageSpan = undefined;
  }

  /** Whether a span inside the running stage's work asked for the stage's span. */
  get stageOpened(): boolean {
    return this.#stageSpan !== undefined;
  }

  /** The stage did nothing: no span. */
  dropStage(): void {
    this.#stageName = undefined;
    this.#stageSpan = undefined;
  }

  endStage(answered: Outcome | undefined, err: unknown): void {
    if (this.#stageName === undefined) return;
    const span = this.#openStage().span;
    this.dropStage();
    if (answered) span.setAttribute('skybridge.stage.answered', true);
    if (err) {
      const e = err as Partial<GatewayError>;
      span.setAttribute('error.type', e.type ?? 'internal_error');
      if (typeof e.status === 'number') span.setAttribute('http.response.status_code', e.status);
      span.setStatus({ code: this.#t.sdk.api.SpanStatusCode.ERROR, message: typeof e.message === 'string' ? e.message.slice(0, 256) : undefined });
    }
    // On the clock its start was read from (a span given a start time would end on Date.now()'s milliseconds).
    span.end(performance.now());
  }

  #openStage(): SpanParent {
    if (!this.#stageSpan) {
      const { api, tracer } = this.#t.sdk;
      this.#stageSpan = new SpanParent(api, tracer.startOwn(this.#stageName!, api.SpanKind.INTERNAL, this, { 'skybridge.stage': this.#stage }, this.#stageStarted));
    }
    return this.#stageSpan;
  }

  /** Each upstream attempt: a client span, and the headers that carry it upstream. */
  start(target: Target, attempt: number, fallbackIndex: number): AttemptWatch {
    const { api, tracer } = this.#t.sdk;
    const span = tracer.startOwn(this.#operation, api.SpanKind.CLIENT, this, {});
    return new AttemptSpan(this.#t, span, new AttemptRecord(this.#operation, target.provider.name, target.model, attempt, fallbackIndex));
  }
}

class AttemptSpan implements AttemptWatch {
  readonly headers: Readonly<Record<string, string>>;
  readonly #t: Tracing;
  readonly #span: Span;
  readonly #record: AttemptRecord;

  constructor(t: Tracing, span: Span, record: AttemptRecord) {
    this.#t = t;
    this.#span = span;
    this.#record = record;
    const sc = span.spanContext();
    this.headers = traceHeaders(sc.traceId, sc.spanId, sc.traceFlags, sc.traceState?.serialize());
  }

  end(status: number, keyId: string | undefined, error?: GatewayError): void {
    const r = this.#record;
    r.status = status;
    r.keyId = keyId;
    if (error) {
      r.errorType = error.type || String(status);
      this.#span.setStatus({ code: this.#t.sdk.api.SpanStatusCode.ERROR, message: error.message.slice(0, 256) });
    }
    endDeferred(this.#span, r);
  }
}

/**
 * The W3C headers naming the request's span (its client's tracestate kept), for work it hands on
 * (an async job's run continues under its submit); undefined when the request is not traced.
 */
export function requestTraceHeaders(ctx: RequestContext): Record<string, string> | undefined {
  const span = ctx.trace?.span;
  if (!span?.isRecording()) return undefined;
  const sc = span.spanContext();
  return traceHeaders(sc.traceId, sc.spanId, sc.traceFlags, sc.traceState?.serialize());
}

/** First values of the tracing fields on every context (one object shape for all). */
export function initTracingFields(ctx: RequestContext): void {
  ctx.trace = undefined;
  ctx.attempts = undefined;
}

/** The tracing stage of a snapshot traced by `t`. */
export function tracingStage(t: Tracing): Stage {
  return {
    name: 'tracing',
    before(ctx) {
      begin(ctx, t);
      return undefined;
    },
    after(ctx, result) {
      finish(ctx, t, result);
    },
    tap(ctx, item) {
      const trace = ctx.trace;
      if (trace?.recording) observe(trace, item, t.settings.captureContent);
    },
  };
}

/**
 * Wraps a stage's `before` in a span named after the stage (a stage without `before` is returned as
 * it is). The span is made when it is known to be wanted, not before: once the stage went async,
 * answered, threw, said it was not idle, or when a span started inside its work (an agent's turns
 * and tool calls) asks for its parent. A stage that did nothing (`Stage.idle`) records none. Its
 * work finds the parent through `Tracing.live` (by request id), never an async context switch.
 */
export function tracedStage(stage: Stage): Stage {
  const before = stage.before;
  if (!before) return stage;
  const spanName = `stage ${stage.name}`;
  const traced: Stage = {
    name: stage.name,
    before(ctx) {
      const trace = ctx.trace;
      if (!trace?.recording) return before.call(stage, ctx);
      trace.enterStage(spanName, stage.name);
      let r: ReturnType<NonNullable<Stage['before']>>;
      try {
        r = before.call(stage, ctx);
      } catch (err) {
        trace.endStage(undefined, err);
        throw err;
      }
      if (!(r instanceof Promise)) {
        if (r || trace.stageOpened || !stage.idle?.(ctx)) trace.endStage(r, undefined);
        else trace.dropStage();
        return r;
      }
      return r.then(
        (o) => {
          trace.endStage(o, undefined);
          return o;
        },
        (err: unknown) => {
          trace.endStage(undefined, err);
          throw err;
        },
      );
    },
  };
  if (stage.after) traced.after = stage.after.bind(stage);
  if (stage.tap) traced.tap = stage.tap.bind(stage);
  return traced;
}

function begin(ctx: RequestContext, t: Tracing): RequestTrace {
  if (ctx.trace) return ctx.trace;
  const { api, tracer } = t.sdk;
  const operation = genAiOperation(ctx.operation);
  // Attributes and the final name are the RequestRecord's, made at export.
  const span = tracer.startOwn(operation, ctx.http ? api.SpanKind.SERVER : api.SpanKind.INTERNAL, parentOf(ctx, t), {}, ctx.started);
  const trace = new RequestTrace(t, span, operation);
  ctx.trace = trace;
  ctx.attempts = trace;
  t.live.set(ctx.id, trace);
  return trace;
}

/**
 * The span its parent request runs now (an agent turn: its agent request's MCP stage, or the agent
 * request itself for a streamed agent, whose turns run as the client reads), else the client's
 * traceparent.
 */
function parentOf(ctx: RequestContext, t: Tracing): OwnParent | undefined {
  const parent = ctx.parentRequestId ? t.live.get(ctx.parentRequestId) : undefined;
  if (parent) return parent.current();
  const remote = parseTraceparent(ctx.headers.traceparent, ctx.headers.tracestate);
  if (!remote) return undefined;
  const { api } = t.sdk;
  return new SpanParent(
    api,
    api.trace.wrapSpanContext({
      traceId: remote.traceId,
      spanId: remote.spanId,
      traceFlags: remote.flags & 1,
      isRemote: true,
      ...(remote.state && { traceState: api.createTraceState(remote.state) }),
    }),
  );
}

function finish(ctx: RequestContext, t: Tracing, result: Outcome): void {
  // A request refused while it was read (before any stage ran) is traced too.
  const trace = ctx.trace ?? begin(ctx, t);
  t.live.delete(ctx.id);
  if (!trace.recording) return;
  const span = trace.span;
  if (ctx.status >= 500) span.setStatus({ code: t.sdk.api.SpanStatusCode.ERROR, message: ctx.error?.message.slice(0, 256) });
  endDeferred(span, new RequestRecord(ctx, result, trace.facts, t.settings.captureContent));
}

const FINISH_REASON = /"finish_reason":\s*"([A-Za-z_]+)"/;
const MODEL = /"model":\s*"([^"\\]{1,256})"/;

/** A streamed item: the answering model, the finish reasons, and the text when content is captured. */
function observe(trace: RequestTrace, item: unknown, content: boolean): void {
  if (!item || typeof item !== 'object' || item instanceof Uint8Array) return;
  const facts = (trace.facts ??= { finishReasons: undefined, responseModel: undefined, output: undefined });
  const relayed = (item as { json?: unknown }).json;
  if (typeof relayed === 'string') {
    // An OpenAI chunk relayed as its JSON text (not parsed on the way): read without parsing it,
    // unless its text is wanted.
    const reason = FINISH_REASON.exec(relayed);
    if (reason) (facts.finishReasons ??= []).push(reason[1]);
    if (!facts.responseModel) facts.responseModel = MODEL.exec(relayed)?.[1];
    if (!content) return;
    try {
      item = JSON.parse(relayed) as unknown;
    } catch {
      return;
    }
    for (const c of ((item as { choices?: unknown }).choices ?? []) as { delta?: { content?: unknown } }[]) {
      if (typeof c.delta?.content === 'string') facts.output = (facts.output ?? '') + c.delta.content;
    }
    return;
  }
  const chunk = item as { model?: unknown; choices?: unknown; type?: unknown; response?: { model?: unknown; status?: unknown } };
  if (typeof chunk.model === 'string') facts.responseModel = chunk.model;
  if (Array.isArray(chunk.choices)) {
    for (const c of chunk.choices as { finish_reason?: unknown; delta?: { content?: unknown } }[]) {
      if (typeof c.finish_reason === 'string') (facts.finishReasons ??= []).push(c.finish_reason);
      if (content && typeof c.delta?.content === 'string') facts.output = (facts.output ?? '') + c.delta.content;
    }
  } else if (chunk.type === 'response.completed' && chunk.response) {
    if (typeof chunk.response.model === 'string') facts.responseModel = chunk.response.model;
    if (typeof chunk.response.status === 'string') facts.finishReasons = [chunk.response.status];
  }
}
