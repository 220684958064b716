// Unified video generation: OpenAI's Videos API (a video is a job: queued → in_progress →
// completed or failed, with a progress percentage; its bytes are fetched once it completes). Every
// provider's job is answered in this shape (`Video`); Gemini's and Vertex's Veo long-running
// operations are normalised into it. The request is read from a JSON body or a multipart form (the
// openai SDK sends a form, an image reference as a file part).
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields } from './chat.ts';
import { isFile, type FormFile, type FormPart } from './form.ts';

export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** OpenAI's video object: what every video call answers, whichever provider runs the job. */
export interface Video {
  id: string;
  object: 'video';
  model: string;
  status: VideoStatus;
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  prompt: string | null;
  seconds: string;
  size: string;
  remixed_from_video_id: string | null;
  error: { code: string; message: string } | null;
  extra_fields?: ExtraFields;
}

/** Where a provider's job stands, as the gateway reads it from the provider's own answer. */
export interface VideoJobState {
  status: VideoStatus;
  progress: number;
  /** The provider's id of the job (OpenAI's video id, Veo's operation name). */
  upstreamId?: string;
  seconds?: string;
  size?: string;
  completedAt?: number;
  expiresAt?: number;
  error?: { code: string; message: string };
  /** Where the finished video's bytes are (Gemini: a file URI; Vertex: inline base64), when not the job itself. */
  content?: VideoContentRef;
}

export type VideoContentRef = { kind: 'uri'; uri: string } | { kind: 'inline'; base64: string; mimeType: string } | { kind: 'gcs'; uri: string };

export const VIDEO_VARIANTS = ['video', 'thumbnail', 'spritesheet'] as const;
export type VideoVariant = (typeof VIDEO_VARIANTS)[number];

/** `1280x720`: width x height in pixels. */
const SIZE = '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$';
/** Whole seconds, as a string (OpenAI's API) or a number. */
const SecondsSchema = Type.Union([Type.String({ pattern: '^[1-9][0-9]{0,2}$' }), Type.Integer({ minimum: 1, maximum: 999 })]);
const ReferenceSchema = Type.Object(
  { image_url: Type.Optional(Type.String({ minLength: 1 })), file_id: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false, minProperties: 1 },
);

export const VideoCreateSchema = Type.Object(
  {
    ...GatewayFields,
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    seconds: Type.Optional(SecondsSchema),
    size: Type.Optional(Type.String({ pattern: SIZE })),
    // The reference gateway takes a data URL string; OpenAI's API an object (or a file part).
    input_reference: Type.Optional(Type.Union([Type.String({ minLength: 1 }), ReferenceSchema])),
    negative_prompt: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type VideoCreateBody = Static<typeof VideoCreateSchema>;

/** A create request as the gateway holds it: the checked fields, and an uploaded reference image. */
export interface VideoCreateRequest {
  model: string;
  fallbacks?: readonly string[];
  prompt: string;
  seconds?: string;
  size?: string;
  input_reference?: { image_url?: string; file_id?: string };
  /** An image uploaded as the form's `input_reference` file part. */
  reference_file?: FormFile;
  negative_prompt?: string;
  /** Fields the gateway does not read, forwarded to OpenAI-format providers as sent. */
  extra: Record<string, string>;
}

const KNOWN = new Set(['model', 'fallbacks', 'prompt', 'seconds', 'size', 'input_reference', 'negative_prompt']);

/** The checked body (validated against VideoCreateSchema) as a create request. */
export function createRequestOf(body: VideoCreateBody): VideoCreateRequest {
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (!KNOWN.has(k) && (typeof v === 'string' || typeof v === 'number')) extra[k] = String(v);
  return {
    model: body.model,
    ...(body.fallbacks && { fallbacks: body.fallbacks }),
    prompt: body.prompt,
    ...(body.seconds !== undefined && { seconds: String(body.seconds) }),
    ...(body.size !== undefined && { size: body.size }),
    ...(body.input_reference !== undefined && { input_reference: typeof body.input_reference === 'string' ? { image_url: body.input_reference } : body.input_reference }),
    ...(body.negative_prompt !== undefined && { negative_prompt: body.negative_prompt }),
    extra,
  };
}

/**
 * A multipart form as the JSON body it stands for (bracketed names such as
 * `input_reference[image_url]` become members of an object), and the uploaded reference image.
 */
export function formAsBody(parts: readonly FormPart[]): { body: Record<string, unknown>; file?: FormFile; files: FormFile[] } {
  const body: Record<string, unknown> = {};
  const files: FormFile[] = [];
  let file: FormFile | undefined;
  for (const p of parts) {
    if (isFile(p)) {
      files.push(p);
      if (p.name === 'input_reference') file = p;
      continue;
    }
    const m = /^([a-z_]+)\[([a-z_]+)\]$/.exec(p.name);
    if (m) {
      const inner = (body[m[1]] ??= {}) as Record<string, unknown>;
      if (typeof inner === 'object') inner[m[2]] = p.value;
    } else if (p.name === 'fallbacks' || p.name === 'fallbacks[]') {
      ((body.fallbacks ??= []) as string[]).push(p.value);
    } else {
      body[p.name] = p.value;
    }
  }
  return { body, file, files };
}

export const VideoRemixSchema = Type.Object({ prompt: Type.String({ minLength: 1, maxLength: 32_000 }) }, { additionalProperties: true });

/** Edits and extensions: a new prompt on an existing video (by id), extensions with the seconds to add. */
export const VideoDeriveSchema = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 32_000 }),
    video: Type.Object({ id: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    seconds: Type.Optional(SecondsSchema),
  },
  { additionalProperties: true },
);
export type VideoDeriveBody = Static<typeof VideoDeriveSchema>;

export const VideoCharacterSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: true });

/** `1280x720` as width and height. */
export function sizeOf(size: string): { width: number; height: number } | undefined {
  const m = /^(\d+)x(\d+)$/.exec(size);
  return m ? { width: Number(m[1]), height: Number(m[2]) } : undefined;
}

/** Veo's aspect ratio and resolution for a requested size (`1280x720` → 16:9, 720p). */
export function veoShape(size: string | undefined): { aspectRatio?: string; resolution?: string } {
  const s = size ? sizeOf(size) : undefined;
  if (!s) return {};
  const short = Math.min(s.width, s.height);
  return { aspectRatio: s.width >= s.height ? '16:9' : '9:16', resolution: short >= 2160 ? '4k' : short >= 1080 ? '1080p' : '720p' };
}

/** The size a Veo job renders at, from the aspect ratio and resolution it was asked for. */
export function veoSize(aspectRatio: string | undefined, resolution: string | undefined): string {
  const short = resolution === '4k' ? 2160 : resolution === '1080p' ? 1080 : 720;
  const long = Math.round((short * 16) / 9);
  return aspectRatio === '9:16' ? `${short}x${long}` : `${long}x${short}`;
}
