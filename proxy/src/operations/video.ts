// POST /v1/videos: starts a video job on the planned target (OpenAI's Videos API, or Veo's
// long-running operations on Gemini and Vertex), records it under the gateway's own id (the
// videos table: provider, key and the provider's id), and answers OpenAI's video object. The job
// runs on at the provider; GET /v1/videos/{id} polls it (endpoints/videos.ts). An async run
// (/v1/async/videos) waits here until the provider's job is finished, so the async job completes,
// and its webhook fires, when the video is ready. A job is priced when it finishes (video-jobs.ts).
import { isMultipart, readForm } from '../http/multipart.ts';
import { validated } from '../http/body.ts';
import { invoke } from '../pipeline/invoke.ts';
import { withClientHeaders } from '../pipeline/client-headers.ts';
import { parseAnswerJson } from '../pipeline/answer-body.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { toGatewayError, type Outcome } from '../pipeline/outcome.ts';
import type { FormatAdapter } from '../providers/adapter.ts';
import { scrubProvider } from '../providers/scrub.ts';
import type { Target } from '../pipeline/target.ts';
import { asUpstreamFault, invalidRequest, requireOperation, unsupportedOperation } from '../unified/errors.ts';
import type { FormPart } from '../unified/form.ts';
import { createRequestOf, formAsBody, VideoCreateSchema, type VideoCreateRequest, type VideoJobState } from '../unified/video.ts';
import { firstJobFields, newVideoId, videoView, type VideoRecord } from '../state/videos.ts';
import { readJson, type OperationSpec } from './inference.ts';
import { settleVideo, videoStore, waitForVideo } from './video-jobs.ts';

const parseBody = validated(VideoCreateSchema);
/** A JSON body checked as a create request (a 400 naming the field). */
export const parseCreate = (body: unknown): VideoCreateRequest => createRequestOf(parseBody(body));

/** A form as the JSON body it stands for; its one file may be the reference image. */
function fromForm(parts: readonly FormPart[]): VideoCreateRequest {
  const { body, file, files } = formAsBody(parts);
  const stray = files.find((f) => f !== file);
  if (stray) throw invalidRequest(`'${stray.name}' is not a file field of a video request (the reference image is 'input_reference')`, stray.name);
  const req = parseCreate(body);
  if (file) {
    if (req.input_reference) throw invalidRequest("'input_reference' is given twice: as a file and as a reference", 'input_reference');
    if (!/^image\//.test(file.contentType)) throw invalidRequest(`'input_reference' must be an image (got ${file.contentType})`, 'input_reference');
    req.reference_file = file;
  }
  return req;
}

/** A JSON body or a multipart form (the openai SDK's); in process, the body or the form's parts. */
async function readCreate(ctx: RequestContext): Promise<VideoCreateRequest> {
  if (!ctx.http) return Array.isArray(ctx.input) ? fromForm(ctx.input as FormPart[]) : readJson(ctx, parseCreate);
  if (isMultipart(ctx.http.req)) return fromForm(await readForm(ctx.http.req, ctx.snapshot.maxBodyBytes));
  return readJson(ctx, parseCreate);
}

function build(req: VideoCreateRequest): (t: Target, adapter: FormatAdapter) => ReturnType<NonNullable<FormatAdapter['video']>['create']> {
  return (t, adapter) => {
    requireOperation(t.provider, 'video_generation');
    if (!adapter.video) throw unsupportedOperation(t.provider.name, 'video_generation');
    return adapter.video.create(req, t.model);
  };
}

/** Starts and records the job; the answer is the video object (as JSON). */
export async function createVideo(req: VideoCreateRequest, ctx: RequestContext): Promise<Outcome & { kind: 'json' }> {
  const store = videoStore(ctx);
  const targets = ctx.targets;
  ctx.provider = targets[0]?.provider.name ?? 'none';
  ctx.model = targets[0]?.model ?? req.model;
  ctx.errorExtra = { model_requested: req.model, request_type: 'video_generation' };
  try {
    const headers = ctx.headers;
    const attempt = await invoke(targets, (t, a) => withClientHeaders(build(req)(t, a), t.provider.kind.format, headers), ctx.signal, ctx.services.metrics, ctx);
    const provider = attempt.target.provider;
    ctx.provider = provider.name;
    ctx.model = attempt.target.model;
    ctx.access.provider = provider.name;
    ctx.access.model = attempt.target.model;
    const body = parseAnswerJson(scrubProvider(await attempt.answer.text(), provider), provider.name);
    let state: VideoJobState;
    try {
      state = attempt.adapter.video!.state(body);
    } catch (err) {
      throw asUpstreamFault(err, provider.name);
    }
    if (!state.upstreamId) throw asUpstreamFault(new Error('the answer names no job'), provider.name);
    // Veo's answers do not repeat what was asked; OpenAI's do.
    const asked = attempt.adapter.video!.asked(req);
    const now = Math.floor(Date.now() / 1000);
    let rec: VideoRecord = {
      id: newVideoId(),
      provider: provider.name,
      model: attempt.target.model,
      key_id: attempt.key?.id,
      upstream_id: state.upstreamId,
      virtual_key_id: ctx.vk?.record.id,
      request_type: 'video_generation',
      prompt: req.prompt,
      seconds: state.seconds ?? asked.seconds,
      size: state.size ?? asked.size,
      ...firstJobFields(state, now),
      remixed_from: undefined,
    };
    await store.insert(rec);
    rec = ctx.untilDone ? await waitForVideo(ctx, store, provider, rec) : await settleVideo(ctx, store, rec);
    const extra = { provider: provider.name, request_type: 'video_generation', model_requested: req.model, latency: Math.round(performance.now() - ctx.started) };
    return { kind: 'json', status: 200, value: { ...videoView(rec), extra_fields: extra } };
  } catch (err) {
    throw toGatewayError(err);
  }
}

export const videoGenerationSpec: OperationSpec<VideoCreateRequest> = {
  read: readCreate,
  // The call is made by `run`; the spec says what a generic runner would need (never used for video).
  spec: (req) => ({
    requestType: 'video_generation',
    modelRequested: req.model,
    build: build(req),
    parse: (body) => body as object,
    usage: () => undefined,
  }),
  run: createVideo,
};
