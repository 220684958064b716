// Image and audio requests. JSON operations (image generation, speech) have TypeBox schemas like the
// other unified requests; multipart operations (image edit and variation, transcription) keep the
// client's form as it is, with only the gateway's own fields (`model`, `fallbacks`) taken out.
import { Type, type Static } from '@sinclair/typebox';
import { GatewayFields, type ExtraFields, type Usage } from './chat.ts';
import { invalidRequest } from './errors.ts';
import { isFile, type FormPart } from './form.ts';

const ImageSize = Type.String({ pattern: '^(auto|[0-9]+x[0-9]+)$' });
const ImageResponseFormat = Type.Union([Type.Literal('url'), Type.Literal('b64_json')]);

export const ImageGenerationRequestSchema = Type.Object(
  {
    ...GatewayFields,
    prompt: Type.String({ minLength: 1 }),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    size: Type.Optional(ImageSize),
    response_format: Type.Optional(ImageResponseFormat),
    stream: Type.Optional(Type.Boolean()),
    partial_images: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type ImageGenerationRequest = Static<typeof ImageGenerationRequestSchema>;

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

export const SpeechRequestSchema = Type.Object(
  {
    ...GatewayFields,
    input: Type.String({ minLength: 1 }),
    // A built-in voice name, or a custom voice `{ id }`.
    voice: Type.Union([Type.String({ minLength: 1 }), Type.Object({ id: Type.String({ minLength: 1 }) })]),
    instructions: Type.Optional(Type.String()),
    response_format: Type.Optional(Type.Union(SPEECH_FORMATS.map((f) => Type.Literal(f)))),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    stream_format: Type.Optional(Type.Union([Type.Literal('sse'), Type.Literal('audio')])),
  },
  { additionalProperties: true },
);
export type SpeechRequest = Static<typeof SpeechRequestSchema>;

export interface ImageData {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

export interface ImageResponse {
  created: number;
  data: ImageData[];
  background?: string;
  output_format?: string;
  quality?: string;
  size?: string;
  usage?: MediaUsage;
  extra_fields?: ExtraFields;
}

/** Token usage of the image and audio APIs (`input_tokens`/`output_tokens`, not chat's names). */
export interface MediaUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  [key: string]: unknown;
}

/** Image, speech and transcription usage in the chat shape the metrics count. */
export function mediaUsage(u: unknown): Usage | undefined {
  const v = u as MediaUsage | null | undefined;
  if (!v || typeof v.input_tokens !== 'number') return undefined;
  const completion = typeof v.output_tokens === 'number' ? v.output_tokens : 0;
  return { prompt_tokens: v.input_tokens, completion_tokens: completion, total_tokens: typeof v.total_tokens === 'number' ? v.total_tokens : v.input_tokens + completion };
}

// ---------------------------------------------------------------- multipart operations

export type FormOperation = 'image_edit' | 'image_variation' | 'transcription';

/** A multipart request: the model and fallbacks read out, every other part kept in order. */
export interface FormRequest {
  model: string;
  fallbacks?: string[];
  parts: FormPart[];
  /** The last value of each text field, for the gateway's own decisions (`response_format`, `stream`). */
  fields: Readonly<Record<string, string>>;
  stream: boolean;
}

export interface FormSpec {
  /** The file the operation needs, under any of these names (`image` or `image[]`). */
  file: readonly string[];
  /** Allowed values of text fields the gateway checks. */
  enums?: Readonly<Record<string, readonly string[]>>;
}

export const FORM_SPECS: Readonly<Record<FormOperation, FormSpec>> = {
  image_edit: { file: ['image', 'image[]'], enums: { response_format: ['url', 'b64_json'] } },
  image_variation: { file: ['image', 'image[]'], enums: { response_format: ['url', 'b64_json'] } },
  transcription: { file: ['file'], enums: { response_format: ['json', 'text', 'srt', 'verbose_json', 'vtt'] } },
};

const GATEWAY_FIELDS = new Set(['model', 'fallbacks', 'fallbacks[]']);
const BOOLEANS: Record<string, boolean> = { true: true, false: false };

/** Reads a multipart form into a FormRequest; a missing or malformed field is a 400 naming it. */
export function parseForm(parts: readonly FormPart[], spec: FormSpec): FormRequest {
  const fields: Record<string, string> = {};
  const fallbacks: string[] = [];
  let model: string | undefined;
  for (const p of parts) {
    if (isFile(p)) {
      if (GATEWAY_FIELDS.has(p.name) || p.name === 'stream' || p.name === 'response_format') throw invalidRequest(`'${p.name}' must be a text field, not a file`, p.name);
      continue;
    }
    // The rule JSON bodies follow (http/body.ts); `fields` is read by own keys only.
    if (p.name === '__proto__') throw invalidRequest("invalid request body: __proto__: '__proto__' is not allowed as a field name", p.name);
    fields[p.name] = p.value;
    if (p.name === 'model') model = p.value;
    else if (p.name === 'fallbacks' || p.name === 'fallbacks[]') fallbacks.push(...fallbackValues(p.value));
  }
  if (!model) throw invalidRequest("the form field 'model' is required ('provider/model')", 'model');
  const file = parts.find((p) => spec.file.includes(p.name));
  if (!file) throw invalidRequest(`the file field '${spec.file[0]}' is required`, spec.file[0]);
  if (!isFile(file)) throw invalidRequest(`'${file.name}' must be a file upload, not a text field`, file.name);
  for (const [name, allowed] of Object.entries(spec.enums ?? {})) {
    const v = fields[name];
    if (v !== undefined && !allowed.includes(v)) throw invalidRequest(`'${name}' must be one of ${allowed.join(', ')}; got '${v}'`, name);
  }
  let stream = false;
  if (fields.stream !== undefined) {
    const b = Object.hasOwn(BOOLEANS, fields.stream) ? BOOLEANS[fields.stream] : undefined;
    if (b === undefined) throw invalidRequest(`'stream' must be true or false; got '${fields.stream}'`, 'stream');
    stream = b;
  }
  return {
    model,
    ...(fallbacks.length ? { fallbacks } : {}),
    parts: parts.filter((p) => !GATEWAY_FIELDS.has(p.name)),
    fields,
    stream,
  };
}

/** `fallbacks` may repeat, or carry a JSON array in one field. */
function fallbackValues(value: string): string[] {
  if (!value.trimStart().startsWith('[')) return value ? [value] : [];
  let list: unknown;
  try {
    list = JSON.parse(value);
  } catch {
    throw invalidRequest("'fallbacks' is not a valid JSON array", 'fallbacks');
  }
  if (!Array.isArray(list) || !list.every((f) => typeof f === 'string' && f.length > 0)) {
    throw invalidRequest("'fallbacks' must be a list of 'provider/model' strings", 'fallbacks');
  }
  return list as string[];
}

export interface TranscriptionResponse {
  text: string;
  usage?: MediaUsage;
  extra_fields?: ExtraFields;
  [key: string]: unknown;
}

/** Content type of each speech format, for an upstream that does not say. */
export const SPEECH_CONTENT_TYPES: Readonly<Record<(typeof SPEECH_FORMATS)[number], string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
