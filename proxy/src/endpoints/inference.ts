// The shape every inference endpoint shares: resolve targets, invoke with retries and fallbacks,
// then either answer JSON or relay a stream, and record metrics and tokens either way.
import { randomUUID } from 'node:crypto';
import type { Exchange } from '../http/exchange.ts';
import { sendError, sendJson, sendJsonText, toGatewayError, type ErrorRenderer } from '../http/respond.ts';
import { appendMember } from '../unified/json-splice.ts';
import type { ExtraFields, Usage } from '../unified/chat.ts';
import { asUpstreamFault } from '../unified/errors.ts';
import { answerObject } from '../unified/answer-shape.ts';
import { parseAnswerJson } from '../pipeline/answer-body.ts';
import { scrubProvider } from '../upstream/scrub.ts';
import type { Operation } from '../providers/catalog.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { invoke, type Attempted } from '../pipeline/invoke.ts';
import { withClientHeaders } from '../pipeline/client-headers.ts';
import { relayStream, type StreamPlan } from '../pipeline/stream-relay.ts';
import type { Target } from '../pipeline/target.ts';
import { governRequest } from '../governance/stage.ts';
import { parseJson, readBody } from '../http/body.ts';
import { firstTokenTime, modelLabel, requestCount, requestTime, tokenCount } from '../metrics/metrics.ts';

export interface InferenceSpec<TOut, TItem> {
  operation: Operation;
  requestType: string;
  modelRequested: string;
  targets: readonly Target[];
  build(target: Target, adapter: FormatAdapter): UpstreamRequest;
  /** Non-streaming: the parsed upstream body into the unified answer. */
  parse(body: unknown, attempt: Attempted, ids: { id: string; created: number }): TOut & { extra_fields?: ExtraFields };
  /** Reads the answer's `usage` member (each API shapes it its own way). */
  usage(usage: unknown): Usage | undefined;
  /**
   * True when the upstream answer is already the client's format (OpenAI upstream, same operation):
   * then the body passes through as text with extra_fields appended, unparsed.
   */
  passthrough?(attempt: Attempted): boolean;
  /** Native prefixes answer errors in their provider's own shape; default: the gateway error object. */
  errorBody?: ErrorRenderer;
  /** Streaming, when the request asked for it. */
  stream?: (attempt: Attempted, ids: { id: string; created: number }) => StreamPlan<TItem>;
  /** Answers that are not JSON (audio bytes, plain-text transcripts): relayed to the client as they arrive. */
  relay?: (attempt: Attempted, ex: Exchange) => Promise<void>;
}

export async function runInference<TOut, TItem>(ex: Exchange, spec: InferenceSpec<TOut, TItem>): Promise<void> {
  let provider = spec.targets[0]?.provider.name ?? 'none';
  let model = spec.targets[0]?.model ?? spec.modelRequested;
  let status = 200;
  const ids = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000) };
  try {
    const build = (t: Target, adapter: FormatAdapter) => withClientHeaders(spec.build(t, adapter), t.provider.kind.format, ex.req.headers);
    const attempt = await invoke(spec.targets, build, ex.signal);
    provider = attempt.target.provider.name;
    model = attempt.target.model;
    if (ex.access) {
      ex.access.provider = provider;
      ex.access.model = model;
    }
    const rt = attempt.target.provider;
    const extra: ExtraFields = { provider, request_type: spec.requestType, model_requested: spec.modelRequested };
    const rawRequest = rt.sendBackRawRequest && attempt.sentBody !== undefined ? JSON.parse(attempt.sentBody) : undefined;
    const countTokens = (u: Usage) => {
      recordTokens(provider, model, u);
      ex.governed?.charge(provider, model, u);
    };
    if (spec.stream) {
      await relayStream(ex.res, attempt.answer.body, spec.stream(attempt, ids), {
        extra,
        provider,
        rawResponse: rt.sendBackRawResponse,
        rawRequest,
        signal: ex.signal,
        onFirstChunk: () => firstTokenTime(provider, modelLabel(model)).observe((performance.now() - ex.started) / 1000),
        onUsage: countTokens,
        decoder: attempt.adapter.decodeStream?.({ maxEventBytes: rt.maxStreamEventBytes, provider }),
        maxEventBytes: rt.maxStreamEventBytes,
        scrub: (t) => scrubProvider(t, rt),
      });
      return;
    }
    if (spec.relay) {
      await spec.relay(attempt, ex);
      return;
    }
    // Bounded read; an upstream echoing the gateway's key in its answer gets it scrubbed.
    const text = scrubProvider(await attempt.answer.text(), rt);
    const extraJson = (): ExtraFields => ({
      ...extra,
      latency: Math.round(performance.now() - ex.started),
      ...(rawRequest !== undefined ? { raw_request: rawRequest } : {}),
    });
    const body = parseAnswerJson(text, provider);
    // The one place where an answer of the wrong shape (a TypeError in a translator included)
    // becomes a 502 upstream_invalid_response, for every route that comes through here.
    let out: TOut & { extra_fields?: ExtraFields };
    try {
      answerObject(body);
      out = spec.parse(body, attempt, ids);
    } catch (err) {
      throw asUpstreamFault(err, provider);
    }
    if (spec.passthrough?.(attempt) && !rt.sendBackRawResponse) {
      // Already the client's format and checked above: sent as received, extra_fields spliced in.
      const spliced = appendMember(text, 'extra_fields', extraJson());
      if (spliced !== undefined) {
        const usage = spec.usage((body as { usage?: unknown }).usage);
        if (usage) countTokens(usage);
        sendJsonText(ex.res, 200, spliced);
        return;
      }
    }
    out.extra_fields = {
      ...extraJson(),
      // A translator may hand back the parsed body itself (OpenAI format): raw gets its own copy.
      ...(rt.sendBackRawResponse ? { raw_response: out === body ? JSON.parse(text) : body } : {}),
    };
    const usage = spec.usage((out as { usage?: unknown }).usage);
    if (usage) countTokens(usage);
    sendJson(ex.res, 200, out);
  } catch (err) {
    const e = toGatewayError(err);
    status = e.status;
    if (e.provider) provider = e.provider;
    const failed = ex.snapshot.providers.get(provider);
    if (failed) e.message = scrubProvider(e.message, failed);
    sendError(ex.res, e, { model_requested: spec.modelRequested, request_type: spec.requestType }, spec.errorBody);
  } finally {
    // The access log names the provider and model that answered, or the last one tried.
    if (ex.access) {
      ex.access.provider ??= provider;
      ex.access.model ??= model;
    }
    const labels = [spec.operation, provider, modelLabel(model), String(status)] as const;
    requestCount(...labels).inc();
    requestTime(...labels).observe((performance.now() - ex.started) / 1000);
  }
}

function recordTokens(provider: string, model: string, u: Usage): void {
  const m = modelLabel(model);
  if (u.prompt_tokens) tokenCount(provider, m, 'input').inc(u.prompt_tokens);
  if (u.completion_tokens) tokenCount(provider, m, 'output').inc(u.completion_tokens);
}

/**
 * The common start of every inference endpoint: read and validate the body, resolve its targets.
 * On bad input it answers the error itself and returns undefined.
 */
export async function acceptRequest<R extends { model: string; fallbacks?: string[] }>(
  ex: Exchange,
  parse: (body: unknown) => R,
  operation: Operation,
  requestType: string,
  errorBody?: ErrorRenderer,
): Promise<{ req: R; targets: Target[] } | undefined> {
  try {
    const req = parse(withFields(parseJson(await readBody(ex.req, ex.snapshot.maxBodyBytes)), ex.bodyFields));
    const governed = await governRequest(ex, req.model, req.fallbacks, requestType, req);
    ex.governed = governed;
    return { req, targets: governed.targets };
  } catch (err) {
    failEarly(ex, operation, requestType, err, errorBody);
    return undefined;
  }
}

function withFields(body: unknown, fields: Exchange['bodyFields']): unknown {
  if (!fields || !body || typeof body !== 'object' || Array.isArray(body)) return body;
  return { ...body, ...fields };
}

/** Error answer for failures before any target was resolved (bad body, unknown provider). */
export function failEarly(ex: Exchange, operation: Operation, requestType: string, err: unknown, errorBody?: ErrorRenderer): void {
  const e = sendError(ex.res, err, { request_type: requestType }, errorBody);
  const labels = [operation, e.provider ?? 'none', 'none', String(e.status)] as const;
  requestCount(...labels).inc();
  requestTime(...labels).observe((performance.now() - ex.started) / 1000);
}
