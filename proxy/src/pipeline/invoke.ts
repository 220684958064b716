// The part of the pipeline that survives failure: for each target in order (primary, then
// fallbacks), pick a key, call, and retry with backoff while the error is worth retrying.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderKey } from '../providers/runtime.ts';
import type { FormatAdapter, UpstreamRequest } from '../providers/adapter.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { GatewayError } from '../unified/errors.ts';
import { pickKey } from './key-pool.ts';
import { backoffMs, canFallback, isRetryable } from './retry.ts';
import { requestIdHeaders, sendUpstream, transportError, type UpstreamAnswer } from './upstream-call.ts';
import { firstBytes } from './first-bytes.ts';
import { signalOf, type AbortSource } from './client-gone.ts';
import type { Target } from './target.ts';
import { log } from '../log.ts';

/**
 * The metrics the attempts feed (metrics/metrics.ts `Metrics` is one): declared here so the
 * pipeline names no stage module, and the metrics module plugs in from above.
 */
export interface AttemptMetrics {
  readonly fallbacksTotal: { labels(fromProvider: string, toProvider: string): { inc(): void } };
  readonly retriesTotal: { labels(provider: string, reason: string): { inc(): void } };
  upstreamTime(provider: string, model: string, status: string): { observe(seconds: number): void };
  modelLabel(model: string): string;
  admitModel(model: string): void;
}

export interface Attempted {
  target: Target;
  adapter: FormatAdapter;
  key: ProviderKey | undefined;
  up: UpstreamRequest;
  answer: UpstreamAnswer;
  /** Serialized body sent upstream (for raw capture). */
  sentBody: string | undefined;
}

/**
 * Watches each upstream attempt (tracing gives each a span): declared here, as AttemptMetrics is,
 * so the pipeline names no stage module.
 */
export interface AttemptWatcher {
  start(target: Target, attempt: number, fallbackIndex: number): AttemptWatch;
}

export interface AttemptWatch {
  /** Sent with this attempt (W3C trace context). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The attempt's answer status (headers received) or failure. */
  end(status: number, keyId: string | undefined, error?: GatewayError): void;
}

/** What a request learns about its attempts (the request context keeps them for logs). */
export interface AttemptFacts {
  fallbackIndex: number;
  retries: number;
  keyId: string | undefined;
  /** Told of each attempt, when something watches them. */
  readonly attempts?: AttemptWatcher | undefined;
  /** Sent upstream on each attempt as `x-request-id` (the id the client got). */
  readonly requestId?: string;
}

/**
 * Runs the chain and returns the first 2xx answer (headers received, body unread). `build` makes
 * the upstream request for a target and checks the provider offers the operation; when it throws,
 * that target has failed and the chain moves on as for any other failure.
 */
export function invoke(
  targets: readonly Target[],
  build: (target: Target, adapter: FormatAdapter) => UpstreamRequest,
  signal: AbortSource,
  metrics: AttemptMetrics,
  facts?: AttemptFacts,
): Promise<Attempted> {
  // One target (no fallbacks, as most requests): the chain below would throw its failure as it
  // comes, and attemptTarget's failures are already the chain's; without the loop's async frame
  // around the attempt, a request allocates one less.
  if (targets.length === 1) return attemptTarget(targets[0], build, signal, metrics, facts);
  return invokeChain(targets, build, signal, metrics, facts);
}

async function invokeChain(
  targets: readonly Target[],
  build: (target: Target, adapter: FormatAdapter) => UpstreamRequest,
  signal: AbortSource,
  metrics: AttemptMetrics,
  facts: AttemptFacts | undefined,
): Promise<Attempted> {
  let lastError: GatewayError | undefined;
  for (let t = 0; t < targets.length; t++) {
    const target = targets[t];
    if (t > 0) {
      metrics.fallbacksTotal.labels(targets[t - 1].provider.name, target.provider.name).inc();
      if (facts) facts.fallbackIndex = t;
      // Per request: debug (the request log record and skybridge_fallbacks_total keep it at any level).
      log.debug('trying fallback', { from: `${targets[t - 1].provider.name}/${targets[t - 1].model}`, to: `${target.provider.name}/${target.model}`, reason: lastError?.message });
    }
    try {
      return await attemptTarget(target, build, signal, metrics, facts);
    } catch (err) {
      const e = asTargetError(err, target);
      if (signal.aborted || !canFallback(e)) throw e;
      lastError = e;
    }
  }
  throw lastError ?? new GatewayError(500, 'no target to call');
}

/** A target's failure as a GatewayError (a bug's error: a 500 naming the provider). */
function asTargetError(err: unknown, target: Target): GatewayError {
  return err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message, { provider: target.provider.name });
}

/**
 * A target's call, retried with backoff while the failure is worth it; its failure is the target's
 * (asTargetError). Not async: an attempt that succeeds chains the upstream call's promise once and
 * keeps no suspended frame; only a failure takes the async retry step.
 */
function attemptTarget(
  target: Target,
  build: (target: Target, adapter: FormatAdapter) => UpstreamRequest,
  signal: AbortSource,
  metrics: AttemptMetrics,
  facts: AttemptFacts | undefined,
): Promise<Attempted> {
  try {
    const adapter = ADAPTERS[target.provider.kind.format];
    const up = build(target, adapter);
    const sentBody = up.body === undefined ? undefined : JSON.stringify(up.body);
    // No set of failed keys: most calls never retry.
    return attemptOnce({ target, adapter, up, sentBody, signal, metrics, facts }, 0, undefined);
  } catch (err) {
    return Promise.reject(asTargetError(err, target));
  }
}

/** What every attempt at one target shares. */
interface TargetCall {
  target: Target;
  adapter: FormatAdapter;
  up: UpstreamRequest;
  sentBody: string | undefined;
  signal: AbortSource;
  metrics: AttemptMetrics;
  facts: AttemptFacts | undefined;
}

/** One attempt, with a key not among `failedKeys`; a throw here is the caller's to turn into a rejection. */
function attemptOnce(call: TargetCall, attempt: number, failedKeys: Set<string> | undefined): Promise<Attempted> {
  const { target, up, signal, facts } = call;
  const provider = target.provider;
  const key = pickKey(target, failedKeys);
  const started = performance.now();
  const watch = facts?.attempts?.start(target, attempt, facts.fallbackIndex);
  const failed = (err: unknown): Promise<Attempted> => retried(call, attempt, failedKeys, key, watch, started, err);
  // What follows a sent request fails as the request would (a throw there takes the retry step too).
  const done = (answer: UpstreamAnswer): Attempted | Promise<Attempted> => {
    try {
      return answered(call, key, watch, started, answer);
    } catch (err) {
      return failed(err);
    }
  };
  return sendUpstream(provider, call.adapter, key, up, call.sentBody, signal, ownHeaders(facts?.requestId, watch?.headers)).then((answer) => {
    // A stream cut before its first byte has sent the client nothing yet: it fails here, where
    // retries and fallbacks still apply, instead of as an in-band error after a 200.
    if (up.stream) return firstBytes(answer.body).then(() => done(answer), (err: unknown) => failed(transportError(provider.name, err, signal)));
    return done(answer);
  }, failed);
}

/** The attempt answered: counted, and handed on. */
function answered(call: TargetCall, key: ProviderKey | undefined, watch: AttemptWatch | undefined, started: number, answer: UpstreamAnswer): Attempted {
  const { target, metrics, facts } = call;
  const { provider, model } = target;
  // The provider served this model name: from now on it is worth its own metrics label.
  metrics.admitModel(model);
  if (facts) facts.keyId = key?.id;
  metrics.upstreamTime(provider.name, metrics.modelLabel(model), String(answer.status)).observe((performance.now() - started) / 1000);
  watch?.end(answer.status, key?.id);
  return { target, adapter: call.adapter, key, up: call.up, answer, sentBody: call.sentBody };
}

/** An attempt failed: counted, and tried again after the backoff while worth it; otherwise the target's failure. */
async function retried(call: TargetCall, attempt: number, failedKeys: Set<string> | undefined, key: ProviderKey | undefined, watch: AttemptWatch | undefined, started: number, err: unknown): Promise<Attempted> {
  const { target, signal, metrics, facts } = call;
  const { provider, model } = target;
  try {
    const e = err as GatewayError;
    watch?.end(e.status, key?.id, e);
    metrics.upstreamTime(provider.name, metrics.modelLabel(model), String(e.status)).observe((performance.now() - started) / 1000);
    if (signal.aborted || attempt >= provider.maxRetries || !isRetryable(e)) throw e;
    if (key && (e.status === 429 || e.status === 401 || e.status === 403)) (failedKeys ??= new Set()).add(key.id);
    metrics.retriesTotal.labels(provider.name, String(e.status)).inc();
    if (facts) facts.retries++;
    const wait = backoffMs(provider, attempt, e.retryAfter);
    log.debug('retrying upstream call', { provider: provider.name, model, attempt: attempt + 1, status: e.status, wait_ms: Math.round(wait) });
    await sleep(wait, undefined, { signal: signalOf(signal) }).catch(() => undefined);
    if (signal.aborted) throw e;
    return await attemptOnce(call, attempt + 1, failedKeys);
  } catch (failure) {
    throw asTargetError(failure, target);
  }
}

/** The gateway's own headers of one attempt: the request id, and the attempt span's trace context when traced. */
function ownHeaders(requestId: string | undefined, trace: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> | undefined {
  if (!trace) return requestIdHeaders(requestId);
  return requestId === undefined ? trace : { 'x-request-id': requestId, ...trace };
}

/**
 * A request's one call to a provider outside the retry chain (files, batches, containers, a video's
 * create and polls): not retried (a create repeated after a lost answer would happen twice), but
 * watched as an attempt is (its span when traced), and sent with the request id and trace context.
 */
export async function sendOnce(
  facts: Pick<AttemptFacts, 'attempts' | 'requestId'>,
  target: Target,
  adapter: FormatAdapter,
  key: ProviderKey | undefined,
  up: UpstreamRequest,
  body: string | undefined,
  signal: AbortSignal,
): Promise<UpstreamAnswer> {
  const watch = facts.attempts?.start(target, 0, 0);
  try {
    const answer = await sendUpstream(target.provider, adapter, key, up, body, signal, ownHeaders(facts.requestId, watch?.headers));
    watch?.end(answer.status, key?.id);
    return answer;
  } catch (err) {
    const e = err as GatewayError;
    watch?.end(typeof e.status === 'number' ? e.status : 502, key?.id, e);
    throw err;
  }
}
