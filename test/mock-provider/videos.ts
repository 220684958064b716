// Video generation in three wire formats, over one in-memory set of jobs:
// - OpenAI's Videos API (/v1/videos...): create (multipart form or JSON), retrieve, list, delete,
//   content (?variant=video|thumbnail|spritesheet), remix, edits, extensions, characters;
// - Veo on the Gemini API: POST /v1beta/models/{m}:predictLongRunning, GET /v1beta/{operation name},
//   the finished video at /v1beta/files/{id}:download?alt=media;
// - Veo on Vertex AI: .../publishers/google/models/{m}:predictLongRunning and :fetchPredictOperation,
//   the finished video inline (bytesBase64Encoded).
// A job moves one step per poll: queued → in_progress (50%) → completed (100%); a prompt containing
// `[fail]` fails at the second step instead (OpenAI: `error`; Veo: the operation's `error`). A prompt
// containing `[bytes:N]` makes an N-byte video (default 64 KiB), written piece by piece as the
// client reads, never held whole (`videoByte(i)` is byte i of every video, for checking a download).
// State is per process, shared by every mock server in it.

import { json } from './reply.ts';
import { isObject, nowSeconds } from './text.ts';
import { isForm, UploadedFile, type Form } from './multipart.ts';
import type { ErrorExtra, Reply, RequestContext, Route } from './types.ts';

type ErrorReply = (status: number, message?: string, extra?: ErrorExtra) => Reply;

interface Job {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  created_at: number;
  completed_at: number | null;
  remixed_from: string | null;
  bytes: number;
  fail: boolean;
  polls: number;
}

const jobs = new Map<string, Job>();
const characters = new Map<string, { id: string; name: string; created_at: number }>();
let counter = 0;
const nextId = (prefix: string) => `${prefix}${Date.now().toString(36)}${(++counter).toString(36).padStart(4, '0')}`;

const DEFAULT_BYTES = 64 * 1024;
const SORA_MODELS = ['sora-2', 'sora-2-pro', 'sora-2-2025-10-06', 'sora-2-pro-2025-10-06', 'sora-2-2025-12-08'];
const SORA_SECONDS = ['4', '8', '12'];
const SORA_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];

/** Byte `i` of every mock video (a download is checked against it). */
export function videoByte(i: number): number {
  return (i * 31 + 7) & 0xff;
}

function videoPiece(offset: number, size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = videoByte(offset + i);
  return b;
}

function newJob(model: string, prompt: string, seconds: string, size: string, remixedFrom: string | null = null): Job {
  const m = /\[bytes:(\d+)\]/.exec(prompt);
  const job: Job = {
    id: nextId('video_'),
    model,
    prompt,
    seconds,
    size,
    status: 'queued',
    progress: 0,
    created_at: nowSeconds(),
    completed_at: null,
    remixed_from: remixedFrom,
    bytes: m ? Number(m[1]) : DEFAULT_BYTES,
    fail: prompt.includes('[fail]'),
    polls: 0,
  };
  jobs.set(job.id, job);
  return job;
}

/** One poll's step. */
function advance(job: Job): void {
  job.polls++;
  if (job.status === 'queued') {
    job.status = 'in_progress';
    job.progress = 50;
  } else if (job.status === 'in_progress') {
    job.status = job.fail ? 'failed' : 'completed';
    job.progress = 100;
    job.completed_at = nowSeconds();
  }
}

// ---------------------------------------------------------------- OpenAI

function openaiVideo(job: Job): Record<string, unknown> {
  return {
    id: job.id,
    object: 'video',
    model: job.model,
    status: job.status,
    progress: job.progress,
    created_at: job.created_at,
    completed_at: job.completed_at,
    expires_at: job.completed_at === null ? null : job.completed_at + 24 * 3600,
    prompt: job.prompt,
    seconds: job.seconds,
    size: job.size,
    remixed_from_video_id: job.remixed_from,
    error: job.status === 'failed' ? { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } : null,
  };
}

/** A form (bracketed names as nested objects) or a JSON body as one object; files kept as they are. */
function fields(body: unknown): Record<string, unknown> | undefined {
  if (isForm(body)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body as Form)) {
      const m = /^([a-z_]+)\[([a-z_]+)\]$/.exec(k);
      if (m) ((out[m[1]] ??= {}) as Record<string, unknown>)[m[2]] = v;
      else out[k] = v;
    }
    return out;
  }
  return isObject(body) ? body : undefined;
}

function checkPrompt(b: Record<string, unknown>, error: ErrorReply): Reply | undefined {
  if (b.prompt === undefined) return error(400, "Missing required parameter: 'prompt'.", { param: 'prompt', code: 'missing_required_parameter' });
  if (typeof b.prompt !== 'string' || !b.prompt) return error(400, "Invalid type for 'prompt': expected a non-empty string.", { param: 'prompt', code: 'invalid_type' });
  return undefined;
}

function oneOf(b: Record<string, unknown>, name: string, allowed: string[], error: ErrorReply): Reply | undefined {
  const v = b[name];
  if (v === undefined || allowed.includes(String(v))) return undefined;
  return error(400, `Invalid value: '${String(v)}'. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, { param: name, code: 'invalid_value' });
}

function create(ctx: RequestContext, error: ErrorReply): Reply {
  const b = fields(ctx.body);
  if (!b) return error(400, 'The request body must be a multipart form or a JSON object.');
  const bad = checkPrompt(b, error) ?? oneOf(b, 'model', SORA_MODELS, error) ?? oneOf(b, 'seconds', SORA_SECONDS, error) ?? oneOf(b, 'size', SORA_SIZES, error);
  if (bad) return bad;
  const ref = b.input_reference;
  if (ref !== undefined && !(ref instanceof UploadedFile) && !(isObject(ref) && (typeof ref.image_url === 'string' || typeof ref.file_id === 'string'))) {
    return error(400, "Invalid 'input_reference': expected an image file or an object with 'image_url' or 'file_id'.", { param: 'input_reference', code: 'invalid_type' });
  }
  const job = newJob(String(b.model ?? 'sora-2'), b.prompt as string, String(b.seconds ?? '4'), String(b.size ?? '720x1280'));
  return json(200, openaiVideo(job));
}

function noVideo(id: string, error: ErrorReply): Reply {
  return error(404, `Video with id '${id}' not found.`, { param: null, code: 'video_not_found' });
}

function derived(ctx: RequestContext, sourceId: string | undefined, error: ErrorReply, kind: 'remix' | 'edit' | 'extension'): Reply {
  const b = fields(ctx.body);
  if (!b) return error(400, 'The request body must be a multipart form or a JSON object.');
  const bad = checkPrompt(b, error);
  if (bad) return bad;
  const id = sourceId ?? (isObject(b.video) && typeof b.video.id === 'string' ? b.video.id : undefined);
  if (!id) return error(400, "Missing required parameter: 'video'.", { param: 'video', code: 'missing_required_parameter' });
  const source = jobs.get(id);
  if (!source) return noVideo(id, error);
  if (source.status !== 'completed') return error(400, `Video '${id}' is not completed yet.`, { param: 'video', code: 'invalid_value' });
  let seconds = source.seconds;
  if (kind === 'extension') {
    const add = oneOf(b, 'seconds', SORA_SECONDS, error);
    if (add) return add;
    if (b.seconds === undefined) return error(400, "Missing required parameter: 'seconds'.", { param: 'seconds', code: 'missing_required_parameter' });
    seconds = String(Number(source.seconds) + Number(b.seconds));
  }
  return json(200, openaiVideo(newJob(source.model, b.prompt as string, seconds, source.size, source.id)));
}

function content(job: Job, variant: string, error: ErrorReply): Reply {
  if (!['video', 'thumbnail', 'spritesheet'].includes(variant)) return error(400, `Invalid value: '${variant}'. Supported values are: 'video', 'thumbnail', 'spritesheet'.`, { param: 'variant', code: 'invalid_value' });
  if (job.status !== 'completed') return error(400, `Video '${job.id}' is not ready: its status is ${job.status}.`, { param: null, code: 'video_not_ready' });
  if (variant === 'video') return { kind: 'bytes', status: 200, length: job.bytes, headers: { 'content-type': 'video/mp4' }, piece: videoPiece };
  const image = Buffer.from(`${variant}:${job.id}`);
  return { kind: 'bytes', status: 200, length: image.length, headers: { 'content-type': variant === 'thumbnail' ? 'image/webp' : 'image/jpeg' }, piece: (o, n) => image.subarray(o, o + n) };
}

function list(ctx: RequestContext): Reply {
  const limit = Math.min(100, Number(ctx.query.limit ?? 20));
  const all = [...jobs.values()].filter((j) => j.id.startsWith('video_')).reverse();
  const data = all.slice(0, limit).map(openaiVideo);
  return json(200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: all.length > limit });
}

function createCharacter(ctx: RequestContext, error: ErrorReply): Reply {
  const b = isForm(ctx.body) ? (ctx.body as Form) : undefined;
  if (!b) return error(400, 'Characters are created with a multipart form.');
  if (typeof b.name !== 'string' || !b.name) return error(400, "Missing required parameter: 'name'.", { param: 'name', code: 'missing_required_parameter' });
  if (!(b.video instanceof UploadedFile)) return error(400, "Missing required parameter: 'video'.", { param: 'video', code: 'missing_required_parameter' });
  const c = { id: nextId('char_'), name: b.name, created_at: nowSeconds() };
  characters.set(c.id, c);
  return json(200, c);
}

const VIDEO_PATH = /^\/v1\/videos\/([^/]+)(\/content|\/remix)?$/;

/** OpenAI's Videos API routes (undefined: not a video path). */
export function openaiVideoRoute(method: string, path: string, error: ErrorReply): Route | undefined {
  if (path === '/v1/videos') {
    if (method === 'POST') return { model: undefined, handle: (ctx) => create(ctx, error) };
    if (method === 'GET') return { model: undefined, handle: list };
    return undefined;
  }
  if (method === 'POST' && path === '/v1/videos/edits') return { model: undefined, handle: (ctx) => derived(ctx, undefined, error, 'edit') };
  if (method === 'POST' && path === '/v1/videos/extensions') return { model: undefined, handle: (ctx) => derived(ctx, undefined, error, 'extension') };
  if (method === 'POST' && path === '/v1/videos/characters') return { model: undefined, handle: (ctx) => createCharacter(ctx, error) };
  const c = /^\/v1\/videos\/characters\/([^/]+)$/.exec(path);
  if (c && method === 'GET') {
    const id = decodeURIComponent(c[1]);
    return { model: undefined, handle: () => (characters.has(id) ? json(200, characters.get(id)) : error(404, `Character '${id}' not found.`, { code: 'not_found' })) };
  }
  const m = VIDEO_PATH.exec(path);
  if (!m) return undefined;
  const id = decodeURIComponent(m[1]);
  const job = jobs.get(id);
  if (m[2] === '/remix') return method === 'POST' ? { model: job?.model, handle: (ctx) => derived(ctx, id, error, 'remix') } : undefined;
  if (m[2] === '/content') return method === 'GET' ? { model: job?.model, handle: (ctx) => (job ? content(job, ctx.query.variant ?? 'video', error) : noVideo(id, error)) } : undefined;
  if (method === 'GET') {
    return {
      model: job?.model,
      handle: () => {
        if (!job) return noVideo(id, error);
        advance(job);
        return json(200, openaiVideo(job));
      },
    };
  }
  if (method === 'DELETE') {
    return { model: job?.model, handle: () => (job && jobs.delete(id) ? json(200, { id, object: 'video.deleted', deleted: true }) : noVideo(id, error)) };
  }
  return undefined;
}

// ---------------------------------------------------------------- Veo (Gemini API and Vertex)

const VEO_MODELS = /^veo-/;

/** Checks a predictLongRunning body as Veo does; the job, or the error reply. */
function veoJob(ctx: RequestContext, model: string, error: ErrorReply): Job | Reply {
  const b = ctx.body;
  if (!VEO_MODELS.test(model)) return error(400, `models/${model} does not support predictLongRunning.`);
  if (!isObject(b) || !Array.isArray(b.instances) || b.instances.length !== 1 || !isObject(b.instances[0])) return error(400, "Invalid JSON payload: 'instances' must hold one instance.");
  const inst = b.instances[0];
  if (typeof inst.prompt !== 'string' || !inst.prompt) return error(400, 'instances[0].prompt: a prompt is required.');
  if (inst.image !== undefined && !(isObject(inst.image) && typeof inst.image.bytesBase64Encoded === 'string' && typeof inst.image.mimeType === 'string')) {
    return error(400, 'instances[0].image: bytesBase64Encoded and mimeType are required.');
  }
  const p = isObject(b.parameters) ? b.parameters : {};
  const duration = p.durationSeconds ?? 8;
  if (typeof duration !== 'number' || duration < 4 || duration > 8) return error(400, `parameters.durationSeconds: ${String(duration)} is out of range [4, 8].`);
  if (p.aspectRatio !== undefined && !['16:9', '9:16'].includes(String(p.aspectRatio))) return error(400, `parameters.aspectRatio: '${String(p.aspectRatio)}' is not supported.`);
  if (p.resolution !== undefined && !['720p', '1080p', '4k'].includes(String(p.resolution))) return error(400, `parameters.resolution: '${String(p.resolution)}' is not supported.`);
  const size = p.aspectRatio === '9:16' ? '720x1280' : '1280x720';
  return newJob(model, inst.prompt, String(duration), size);
}

const isJob = (v: Job | Reply): v is Job => 'polls' in v;

function veoError(job: Job): { code: number; message: string } {
  return { code: 3, message: `The prompt '${job.prompt}' could not be rendered: it violates the usage guidelines.` };
}

function hostOf(ctx: RequestContext): string {
  const h = ctx.headers.host;
  return `http://${typeof h === 'string' ? h : 'localhost'}`;
}

/** Gemini API Veo routes below the gemini prefix (undefined: not a video path). */
export function geminiVideoRoute(method: string, path: string, error: ErrorReply): Route | undefined {
  const create = /^\/(v1beta|v1)\/models\/([^/:]+):predictLongRunning$/.exec(path);
  if (create && method === 'POST') {
    const model = decodeURIComponent(create[2]);
    return {
      model,
      handle: (ctx) => {
        const job = veoJob(ctx, model, error);
        if (!isJob(job)) return job;
        return json(200, { name: `models/${model}/operations/${job.id}` });
      },
    };
  }
  const op = /^\/(v1beta|v1)\/models\/([^/]+)\/operations\/([^/]+)$/.exec(path);
  if (op && method === 'GET') {
    const model = decodeURIComponent(op[2]);
    const id = decodeURIComponent(op[3]);
    return {
      model,
      handle: (ctx) => {
        const job = jobs.get(id);
        if (!job) return error(404, `Operation models/${model}/operations/${id} not found.`);
        advance(job);
        const name = `models/${model}/operations/${id}`;
        if (job.status === 'in_progress' || job.status === 'queued') return json(200, { name });
        if (job.status === 'failed') return json(200, { name, done: true, error: veoError(job) });
        const uri = `${hostOf(ctx)}/${op[1]}/files/${id}:download?alt=media`;
        return json(200, {
          name,
          done: true,
          response: {
            '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
            generateVideoResponse: { generatedSamples: [{ video: { uri } }] },
          },
        });
      },
    };
  }
  const file = /^\/(v1beta|v1)\/files\/([^/:]+):download$/.exec(path);
  if (file && method === 'GET') {
    const id = decodeURIComponent(file[2]);
    return {
      model: undefined,
      handle: (ctx) => {
        const job = jobs.get(id);
        if (!job || job.status !== 'completed') return error(404, `File ${id} not found.`);
        if (ctx.query.alt !== 'media') return error(400, 'Downloading a file requires alt=media.');
        return { kind: 'bytes', status: 200, length: job.bytes, headers: { 'content-type': 'video/mp4' }, piece: videoPiece };
      },
    };
  }
  return undefined;
}

/** Vertex Veo methods on a publisher model path (predictLongRunning, fetchPredictOperation). */
export function vertexVideoMethod(method: string, model: string, scope: string, error: ErrorReply): Route | undefined {
  if (method === 'predictLongRunning') {
    return {
      model,
      handle: (ctx) => {
        const job = veoJob(ctx, model, error);
        if (!isJob(job)) return job;
        return json(200, { name: `${scope}/publishers/google/models/${model}/operations/${job.id}` });
      },
    };
  }
  if (method !== 'fetchPredictOperation') return undefined;
  return {
    model,
    handle: (ctx) => {
      const b = ctx.body;
      if (!isObject(b) || typeof b.operationName !== 'string') return error(400, 'operationName is required.');
      const name = b.operationName;
      const id = name.slice(name.lastIndexOf('/') + 1);
      const job = jobs.get(id);
      if (!job || !name.includes(`/models/${model}/operations/`)) return error(404, `Operation ${name} not found.`);
      advance(job);
      if (job.status === 'in_progress' || job.status === 'queued') return json(200, { name, done: false });
      if (job.status === 'failed') return json(200, { name, done: true, error: veoError(job) });
      // Inline bytes (no storageUri was asked for): small videos only, as the JSON carries them whole.
      const bytes = videoPiece(0, Math.min(job.bytes, 1024 * 1024));
      return json(200, {
        name,
        done: true,
        response: { '@type': 'type.googleapis.com/cloud.ai.large_models.vision.GenerateVideoResponse', raiMediaFilteredCount: 0, videos: [{ bytesBase64Encoded: bytes.toString('base64'), mimeType: 'video/mp4' }] },
      });
    },
  };
}
