// Veo on the Gemini API (ai.google.dev/api/models#method:-models.predictlongrunning): a video is a
// long-running operation started with POST /models/{model}:predictLongRunning and polled with
// GET /{operation name} until `done`; the finished operation names the video's file URI
// (response.generateVideoResponse.generatedSamples[].video.uri), downloaded with the same key.
// Veo reports no progress: 0 until done, then 100.
import type { VideoAdapter } from '../adapter.ts';
import type { VideoCreateRequest, VideoJobState } from '../../unified/video.ts';
import { veoShape, veoSize } from '../../unified/video.ts';
import { isObject, ShapeError } from '../../unified/answer-shape.ts';

/** The `instances` and `parameters` of a Veo predictLongRunning request (Gemini API and Vertex). */
export function veoRequestBody(req: VideoCreateRequest, vertex: boolean): Record<string, unknown> {
  const instance: Record<string, unknown> = { prompt: req.prompt };
  if (req.reference_file) {
    const image = { bytesBase64Encoded: req.reference_file.data.toString('base64'), mimeType: req.reference_file.contentType };
    instance.image = image;
  } else if (req.input_reference?.image_url) {
    const m = /^data:([^;,]+);base64,(.*)$/s.exec(req.input_reference.image_url);
    if (m) instance.image = { bytesBase64Encoded: m[2], mimeType: m[1] };
    else if (vertex && req.input_reference.image_url.startsWith('gs://')) instance.image = { gcsUri: req.input_reference.image_url, mimeType: 'image/png' };
  }
  const shape = veoShape(req.size);
  const parameters: Record<string, unknown> = {
    sampleCount: 1,
    ...(req.seconds !== undefined && { durationSeconds: Number(req.seconds) }),
    ...(shape.aspectRatio && { aspectRatio: shape.aspectRatio }),
    ...(shape.resolution && { resolution: shape.resolution }),
    ...(req.negative_prompt !== undefined && { negativePrompt: req.negative_prompt }),
  };
  return { instances: [instance], parameters };
}

/** What a create request asked for, as the job's seconds and size (Veo's answers do not repeat them). */
export function veoAsked(req: VideoCreateRequest): { seconds: string; size: string } {
  const shape = veoShape(req.size);
  return { seconds: req.seconds ?? '8', size: req.size ?? veoSize(shape.aspectRatio, shape.resolution) };
}

/** A failed operation's error, or the safety filter's verdict when it kept every video back. */
function failure(op: Record<string, unknown>, filtered: unknown, reasons: unknown): VideoJobState['error'] | undefined {
  if (isObject(op.error)) {
    return { code: typeof op.error.code === 'number' ? `upstream_${op.error.code}` : 'video_failed', message: String(op.error.message ?? 'the video operation failed') };
  }
  if (typeof filtered === 'number' && filtered > 0) {
    const why = Array.isArray(reasons) ? reasons.filter((r) => typeof r === 'string').join('; ') : '';
    return { code: 'content_filtered', message: `the provider's safety filter withheld the video${why ? `: ${why}` : ''}` };
  }
  return undefined;
}

/** A Gemini API operation (predictLongRunning's answer, or a poll's) as the job's state. */
export function geminiVideoState(body: unknown): VideoJobState {
  if (!isObject(body) || typeof body.name !== 'string' || !body.name) throw new ShapeError("the operation has no 'name'");
  const base = { upstreamId: body.name };
  if (body.done !== true) return { ...base, status: 'in_progress', progress: 0 };
  const res = isObject(body.response) && isObject(body.response.generateVideoResponse) ? body.response.generateVideoResponse : {};
  const err = failure(body, res.raiMediaFilteredCount, res.raiMediaFilteredReasons);
  if (err) return { ...base, status: 'failed', progress: 100, error: err };
  const samples = Array.isArray(res.generatedSamples) ? res.generatedSamples : [];
  const video = samples.map((s) => (isObject(s) && isObject(s.video) ? s.video : undefined)).find((v) => v !== undefined);
  if (!video) return { ...base, status: 'failed', progress: 100, error: { code: 'no_video', message: 'the operation finished without a video' } };
  if (typeof video.uri === 'string') return { ...base, status: 'completed', progress: 100, content: { kind: 'uri', uri: video.uri } };
  if (typeof video.encodedVideo === 'string') {
    return { ...base, status: 'completed', progress: 100, content: { kind: 'inline', base64: video.encodedVideo, mimeType: String(video.encoding ?? 'video/mp4') } };
  }
  throw new ShapeError('the finished operation names no video');
}

/**
 * The path below the provider's base path of a file URI the provider gave: only its own files are
 * fetched, with its own key, so a URI is never followed to another host (`/v1beta/files/x:download`
 * becomes `/files/x:download`).
 */
export function geminiFilePath(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ShapeError(`the video URI '${uri}' is not a URL`);
  }
  const path = url.pathname.replace(/^\/v1(?:beta|alpha)?(?=\/)/, '');
  if (!path.startsWith('/files/')) throw new ShapeError("the video URI is not one of the provider's files");
  const q = new URLSearchParams(url.search);
  q.delete('key');
  if (!q.has('alt')) q.set('alt', 'media');
  return `${path}?${q.toString()}`;
}

export const geminiVideo: VideoAdapter = {
  create: (req, model) => ({
    method: 'POST',
    path: `/models/${encodeURIComponent(model)}:predictLongRunning`,
    requestType: 'video_generation',
    body: veoRequestBody(req, false),
    stream: false,
  }),
  state: geminiVideoState,
  asked: veoAsked,
  // The operation name is a path below the API version: `models/veo-3.0-generate-001/operations/abc`.
  retrieve: (name) => ({ method: 'GET', path: `/${name.split('/').map(encodeURIComponent).join('/')}`, requestType: 'video_retrieve', stream: false }),
  content: (_name, variant, ref) =>
    variant === 'video' && ref?.kind === 'uri' ? { method: 'GET', path: geminiFilePath(ref.uri), requestType: 'video_content', stream: false, accept: '*/*' } : undefined,
};
