// What every video call shares once a job exists: asking the provider where it stands (with the key
// that made it: the video lives in that key's account), writing that to the store, and settling a
// finished job exactly once: seconds × the per-second price at its resolution for a completed video,
// 0 for a failed one. The request that settles it carries the cost (its log record, the budgets of
// the caller's key); no other request is charged for it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProviderKey, ProviderRuntime } from '../providers/runtime.ts';
import type { FormatAdapter, UpstreamRequest, VideoAdapter } from '../providers/adapter.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { scrubProvider } from '../providers/scrub.ts';
import { sendOnce } from '../pipeline/invoke.ts';
import type { UpstreamAnswer } from '../pipeline/upstream-call.ts';
import { parseAnswerJson } from '../pipeline/answer-body.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { videoCost } from '../governance/pricing/video.ts';
import { asUpstreamFault, GatewayError, unsupportedOperation } from '../unified/errors.ts';
import type { VideoJobState } from '../unified/video.ts';
import { isFinished, type VideoRecord, type VideoStore } from '../state/videos.ts';
import { log } from '../log.ts';

export const noVideoStore = (): GatewayError =>
  new GatewayError(503, 'video jobs need a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', {
    type: 'service_unavailable',
    code: 'video_store_unavailable',
  });

export function videoStore(ctx: RequestContext): VideoStore {
  const store = ctx.services.videos;
  if (!store) throw noVideoStore();
  return store;
}

export const videoNotFound = (id: string, param = 'video_id'): GatewayError => new GatewayError(404, `video '${id}' not found`, { type: 'invalid_request_error', code: 'video_not_found', param });

/** The provider's video side, or the unsupported-operation 400. */
export function videoAdapterOf(provider: ProviderRuntime): { adapter: FormatAdapter; video: VideoAdapter } {
  const adapter = ADAPTERS[provider.kind.format];
  if (!provider.operations.has('video_generation') || !adapter.video) throw unsupportedOperation(provider.name, 'video_generation');
  return { adapter, video: adapter.video };
}

/**
 * The key a video's calls use: the one that made it, while it is configured and the caller may use
 * it; else the first enabled key the caller may use (a replaced key of the same account still
 * reaches the video).
 */
export function videoKey(provider: ProviderRuntime, keyId: string | undefined, allowed: ReadonlySet<string> | undefined): ProviderKey | undefined {
  const usable = provider.keys.filter((k) => k.weight > 0 && (!allowed || allowed.has(k.id)));
  const key = usable.find((k) => k.id === keyId) ?? usable.find((k) => k.models === null) ?? usable[0];
  if (!key && !provider.keyless) throw new GatewayError(500, `provider '${provider.name}' has no enabled keys`, { provider: provider.name, code: 'no_keys' });
  return key;
}

/** One call to the provider about a video, as the record's key. */
export async function callVideo(ctx: RequestContext, provider: ProviderRuntime, rec: Pick<VideoRecord, 'key_id'>, up: UpstreamRequest): Promise<UpstreamAnswer> {
  const key = videoKey(provider, rec.key_id, ctx.keyIds);
  ctx.keyId = key?.id;
  return sendOnce(ctx, { provider, model: ctx.model ?? '' }, ADAPTERS[provider.kind.format], key, up, up.body === undefined ? undefined : JSON.stringify(up.body), ctx.signal);
}

/** A provider answer about a job, read (bounded) and checked as the job's state. */
export async function readJobState(answer: UpstreamAnswer, provider: ProviderRuntime, video: VideoAdapter): Promise<VideoJobState> {
  const body = parseAnswerJson(scrubProvider(await answer.text(), provider), provider.name);
  try {
    return video.state(body);
  } catch (err) {
    throw asUpstreamFault(err, provider.name);
  }
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Settles a finished video if no request has yet; this request then carries its cost. */
export async function settleVideo(ctx: RequestContext, store: VideoStore, rec: VideoRecord): Promise<VideoRecord> {
  if (!isFinished(rec.status) || rec.settled) return rec;
  const cost = rec.status === 'completed' ? priceOf(ctx, rec) : 0;
  if (!(await store.settle(rec.id, cost))) return { ...rec, settled: true };
  ctx.provider = rec.provider;
  ctx.model = rec.model;
  ctx.settledCost = cost;
  // The limits stage charges budgets after a request with usage; a video uses no tokens.
  ctx.usage ??= { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return { ...rec, settled: true, cost };
}

const unpriced = new Set<string>();

function priceOf(ctx: RequestContext, rec: VideoRecord): number {
  const cost = videoCost(rec.provider, rec.model, rec.seconds, rec.size, rec.request_type, ctx.snapshot.governance.pricingOverrides.get(rec.provider));
  if (cost !== undefined) return cost;
  const id = `${rec.provider}/${rec.model}`;
  if (!unpriced.has(id)) {
    unpriced.add(id);
    log.warn('no video price known for this model: its videos cost 0 against budgets (add providers.<name>.pricing_overrides)', { model: id });
  }
  return 0;
}

/** Asks the provider where the job stands, records it, and settles it once it is finished. */
export async function refreshVideo(ctx: RequestContext, store: VideoStore, provider: ProviderRuntime, rec: VideoRecord): Promise<VideoRecord> {
  if (isFinished(rec.status)) return settleVideo(ctx, store, rec);
  const { video } = videoAdapterOf(provider);
  const state = await readJobState(await callVideo(ctx, provider, rec, video.retrieve(rec.upstream_id, rec.model)), provider, video);
  return settleVideo(ctx, store, await store.update(rec, state, nowSeconds()));
}

/** The first poll's delay; each next one doubles, up to MAX_POLL_MS. */
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 10_000;

/**
 * Polls until the job is finished (an async job's run: its result is the finished video, and its
 * webhook fires then). The run's signal ends the wait (the job's lease lost, the gateway closing).
 */
export async function waitForVideo(ctx: RequestContext, store: VideoStore, provider: ProviderRuntime, rec: VideoRecord): Promise<VideoRecord> {
  let delay = FIRST_POLL_MS;
  let current = rec;
  while (!isFinished(current.status)) {
    await sleep(delay, undefined, { signal: ctx.signal });
    delay = Math.min(delay * 2, MAX_POLL_MS);
    current = await refreshVideo(ctx, store, provider, current);
  }
  return settleVideo(ctx, store, current);
}

/** A record's provider as configured now (a provider removed since: the video cannot be reached). */
export function providerOf(ctx: RequestContext, rec: VideoRecord): ProviderRuntime {
  const provider = ctx.snapshot.providers.get(rec.provider);
  if (!provider) throw new GatewayError(409, `video '${rec.id}' was made by provider '${rec.provider}', which is no longer configured`, { code: 'provider_not_configured', param: 'video_id' });
  return provider;
}

/**
 * The key a video call comes from: an in-process caller's (an async job's submitter, known before
 * the caller stages run), else the one the caller stages identified.
 */
const callerKeyId = (ctx: RequestContext): string => (ctx.caller ? ctx.caller.principal : ctx.vk)?.record.id ?? '';

/** The caller's video: another key's (or an unknown id) is a 404 that confirms nothing. */
export async function ownVideo(ctx: RequestContext, store: VideoStore, id: string, param = 'video_id'): Promise<VideoRecord> {
  const rec = await store.get(id);
  if (!rec || (rec.virtual_key_id ?? '') !== callerKeyId(ctx)) throw videoNotFound(id, param);
  return rec;
}

/** A virtual key limited to some models of the provider may act only on videos of those models. */
export function checkModel(ctx: RequestContext, rec: VideoRecord): void {
  if (ctx.models !== '*' && !ctx.models.has(rec.model)) {
    throw new GatewayError(403, `model '${rec.model}' of provider '${rec.provider}' is not allowed by virtual key '${ctx.vk?.record.name ?? ''}'`, {
      type: 'permission_error',
      code: 'model_not_allowed',
      param: 'model',
    });
  }
}

/** Plans a call on a stored video: its provider (as configured now) and model, not a model the request names. */
export function scopeToVideo(ctx: RequestContext, rec: VideoRecord): ProviderRuntime {
  const provider = providerOf(ctx, rec);
  ctx.provider = provider.name;
  ctx.model = rec.model;
  ctx.access.model = rec.model;
  ctx.scope = { kind: 'provider', provider };
  return provider;
}

/** What a video call's answer says about itself. */
export const videoExtra = (ctx: RequestContext, rec: VideoRecord, requestType: string) => ({
  provider: rec.provider,
  request_type: requestType,
  latency: Math.round(performance.now() - ctx.started),
});
