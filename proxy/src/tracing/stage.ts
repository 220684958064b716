// Tracing as a stage and hooks, never inside the runner: the tracing stage runs first (its `after`
// last) and holds the request's span; every other stage's `before` is wrapped in a span of its own
// (identify, plan, limits, the cache lookup, the MCP stage with its agent turns), and each upstream
// attempt gets a client span through invoke's AttemptWatcher, whose context goes upstream as
// `traceparent`. A request whose client sent a valid `traceparent` continues that trace.
import type { Context, Span, SpanContext } from '@opentelemetry/api';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Stage } from '../pipeline/stage.ts';
import type { AttemptWatch, AttemptWatcher } from '../pipeline/invoke.ts';
import type { GatewayError } from '../unified/errors.ts';
import { endAttributes, genAiOperation, genAiProvider, spanName, startAttributes, type StreamFacts } from './attributes.ts';
import { parseTraceparent, traceHeaders } from './traceparent.ts';
import type { Parent, Tracing, TracingService } from './service.ts';

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

export interface RequestTrace extends Parent {
  readonly span: Span;
  /** The request span's context: the parent of the stage, attempt and tool spans. */
  readonly context: Context;
  /** What the stream taps saw. */
  facts: StreamFacts | undefined;
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
      if (trace?.span.isRecording()) observe(trace, item, t.settings.captureContent);
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
export function tracedStage(stage: Stage, t: Tracing): Stage {
  const before = stage.before;
  if (!before) return stage;
  const name = `stage ${stage.name}`;
  const traced: Stage = {
    name: stage.name,
    before(ctx) {
      const trace = ctx.trace;
      if (!trace?.span.isRecording()) return before.call(stage, ctx);
      const s = new StageSpan(t, name, stage.name, trace);
      t.live.set(ctx.id, s);
      let r: ReturnType<NonNullable<Stage['before']>>;
      try {
        r = before.call(stage, ctx);
      } catch (err) {
        s.end(ctx, undefined, err);
        throw err;
      }
      if (!(r instanceof Promise)) {
        if (r || s.opened || !stage.idle?.(ctx)) s.end(ctx, r, undefined);
        else s.drop(ctx);
        return r;
      }
      return r.then(
        (o) => {
          s.end(ctx, o, undefined);
          return o;
        },
        (err: unknown) => {
          s.end(ctx, undefined, err);
          throw err;
        },
      );
    },
  };
  if (stage.after) traced.after = stage.after.bind(stage);
  if (stage.tap) traced.tap = stage.tap.bind(stage);
  return traced;
}

/** A stage's span, started (at the stage's start time) only when something needs it. */
class StageSpan implements Parent {
  readonly #t: Tracing;
  readonly #name: string;
  readonly #stage: string;
  readonly #trace: RequestTrace;
  readonly #started = performance.now();
  #span: Span | undefined;
  #context: Context | undefined;

  constructor(t: Tracing, name: string, stage: string, trace: RequestTrace) {
    this.#t = t;
    this.#name = name;
    this.#stage = stage;
    this.#trace = trace;
  }

  /** Whether a span inside the stage's work asked for it. */
  get opened(): boolean {
    return this.#span !== undefined;
  }

  /** The stage span's context: spans started inside the stage's work are its children. */
  get context(): Context {
    if (!this.#context) this.#context = this.#t.sdk.api.trace.setSpan(this.#trace.context, this.#open());
    return this.#context;
  }

  #open(): Span {
    this.#span ??= this.#t.sdk.tracer.startSpan(this.#name, { startTime: this.#started, attributes: { 'skybridge.stage': this.#stage } }, this.#trace.context);
    return this.#span;
  }

  end(ctx: RequestContext, answered: Outcome | undefined, err: unknown): void {
    this.drop(ctx);
    const span = this.#open();
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

  /** The request span is the parent again. */
  drop(ctx: RequestContext): void {
    if (this.#t.live.get(ctx.id) === this) this.#t.live.set(ctx.id, this.#trace);
  }
}

function begin(ctx: RequestContext, t: Tracing): RequestTrace {
  if (ctx.trace) return ctx.trace;
  const { api, tracer } = t.sdk;
  const parent = parentContext(ctx, t);
  const inProcess = !ctx.http;
  const span = tracer.startSpan(
    genAiOperation(ctx.operation),
    { kind: inProcess ? api.SpanKind.INTERNAL : api.SpanKind.SERVER, startTime: ctx.started, attributes: startAttributes(ctx) },
    parent,
  );
  const context = api.trace.setSpan(parent, span);
  const trace: RequestTrace = { span, context, facts: undefined };
  ctx.trace = trace;
  ctx.attempts = attemptWatcher(ctx, trace, t);
  t.live.set(ctx.id, trace);
  return trace;
}

/**
 * The span its parent request runs now (an agent turn: its agent request's MCP stage, or the agent
 * request itself for a streamed agent, whose turns run as the client reads), else the client's
 * traceparent.
 */
function parentContext(ctx: RequestContext, t: Tracing): Context {
  const { api } = t.sdk;
  const parent = ctx.parentRequestId ? t.live.get(ctx.parentRequestId) : undefined;
  if (parent) return parent.context;
  const remote = parseTraceparent(ctx.headers.traceparent, ctx.headers.tracestate);
  if (!remote) return api.ROOT_CONTEXT;
  const spanContext: SpanContext = {
    traceId: remote.traceId,
    spanId: remote.spanId,
    traceFlags: remote.flags & 1,
    isRemote: true,
    ...(remote.state && { traceState: api.createTraceState(remote.state) }),
  };
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
}

function finish(ctx: RequestContext, t: Tracing, result: Outcome): void {
  // A request refused while it was read (before any stage ran) is traced too.
  const trace = ctx.trace ?? begin(ctx, t);
  t.live.delete(ctx.id);
  const span = trace.span;
  if (!span.isRecording()) return;
  const attributes = endAttributes(ctx, result, trace.facts, t.settings.captureContent);
  span.setAttributes(attributes);
  const model = attributes['gen_ai.request.model'];
  span.updateName(spanName(genAiOperation(ctx.operation), typeof model === 'string' ? model : undefined));
  if (ctx.status >= 500) span.setStatus({ code: t.sdk.api.SpanStatusCode.ERROR, message: ctx.error?.message.slice(0, 256) });
  span.end();
}

/** Each upstream attempt: a client span, and the headers that carry it upstream. */
function attemptWatcher(ctx: RequestContext, trace: RequestTrace, t: Tracing): AttemptWatcher {
  const { api, tracer } = t.sdk;
  const operation = genAiOperation(ctx.operation);
  return {
    start(target, attempt, fallbackIndex): AttemptWatch {
      const span = tracer.startSpan(
        spanName(operation, target.model),
        {
          kind: api.SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': operation,
            'gen_ai.provider.name': genAiProvider(target.provider.name),
            'gen_ai.request.model': target.model,
            'skybridge.provider': target.provider.name,
            'skybridge.attempt': attempt,
            'skybridge.fallback_index': fallbackIndex,
          },
        },
        trace.context,
      );
      const sc = span.spanContext();
      return {
        headers: traceHeaders(sc.traceId, sc.spanId, sc.traceFlags, sc.traceState?.serialize()),
        end(status, keyId, error) {
          if (span.isRecording()) {
            span.setAttribute('http.response.status_code', status);
            if (keyId) span.setAttribute('skybridge.provider_key.id', keyId);
            if (error) {
              span.setAttribute('error.type', error.type || String(status));
              span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message.slice(0, 256) });
            }
          }
          span.end();
        },
      };
    },
  };
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
