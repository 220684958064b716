// The Videos API's calls on a video that exists (POST /videos, the create, is an operation of the
// table: operations/video.ts): retrieve (polls the provider and records what it says), list (the
// caller's videos, from the store), delete, content (the video, thumbnail or spritesheet bytes,
// relayed as they arrive, never held whole), remix, edits and extensions (a new job from a
// finished one, on the same provider and key), and characters. A video belongs to the virtual key
// that made it (or to no key): another caller gets the 404 an unknown id gets. Each call is
// governed as a call to the video's provider: the key's provider permission (403) and model, rate
// limits, and budgets, which the call that sees the job finish is charged (video-jobs.ts).
import { isMultipart, readForm } from '../http/multipart.ts';
import { validated } from '../http/body.ts';
import type { Methods, Routes } from '../http/server.ts';
import type { ErrorRenderer } from '../http/respond.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Accept } from '../pipeline/runner.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { relayHeaders, upstreamBytes } from '../pipeline/body-relay.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { UpstreamRequest } from '../providers/adapter.ts';
import { GatewayError, invalidRequest, unsupportedOperation } from '../unified/errors.ts';
import { isFile, type FormPart } from '../unified/form.ts';
import { VIDEO_VARIANTS, VideoCharacterSchema, type VideoVariant } from '../unified/video.ts';
import { videoView, type VideoRecord, type VideoStore } from '../state/videos.ts';
import {
  callVideo, checkModel, ownVideo, readJobState, refreshVideo, scopeToVideo, videoAdapterOf, videoExtra, videoKey, videoStore,
} from '../operations/video-jobs.ts';
import { OPERATION_ROUTES } from '../operations/specs.ts';
import { inferenceAccept } from '../operations/inference.ts';
import { namedProvider } from './provider-resources.ts';
import { httpRoute } from './serve.ts';
import { ADAPTERS } from '../providers/registry.ts';
import { sendOnce } from '../pipeline/invoke.ts';
import { appendMember } from '../unified/json-splice.ts';

/** What accept found for a call on one video. */
export interface VideoCall<T> {
  store: VideoStore;
  rec: VideoRecord;
  provider: ProviderRuntime;
  input: T;
}

const calls = new WeakMap<RequestContext, VideoCall<unknown>>();

/**
 * A route acting on the video named by the path (`read` takes the body, after the caller is
 * identified: its videos are the only ones it may name), run as one call to the video's provider.
 */
export function onVideo<T>(
  requestType: string,
  run: (ctx: RequestContext, call: VideoCall<T>) => Promise<Outcome>,
  read?: { input: (ctx: RequestContext) => Promise<T>; source?: (input: T, ctx: RequestContext) => string; param: string },
  renderError?: ErrorRenderer,
): ReturnType<typeof httpRoute> {
  const accept: Accept = async (ctx) => {
    const store = videoStore(ctx);
    const input = read ? await read.input(ctx) : (undefined as T);
    const id = read?.source ? read.source(input, ctx) : (ctx.params[0] ?? '');
    const rec = await ownVideo(ctx, store, id, read?.param);
    const provider = scopeToVideo(ctx, rec);
    ctx.request = input;
    calls.set(ctx, { store, rec, provider, input });
    return (c) => {
      checkModel(c, rec);
      return run(c, calls.get(c) as VideoCall<T>);
    };
  };
  return httpRoute({ operation: requestType, requestType, ...(renderError && { renderError }) }, accept);
}

// ---------------------------------------------------------------- retrieve, list, delete

export const retrieveVideo = onVideo('video_retrieve', async (ctx, { store, rec, provider }) => {
  const now = await refreshVideo(ctx, store, provider, rec);
  return { kind: 'json', status: 200, value: { ...videoView(now), extra_fields: videoExtra(ctx, now, 'video_retrieve') } };
});

export const deleteVideo = onVideo('video_delete', async (ctx, { store, rec, provider }) => {
  const { video } = videoAdapterOf(provider);
  // Veo keeps no deletable job: deleting forgets the gateway's record (its files expire on their own).
  if (video.delete) {
    try {
      await (await callVideo(ctx, provider, rec, video.delete(rec.upstream_id))).text();
    } catch (err) {
      // Already gone at the provider: the record goes too.
      if (!(err instanceof GatewayError && err.status === 404)) throw err;
    }
  }
  await store.delete(rec.id);
  return { kind: 'json', status: 200, value: { id: rec.id, object: 'video.deleted', deleted: true, extra_fields: videoExtra(ctx, rec, 'video_delete') } };
});

const LIST_MAX = 100;

export const listVideos = httpRoute({ operation: 'video_list', requestType: 'video_list' }, async (ctx) => {
  const store = videoStore(ctx);
  const q = ctx.query();
  const limitRaw = q.get('limit');
  const limit = limitRaw === null ? 20 : Number(limitRaw);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX) throw invalidRequest(`'limit' must be a whole number from 1 to ${LIST_MAX}`, 'limit');
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest("'order' must be 'asc' or 'desc'", 'order');
  const after = q.get('after') ?? undefined;
  ctx.model = '';
  return async (c) => {
    // The caller's own videos, as last seen: retrieving one asks its provider again.
    const page = await store.list(c.vk?.record.id, { limit, order, after });
    const data = page.data.map(videoView);
    return {
      kind: 'json',
      status: 200,
      value: { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.has_more },
    };
  };
});

// ---------------------------------------------------------------- content

function variantOf(ctx: RequestContext): VideoVariant {
  const v = ctx.query().get('variant') ?? 'video';
  if (!(VIDEO_VARIANTS as readonly string[]).includes(v)) throw invalidRequest(`'variant' must be one of ${VIDEO_VARIANTS.join(', ')}`, 'variant');
  return v as VideoVariant;
}

export const videoContent = onVideo<VideoVariant>(
  'video_download',
  async (ctx, { store, rec: stored, provider, input: variant }) => {
    const { video } = videoAdapterOf(provider);
    const rec = await refreshVideo(ctx, store, provider, stored);
    if (rec.status !== 'completed') {
      const why = rec.status === 'failed' ? `failed (${rec.error?.message ?? 'no reason given'})` : `is ${rec.status} (${rec.progress}%)`;
      throw new GatewayError(409, `video '${rec.id}' has no content: it ${why}`, { code: 'video_not_ready', param: 'video_id' });
    }
    let ref = rec.content;
    if (!ref && !video.contentById) {
      // Inline bytes are not stored: the finished operation is read again for them.
      ref = (await readJobState(await callVideo(ctx, provider, rec, video.retrieve(rec.upstream_id, rec.model)), provider, video)).content;
    }
    if (ref?.kind === 'inline') {
      if (variant !== 'video') throw noVariant(provider, variant);
      const bytes = Buffer.from(ref.base64, 'base64');
      return { kind: 'bytes', status: 200, headers: { 'content-type': ref.mimeType, 'content-length': String(bytes.length) }, body: one(bytes) };
    }
    if (ref?.kind === 'gcs') {
      throw new GatewayError(409, `video '${rec.id}' was written to ${ref.uri}: fetch it from Cloud Storage`, { code: 'video_in_cloud_storage', param: 'video_id' });
    }
    const up = video.content(rec.upstream_id, variant, ref);
    if (!up) throw noVariant(provider, variant);
    const answer = await callVideo(ctx, provider, rec, up);
    // Relayed chunk by chunk as the client drains it (respond's backpressure): a video of any size
    // passes through a few upstream reads of memory.
    return { kind: 'bytes', status: 200, headers: relayHeaders(answer.headers, variant === 'video' ? 'video/mp4' : 'image/webp'), body: upstreamBytes(answer.body, provider.name, ctx.signal) };
  },
  { input: async (ctx) => variantOf(ctx), param: 'video_id' },
);

const noVariant = (provider: ProviderRuntime, variant: string) =>
  new GatewayError(400, `provider '${provider.name}' offers no '${variant}' variant of a video (only 'video')`, { code: 'unsupported_variant', param: 'variant' });

async function* one(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}

// ---------------------------------------------------------------- remix, edits, extensions

/**
 * Rows of the operations table (operations/video-derive.ts: they run async too), served here at
 * the Videos API's paths. The caller is identified before the body is read: its videos are the
 * only ones it may name.
 */
function deriveRoute(name: 'video_remix' | 'video_edit' | 'video_extension'): ReturnType<typeof httpRoute> {
  const route = OPERATION_ROUTES.get(name)!;
  return httpRoute({ operation: route.operation, op: route.op, requestType: route.requestType }, inferenceAccept(route));
}

export const remixVideo = deriveRoute('video_remix');
export const editVideo = deriveRoute('video_edit');
export const extendVideo = deriveRoute('video_extension');

// ---------------------------------------------------------------- characters

/** The provider of a character call: named, or the first configured one offering characters (that the caller's key allows). */
function characterProvider(ctx: RequestContext, named: string | undefined): ProviderRuntime {
  if (named) {
    const p = ctx.snapshot.providers.get(named);
    if (!p) throw new GatewayError(400, `provider '${named}' is not configured on this gateway`, { param: 'provider', code: 'provider_not_configured' });
    if (!ADAPTERS[p.kind.format].video?.createCharacter || !p.operations.has('video_generation')) throw unsupportedOperation(p.name, 'video_character');
    return p;
  }
  const vk = ctx.vk;
  for (const p of ctx.snapshot.providers.values()) {
    if (p.operations.has('video_generation') && ADAPTERS[p.kind.format].video?.createCharacter && (!vk || vk.grants.some((g) => g.provider === p.name))) return p;
  }
  throw new GatewayError(400, "no configured provider offers video characters; name one with the 'provider' query parameter", {
    type: 'unsupported_operation',
    code: 'unsupported_operation',
    param: 'provider',
  });
}

const parseCharacter = validated(VideoCharacterSchema);

function characterRoute(requestType: string, prepare: (ctx: RequestContext) => Promise<{ provider: ProviderRuntime; up: UpstreamRequest }>): ReturnType<typeof httpRoute> {
  return httpRoute({ operation: requestType, requestType }, async (ctx) => {
    ctx.model = '';
    const { provider, up } = await prepare(ctx);
    ctx.provider = provider.name;
    ctx.scope = { kind: 'provider', provider };
    return async (c) => {
      const adapter = ADAPTERS[provider.kind.format];
      const key = videoKey(provider, undefined, c.keyIds);
      c.keyId = key?.id;
      const answer = await sendOnce(c, { provider, model: '' }, adapter, key, up, up.body === undefined ? undefined : JSON.stringify(up.body), c.signal);
      const text = await answer.text();
      const spliced = appendMember(text, 'extra_fields', { provider: provider.name, request_type: requestType });
      if (spliced === undefined) throw new GatewayError(502, `provider '${provider.name}' returned a body that is not a JSON object`, { type: 'upstream_invalid_response', provider: provider.name, upstream: true });
      return { kind: 'text', status: answer.status, text: spliced };
    };
  });
}

export const createCharacter = characterRoute('video_character_create', async (ctx) => {
  const req = ctx.http!.req;
  if (!isMultipart(req)) throw invalidRequest("a character is a multipart form: 'name' and the 'video' file", 'video');
  const parts: FormPart[] = await readForm(req, ctx.snapshot.maxBodyBytes);
  const field = (name: string) => parts.find((p) => p.name === name && !isFile(p)) as { value: string } | undefined;
  parseCharacter({ name: field('name')?.value });
  const file = parts.find((p) => p.name === 'video');
  if (!file || !isFile(file)) throw invalidRequest("the file field 'video' is required", 'video');
  const provider = characterProvider(ctx, namedProvider(ctx, field('provider')?.value));
  return { provider, up: ADAPTERS[provider.kind.format].video!.createCharacter!(parts.filter((p) => p.name !== 'provider')) };
});

export const retrieveCharacter = characterRoute('video_character_retrieve', async (ctx) => {
  const provider = characterProvider(ctx, namedProvider(ctx));
  const get = ADAPTERS[provider.kind.format].video?.getCharacter;
  if (!get) throw unsupportedOperation(provider.name, 'video_character');
  return { provider, up: get(ctx.params[0] ?? '') };
});

// ---------------------------------------------------------------- routes

/** Below each OpenAI-format prefix; POST /videos (the create) is the table's. */
export const VIDEO_ROUTES: Routes = {
  '/videos': { GET: listVideos },
  '/videos/edits': { POST: editVideo },
  '/videos/extensions': { POST: extendVideo },
  '/videos/characters': { POST: createCharacter },
};

export const VIDEO_PATTERNS: [string, Methods][] = [
  ['/videos/characters/([^/]+)', { GET: retrieveCharacter }],
  ['/videos/([^/]+)', { GET: retrieveVideo, DELETE: deleteVideo }],
  ['/videos/([^/]+)/content', { GET: videoContent }],
  ['/videos/([^/]+)/remix', { POST: remixVideo }],
];
