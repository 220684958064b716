// The shape every inference route shares. A route reads and validates its request (accept); the
// stages plan its targets and admit it; executeInference invokes the chain with retries and
// fallbacks and turns the answer into an Outcome: a JSON value, the upstream's JSON text with
// extra_fields spliced in (same format both sides: no parse/serialise round trip), a stream of
// items, or relayed bytes. Whether it goes out over HTTP (respond) or to in-process code is not
// this module's concern.
import { randomUUID } from 'node:crypto';
import type { ErrorRenderer } from '../http/respond.ts';
import { appendMemberSized } from '../unified/json-splice.ts';
import type { ExtraFields, Usage } from '../unified/chat.ts';
import { asUpstreamFault } from '../unified/errors.ts';
import { answerObject } from '../unified/answer-shape.ts';
import { parseAnswerJson } from '../pipeline/answer-body.ts';
import { scrubProvider } from '../providers/scrub.ts';
import type { Operation } from '../unified/operations.ts';
import type { OperationName, OperationRow } from '../unified/operations.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { invoke, type Attempted } from '../pipeline/invoke.ts';
import { withClientHeaders } from '../pipeline/client-headers.ts';
import { streamItems, type StreamOptions, type StreamPlan } from '../pipeline/stream.ts';
import { pumpText, relayable, relayText, textFormat } from '../pipeline/relay.ts';
import { bodyOutcome } from '../pipeline/body-relay.ts';
import type { Target } from '../pipeline/target.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { lazyItems, toGatewayError, type Outcome, type StreamFormat } from '../pipeline/outcome.ts';
import type { Accept, Execute } from '../pipeline/runner.ts';
import { parseJson, readBody, refuseProtoMembers } from '../http/body.ts';
import { invalidRequest, requireOperation, unsupportedOperation, type GatewayError } from '../unified/errors.ts';

export interface InferenceSpec<TOut, TItem> {
  /** This call's request type (the streaming variant when it streams). */
  requestType: string;
  modelRequested: string;
  build(target: Target, adapter: FormatAdapter): UpstreamRequest;
  /** Non-streaming: the parsed upstream body into the unified answer. */
  parse(body: unknown, attempt: Attempted, ids: AnswerIds): TOut;
  /** Reads the answer's `usage` member (each API shapes it its own way). */
  usage(usage: unknown): Usage | undefined;
  /** Where the usage is not the answer's `usage` member (OCR's `usage_info` in pages): read from the whole answer instead. */
  answerUsage?(answer: unknown): Usage | undefined;
  /**
   * True when the upstream answer is already the client's format (OpenAI upstream, same operation):
   * then the body passes through as text with extra_fields appended, unparsed.
   */
  passthrough?(attempt: Attempted): boolean;
  /** Streaming, when the request asked for it. */
  stream?: (attempt: Attempted, ids: AnswerIds) => StreamPlan<TItem>;
  /** Answers that are not JSON (audio bytes, plain-text transcripts): relayed as bytes; the content type when the upstream names none. */
  relay?: string;
}

/**
 * The build step of an operation a provider may lack: its provider must declare the capability and
 * its adapter translate the request (`translate` answers undefined when the adapter has no such
 * method); otherwise the unsupported-operation 400.
 */
export function buildBy<R>(
  capability: string,
  req: R,
  translate: (adapter: FormatAdapter, req: R, model: string) => UpstreamRequest | undefined,
): (target: Target, adapter: FormatAdapter) => UpstreamRequest {
  return (t, adapter) => {
    requireOperation(t.provider, capability);
    const up = translate(adapter, req, t.model);
    if (!up) throw unsupportedOperation(t.provider.name, capability);
    return up;
  };
}

/** What the request names: the model and its fallbacks. */
export interface ModelRequest {
  model: string;
  fallbacks?: readonly string[];
}

/** How an operation reads its request and calls for it: the spec file of a table row (unified/operations.ts). */
export interface OperationSpec<R extends ModelRequest> {
  /** Reads and validates the request (a GatewayError naming the field when it is wrong). */
  read(ctx: RequestContext): Promise<R>;
  /** How to call for it (called once the targets are planned). */
  spec(req: R, ctx: RequestContext): InferenceSpec<object, unknown>;
  /**
   * Runs the call itself instead of executeInference, for an operation whose answer is not one
   * upstream answer (a video job: started, recorded, and in an async run waited for).
   */
  run?(req: R, ctx: RequestContext): Promise<Outcome>;
  /**
   * Sets the scope the stages plan on instead of the request's model: a call on something stored
   * (a remix of a video) runs on the provider that holds it.
   */
  scope?(req: R, ctx: RequestContext): Promise<void>;
}

/** A spec with the operation it runs as: a table row's, or a native front door's own. */
export interface InferenceRoute<R extends ModelRequest> extends OperationSpec<R> {
  /** The metrics `operation` label: a table row's name, or the capability a native front door runs. */
  operation: Operation | OperationName;
  /** The table row, for a table operation (native front doors have none). */
  op?: OperationRow;
  /** The request type before the call (errors, pricing, routing rules). */
  requestType: string;
  /** Native prefixes answer errors in their provider's own shape; default: the gateway error object. */
  errorBody?: ErrorRenderer;
}

/** The route's accept step; built once per route, shared by every request. */
export function inferenceAccept<R extends ModelRequest>(route: InferenceRoute<R>): Accept {
  const early = { request_type: route.requestType };
  const run = route.run;
  const scope = route.scope;
  const execute: Execute = run ? (ctx) => run(ctx.request as R, ctx) : (ctx) => executeInference(ctx, route.spec(ctx.request as R, ctx));
  // A promise chain, not an async function: no suspended frame per request while the body is read.
  return (ctx) => {
    ctx.requestType = route.requestType;
    ctx.errorExtra = early;
    let reading: Promise<R>;
    try {
      reading = route.read(ctx);
    } catch (err) {
      return Promise.reject(err);
    }
    return reading.then((req): Execute | Promise<Execute> => {
      ctx.request = req;
      if (scope) return scope(req, ctx).then(() => execute);
      ctx.scope = { kind: 'model', model: req.model, fallbacks: req.fallbacks, body: req };
      return execute;
    });
  };
}

/**
 * The JSON body through `parse`: read from HTTP (bounded), or the in-process caller's input. Not
 * async (a failure is still a rejection): the read's promise is chained, without a suspended frame.
 */
export function readJson<R>(ctx: RequestContext, parse: (body: unknown) => R): Promise<R> {
  const http = ctx.http;
  if (!http) {
    try {
      if (ctx.input === undefined) throw invalidRequest('a request body is required');
      // An in-process input (an async job's stored body included) obeys the rule HTTP bodies do.
      refuseProtoMembers(ctx.input);
      return Promise.resolve(parse(ctx.input));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return readBody(http.req, ctx.snapshot.maxBodyBytes).then((buf) => parse(withFields(parseJson(buf), http.bodyFields)));
}

function withFields(body: unknown, fields: Readonly<Record<string, unknown>> | undefined): unknown {
  if (!fields || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...body, ...fields };
}

/** What a translator is given: the model answered (the attempt's target's), and the answer's id (made when it is read) and time. */
export interface AnswerIds {
  readonly model: string;
  readonly id: string;
  readonly created: number;
}

// A class, not an object literal with a getter: a literal's getter is a new closure per request, and
// each such object gets a hidden class of its own (about 450 bytes per request). The getter lives on
// the prototype, so a spread or Object.keys does not see `id`: callers read it by name. Made once the
// answering model is known, so a translator is given this object itself, not a second one adding
// the model to it.
class LazyIds implements AnswerIds {
  readonly model: string;
  readonly created: number;
  #id: string | undefined = undefined;

  constructor(model: string, created: number) {
    this.model = model;
    this.created = created;
  }

  /** Made only when a translator reads it: an OpenAI answer, which carries its own, never pays for a random UUID. */
  get id(): string {
    return (this.#id ??= `chatcmpl-${randomUUID()}`);
  }
}

/**
 * A stream's outcome. Apart from executeInference: the closures a stream keeps for its life
 * (the relay's, the scrubber) would otherwise hold that function's whole context, with the spec
 * and its closures, until the stream ends.
 */
function streamOutcome<TItem>(ctx: RequestContext, attempt: Attempted, plan: StreamPlan<TItem>, extra: ExtraFields, rawRequest: unknown): Outcome {
  const provider = attempt.target.provider.name;
  const rt = attempt.target.provider;
  const opts: StreamOptions = {
    extra,
    provider,
    rawResponse: rt.sendBackRawResponse,
    rawRequest,
    decoder: attempt.adapter.decodeStream?.({ maxEventBytes: rt.maxStreamEventBytes, provider }),
    maxEventBytes: rt.maxStreamEventBytes,
    scrub: (t) => scrubProvider(t, rt),
  };
  const body = ctx.services.openStreams?.hold(attempt.answer.body, provider) ?? attempt.answer.body;
  if (relayable(ctx, plan, opts)) {
    // Items for in-process readers; an HTTP answer takes the pushed form (one of the two is read).
    return {
      kind: 'stream',
      items: lazyItems(() => relayText(ctx, body, plan, opts)),
      pump: pumpText(ctx, body, plan, opts),
      format: textFormat(plan as StreamFormat<unknown>),
      extra: ctx.errorExtra,
    };
  }
  const items = streamItems(ctx, body, plan, opts);
  return { kind: 'stream', items, format: plan as StreamFormat<unknown>, extra: ctx.errorExtra };
}

/**
 * Runs the chain for the spec and turns its answer into an Outcome. Not async: the request waits
 * for the invoke in its promise, without a suspended frame of this function; the answer half is
 * its own step.
 */
export function executeInference<TOut, TItem>(ctx: RequestContext, spec: InferenceSpec<TOut, TItem>): Promise<Outcome> {
  const targets = ctx.targets;
  ctx.provider = targets[0]?.provider.name ?? 'none';
  ctx.model = targets[0]?.model ?? spec.modelRequested;
  ctx.errorExtra = { model_requested: spec.modelRequested, request_type: spec.requestType };
  // The answer's time is the request's, whichever attempt answers.
  const created = Math.floor(Date.now() / 1000);
  let invoked: Promise<Attempted>;
  try {
    const headers = ctx.headers;
    const build = (t: Target, adapter: FormatAdapter) => withClientHeaders(spec.build(t, adapter), t.provider.kind.format, headers);
    invoked = invoke(targets, build, ctx.abort, ctx.services.metrics, ctx);
  } catch (err) {
    return Promise.reject(inferenceError(ctx, err));
  }
  return invoked.then(
    (attempt) => inferenceAnswer(ctx, spec, attempt, created),
    (err: unknown) => {
      throw inferenceError(ctx, err);
    },
  );
}

/** The invoke's answer as the Outcome (the answer half of executeInference). */
async function inferenceAnswer<TOut, TItem>(ctx: RequestContext, spec: InferenceSpec<TOut, TItem>, attempt: Attempted, created: number): Promise<Outcome> {
  try {
    const provider = attempt.target.provider.name;
    const model = attempt.target.model;
    ctx.provider = provider;
    ctx.model = model;
    ctx.access.provider = provider;
    ctx.access.model = model;
    const rt = attempt.target.provider;
    const ids = new LazyIds(model, created);
    const rawRequest = rt.sendBackRawRequest && attempt.sentBody !== undefined ? JSON.parse(attempt.sentBody) : undefined;
    if (spec.stream) return streamOutcome(ctx, attempt, spec.stream(attempt, ids), { provider, request_type: spec.requestType, model_requested: spec.modelRequested }, rawRequest);
    if (spec.relay) return bodyOutcome(attempt.answer, provider, ctx.signal, spec.relay);
    // Bounded read; an upstream echoing the gateway's key in its answer gets it scrubbed.
    const text = scrubProvider(await attempt.answer.text(), rt);
    const body = parseAnswerJson(text, provider);
    // The one place where an answer of the wrong shape (a TypeError in a translator included)
    // becomes a 502 upstream_invalid_response, for every route that comes through here.
    let out: TOut & { extra_fields?: ExtraFields };
    try {
      answerObject(body);
      out = spec.parse(body, attempt, ids) as TOut & { extra_fields?: ExtraFields };
    } catch (err) {
      throw asUpstreamFault(err, provider);
    }
    if (spec.passthrough?.(attempt) && !rt.sendBackRawResponse) {
      // Already the client's format and checked above: sent as received, extra_fields spliced in.
      const spliced = appendMemberSized(text, 'extra_fields', answerExtra(ctx, spec, provider, rawRequest));
      if (spliced !== undefined) {
        ctx.usage = spec.answerUsage ? spec.answerUsage(body) : spec.usage((body as { usage?: unknown }).usage);
        return { kind: 'text', status: 200, text: spliced.text, parsed: out, length: spliced };
      }
    }
    const extra = answerExtra(ctx, spec, provider, rawRequest);
    // A translator may hand back the parsed body itself (OpenAI format): raw gets its own copy.
    if (rt.sendBackRawResponse) extra.raw_response = out === body ? JSON.parse(text) : body;
    out.extra_fields = extra;
    ctx.usage = spec.answerUsage ? spec.answerUsage(out) : spec.usage((out as { usage?: unknown }).usage);
    return { kind: 'json', status: 200, value: out };
  } catch (err) {
    throw inferenceError(ctx, err);
  }
}

/**
 * A whole answer's extra_fields, made when the answer is: one object in the members' order, not a
 * closure over a first object and the spreads of both (three objects and a closure per request).
 */
function answerExtra(ctx: RequestContext, spec: InferenceSpec<unknown, unknown>, provider: string, rawRequest: unknown): ExtraFields {
  const extra: ExtraFields = { provider, request_type: spec.requestType, model_requested: spec.modelRequested, latency: Math.round(performance.now() - ctx.started) };
  if (rawRequest !== undefined) extra.raw_request = rawRequest;
  return extra;
}

/** A failure as the GatewayError the client gets, the failed provider's secrets scrubbed from its message. */
function inferenceError(ctx: RequestContext, err: unknown): GatewayError {
  const e = toGatewayError(err);
  const failed = ctx.snapshot.providers.get(e.provider ?? ctx.provider);
  if (failed) e.message = scrubProvider(e.message, failed);
  return e;
}
