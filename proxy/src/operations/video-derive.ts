// Remix, edits and extensions: a new video job made from a finished video of the caller's, on the
// provider and with the key that made it (the video lives in that account), recorded like a new
// video. Rows of the operations table (video_remix, video_edit, video_extension), so they run in
// process and async: /v1/async/videos/{id}/remix (or /v1/async/videos/remix with `video: {id}`),
// /v1/async/videos/edits and /v1/async/videos/extensions, an async run waiting until the new job is
// finished so its webhook fires when the video is ready. Their synchronous routes are the Videos
// API's own paths (endpoints/videos.ts): the remix's source is in its path there.
import { isMultipart, readForm } from '../http/multipart.ts';
import { parseJson, readBody, refuseProtoMembers, validated } from '../http/body.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { UpstreamRequest } from '../providers/adapter.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import { GatewayError, invalidRequest, unsupportedOperation } from '../unified/errors.ts';
import type { FormPart } from '../unified/form.ts';
import { formAsBody, VideoDeriveSchema, VideoRemixSchema } from '../unified/video.ts';
import { firstJobFields, newVideoId, videoView, type VideoRecord, type VideoStore } from '../state/videos.ts';
import type { ModelRequest, OperationSpec } from './inference.ts';
import {
  callVideo, checkModel, ownVideo, readJobState, scopeToVideo, settleVideo, videoAdapterOf, videoExtra, videoStore, waitForVideo,
} from './video-jobs.ts';

type DeriveType = 'video_remix' | 'video_edit' | 'video_extension';

export interface DeriveRequest extends ModelRequest {
  prompt: string;
  /** Extensions: the seconds to add. */
  seconds?: string;
  /** The gateway's id of the source video. */
  source: string;
  /** Fields the gateway does not read, sent to the provider as given. */
  extra: Record<string, string>;
}

/** A JSON body or a multipart form (the SDK sends edits and extensions as forms) as a JSON object. */
async function bodyOf(ctx: RequestContext): Promise<Record<string, unknown>> {
  let body: unknown;
  let parts: readonly FormPart[] | undefined;
  if (ctx.http) {
    const req = ctx.http.req;
    if (isMultipart(req)) parts = await readForm(req, ctx.snapshot.maxBodyBytes);
    else body = parseJson(await readBody(req, ctx.snapshot.maxBodyBytes));
  } else if (Array.isArray(ctx.input)) {
    parts = ctx.input as FormPart[];
  } else {
    refuseProtoMembers(ctx.input);
    body = ctx.input;
  }
  if (parts) {
    const form = formAsBody(parts);
    if (form.files.length) {
      const name = form.files[0].name;
      throw invalidRequest(`'${name}': uploading a video is not supported here; name a video made through this gateway by id (${name}[id])`, name);
    }
    return form.body;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
  return body as Record<string, unknown>;
}

const parseRemix = validated(VideoRemixSchema);
const parseDerive = validated(VideoDeriveSchema);
/** Fields the gateway reads itself; the rest go to the provider as sent. */
const OWN = new Set(['prompt', 'video', 'seconds', 'model', 'provider']);

function extraFields(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (!OWN.has(k) && (typeof v === 'string' || typeof v === 'number')) out[k] = String(v);
  return out;
}

/** The remix's source: its path over HTTP; in a job (or in process), the body's `video.id`. */
function remixSource(ctx: RequestContext, body: Record<string, unknown>): string {
  if (ctx.http) return ctx.params[0] ?? '';
  const video = body.video;
  const id = video && typeof video === 'object' && !Array.isArray(video) ? (video as { id?: unknown }).id : undefined;
  if (typeof id !== 'string' || !id) throw invalidRequest("'video.id' is required: the id of the video to remix", 'video');
  return id;
}

function reader(type: DeriveType): (ctx: RequestContext) => Promise<DeriveRequest> {
  return async (ctx) => {
    const body = await bodyOf(ctx);
    // The model is the source video's, known once the scope step has found it.
    if (type === 'video_remix') return { model: '', prompt: parseRemix(body).prompt, source: remixSource(ctx, body), extra: extraFields(body) };
    const checked = parseDerive(body);
    if (type === 'video_extension' && checked.seconds === undefined) throw invalidRequest("'seconds' is required: how many seconds to add", 'seconds');
    return { model: '', prompt: checked.prompt, source: checked.video.id, extra: extraFields(body), ...(checked.seconds !== undefined && { seconds: String(checked.seconds) }) };
  };
}

interface Found {
  store: VideoStore;
  source: VideoRecord;
  provider: ProviderRuntime;
}

const found = new WeakMap<RequestContext, Found>();

/** Plans on the source video's provider: the caller's own video, or the 404 an unknown id gets. */
function scopeOf(type: DeriveType): (req: DeriveRequest, ctx: RequestContext) => Promise<void> {
  const param = type === 'video_remix' ? 'video_id' : 'video';
  return async (req, ctx) => {
    const store = videoStore(ctx);
    const source = await ownVideo(ctx, store, req.source, param);
    const provider = scopeToVideo(ctx, source);
    req.model = source.model;
    found.set(ctx, { store, source, provider });
  };
}

function upstreamOf(type: DeriveType, f: Found, req: DeriveRequest): UpstreamRequest | undefined {
  const { video } = videoAdapterOf(f.provider);
  const id = f.source.upstream_id;
  if (type === 'video_remix') return video.remix?.(id, req.prompt, req.extra);
  if (type === 'video_edit') return video.edit?.(id, req.prompt, req.extra);
  return video.extend?.(id, req.prompt, req.seconds ?? f.source.seconds, req.extra);
}

/** Starts the new job and records it like a new video; an async run waits until it is finished. */
function runOf(type: DeriveType): (req: DeriveRequest, ctx: RequestContext) => Promise<Outcome> {
  return async (req, ctx) => {
    const f = found.get(ctx)!;
    const { store, source, provider } = f;
    checkModel(ctx, source);
    const up = upstreamOf(type, f, req);
    if (!up) throw unsupportedOperation(provider.name, type);
    const { video } = videoAdapterOf(provider);
    const state = await readJobState(await callVideo(ctx, provider, source, up), provider, video);
    if (!state.upstreamId) throw new GatewayError(502, `provider '${provider.name}' answered no job id`, { type: 'upstream_invalid_response', provider: provider.name, upstream: true });
    const now = Math.floor(Date.now() / 1000);
    let rec: VideoRecord = {
      ...source,
      id: newVideoId(),
      key_id: ctx.keyId ?? source.key_id,
      upstream_id: state.upstreamId,
      virtual_key_id: source.virtual_key_id,
      request_type: type,
      prompt: req.prompt,
      seconds: state.seconds ?? req.seconds ?? source.seconds,
      size: state.size ?? source.size,
      ...firstJobFields(state, now),
      remixed_from: source.id,
    };
    await store.insert(rec);
    rec = ctx.untilDone ? await waitForVideo(ctx, store, provider, rec) : await settleVideo(ctx, store, rec);
    return { kind: 'json', status: 200, value: { ...videoView(rec), extra_fields: videoExtra(ctx, rec, type) } };
  };
}

function deriveSpec(type: DeriveType): OperationSpec<DeriveRequest> {
  return {
    read: reader(type),
    scope: scopeOf(type),
    // The call is made by `run`; the spec says what a generic runner would need (never used here).
    spec: (req) => ({
      requestType: type,
      modelRequested: req.model,
      build: (t) => {
        throw unsupportedOperation(t.provider.name, type);
      },
      parse: (body) => body as object,
      usage: () => undefined,
    }),
    run: runOf(type),
  };
}

export const videoRemixSpec = deriveSpec('video_remix');
export const videoEditSpec = deriveSpec('video_edit');
export const videoExtensionSpec = deriveSpec('video_extension');
