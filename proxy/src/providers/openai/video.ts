// OpenAI's Videos API (/v1/videos): jobs are created with a multipart form (as the openai SDK sends
// them; a reference image is a file part), polled with GET /videos/{id}, and fetched from
// /videos/{id}/content?variant=. Remix, edits, extensions, delete and characters are OpenAI's own.
import type { UpstreamRequest, VideoAdapter } from '../adapter.ts';
import type { VideoJobState, VideoStatus } from '../../unified/video.ts';
import type { FormPart } from '../../unified/form.ts';
import { isObject, ShapeError } from '../../unified/answer-shape.ts';
import { encodeMultipart } from '../../upstream/form-encode.ts';

const STATUSES: readonly VideoStatus[] = ['queued', 'in_progress', 'completed', 'failed'];
const id = (v: string) => encodeURIComponent(v);

function form(requestType: string, path: string, parts: FormPart[]): UpstreamRequest {
  return { method: 'POST', path, requestType, payload: encodeMultipart(parts), form: parts, stream: false };
}

const fields = (extra: Readonly<Record<string, string>>): FormPart[] => Object.entries(extra).map(([name, value]) => ({ name, value }));

/** OpenAI's video object as the job's state. */
export function openaiVideoState(body: unknown): VideoJobState {
  if (!isObject(body)) throw new ShapeError('the video answer is not an object');
  if (typeof body.id !== 'string' || !body.id) throw new ShapeError("the video answer has no 'id'");
  const status = body.status as VideoStatus;
  if (!STATUSES.includes(status)) throw new ShapeError(`the video answer's status '${String(body.status)}' is not one of ${STATUSES.join(', ')}`);
  const err = isObject(body.error) ? body.error : undefined;
  return {
    status,
    upstreamId: body.id,
    progress: typeof body.progress === 'number' ? body.progress : status === 'completed' ? 100 : 0,
    ...(typeof body.seconds === 'string' && { seconds: body.seconds }),
    ...(typeof body.size === 'string' && { size: body.size }),
    ...(typeof body.completed_at === 'number' && { completedAt: body.completed_at }),
    ...(typeof body.expires_at === 'number' && { expiresAt: body.expires_at }),
    ...(err && { error: { code: String(err.code ?? 'video_failed'), message: String(err.message ?? 'the video job failed') } }),
  };
}

/** OpenAI's defaults when the answer does not say: 4 seconds, 720x1280. */
const DEFAULTS = { seconds: '4', size: '720x1280' };

export const openaiVideo: VideoAdapter = {
  create(req, model) {
    const parts: FormPart[] = [{ name: 'model', value: model }, { name: 'prompt', value: req.prompt }];
    if (req.seconds !== undefined) parts.push({ name: 'seconds', value: req.seconds });
    if (req.size !== undefined) parts.push({ name: 'size', value: req.size });
    if (req.reference_file) parts.push(req.reference_file);
    for (const [k, v] of Object.entries(req.input_reference ?? {})) if (typeof v === 'string') parts.push({ name: `input_reference[${k}]`, value: v });
    parts.push(...fields(req.extra));
    return form('video_generation', '/videos', parts);
  },
  state: openaiVideoState,
  asked: (req) => ({ seconds: req.seconds ?? DEFAULTS.seconds, size: req.size ?? DEFAULTS.size }),
  contentById: true,
  retrieve: (upstreamId) => ({ method: 'GET', path: `/videos/${id(upstreamId)}`, requestType: 'video_retrieve', stream: false }),
  content: (upstreamId, variant) => ({
    method: 'GET',
    path: `/videos/${id(upstreamId)}/content?variant=${variant}`,
    requestType: 'video_download',
    stream: false,
    accept: '*/*',
  }),
  delete: (upstreamId) => ({ method: 'DELETE', path: `/videos/${id(upstreamId)}`, requestType: 'video_delete', stream: false }),
  remix: (upstreamId, prompt, extra) => ({
    method: 'POST',
    path: `/videos/${id(upstreamId)}/remix`,
    requestType: 'video_remix',
    body: { ...extra, prompt },
    stream: false,
  }),
  edit: (upstreamId, prompt, extra) => form('video_edit', '/videos/edits', [{ name: 'prompt', value: prompt }, { name: 'video[id]', value: upstreamId }, ...fields(extra)]),
  extend: (upstreamId, prompt, seconds, extra) =>
    form('video_extension', '/videos/extensions', [{ name: 'prompt', value: prompt }, { name: 'seconds', value: seconds }, { name: 'video[id]', value: upstreamId }, ...fields(extra)]),
  createCharacter: (parts) => form('video_character_create', '/videos/characters', [...parts]),
  getCharacter: (characterId) => ({ method: 'GET', path: `/videos/characters/${id(characterId)}`, requestType: 'video_character_retrieve', stream: false }),
};
