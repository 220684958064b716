// OpenAI wire format: Images (generations, edits, variations) and Audio (speech, transcriptions),
// validated the way the real API validates them and answered in its documented shapes.
//
// Images are real PNGs (one colour per prompt); `gpt-image-*` answers b64_json with usage and can
// stream `image_generation.*` / `image_edit.*` events; `dall-e-*` answers url or b64_json. Speech is
// real-looking audio in the requested format, streamed in several chunks, with the input text
// embedded as metadata; a transcription of such a file returns that text (otherwise
// `Mock transcript of <filename>`), in every response_format.

import { createHash } from 'node:crypto';
import { isNonexistentModel } from './models.ts';
import { json } from './reply.ts';
import { dataEvent, namedEvent, SSE_HEADERS } from './sse.ts';
import { countWords, isObject, nowSeconds, splitWords } from './text.ts';
import { isForm, UploadedFile, type Form } from './multipart.ts';
import {
  embeddedSpeechText, imageFile, imageKind, pieces, pngSize, SPEECH_CONTENT_TYPES, speechAudio, speechSeconds,
  type ImageKind, type SpeechFormat,
} from './media-files.ts';
import { bad, invalidType, invalidValue, missing, openaiError, PARSE_ERROR } from './openai.ts';
import type { JsonObject, Reply, RequestContext } from './types.ts';

const MB = 1024 * 1024;

function unknownParam(k: string): Reply {
  return bad(`Unknown parameter: '${k}'.`, k, 'unknown_parameter');
}

function notFoundModel(model: string): Reply {
  return openaiError(404, `The model \`${model}\` does not exist or you do not have access to it.`, { code: 'model_not_found' });
}

function isReply(v: unknown): v is Reply {
  return isObject(v) && !isForm(v) && (v.kind === 'json' || v.kind === 'sse');
}

/** An integer parameter, from JSON (a number) or a form (its decimal text). */
function intParam(p: JsonObject, k: string, min: number, max: number): number | undefined | Reply {
  const v = p[k];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) return invalidType(k, 'an integer', v);
  if (n < min) return bad(`Invalid '${k}': integer below minimum value. Expected a value >= ${min}, but got ${n} instead.`, k, 'integer_below_min_value');
  if (n > max) return bad(`Invalid '${k}': integer above maximum value. Expected a value <= ${max}, but got ${n} instead.`, k, 'integer_above_max_value');
  return n;
}

function numberParam(p: JsonObject, k: string, min: number, max: number): number | undefined | Reply {
  const v = p[k];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v;
  if (typeof n !== 'number') return invalidType(k, 'a number', v);
  if (n < min) return bad(`Invalid '${k}': number below minimum value. Expected a value >= ${min}, but got ${n} instead.`, k, 'decimal_below_min_value');
  if (n > max) return bad(`Invalid '${k}': number above maximum value. Expected a value <= ${max}, but got ${n} instead.`, k, 'decimal_above_max_value');
  return n;
}

function boolParam(p: JsonObject, k: string): boolean | undefined | Reply {
  const v = p[k];
  if (v === undefined || v === null) return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return invalidType(k, 'a boolean', v);
}

function enumParam<T extends string>(p: JsonObject, k: string, allowed: readonly T[]): T | undefined | Reply {
  const v = p[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v as T)) return invalidValue(k, v, [...allowed]);
  return v as T;
}

function stringParam(p: JsonObject, k: string, required: boolean, max?: number): string | undefined | Reply {
  const v = p[k];
  if (v === undefined || v === null) return required ? missing(k) : undefined;
  if (v instanceof UploadedFile || typeof v !== 'string') return invalidType(k, 'a string', v instanceof UploadedFile ? 'file' : v);
  if (required && v === '') return missing(k);
  if (max !== undefined && v.length > max) {
    return bad(`Invalid '${k}': string too long. Expected a string with maximum length ${max}, but got a string with length ${v.length} instead.`, k, 'string_above_max_length');
  }
  return v;
}

/** The files sent under any of `names` (`image`, `image[]`), or a Reply when one is not a file. */
function filesOf(form: Form, names: string[]): UploadedFile[] | Reply {
  const out: UploadedFile[] = [];
  for (const name of names) {
    const v = form[name];
    for (const item of v === undefined ? [] : Array.isArray(v) ? v : [v]) {
      if (!(item instanceof UploadedFile)) return bad(`Invalid type for '${name}': expected a file, but got a string instead.`, name, 'invalid_type');
      out.push(item);
    }
  }
  return out;
}

/** The request's form; the real API answers JSON sent to a multipart endpoint with a 400. */
function formOf(ctx: RequestContext): Form | Reply {
  const ct = ctx.headers['content-type'];
  if (typeof ct !== 'string' || !/^multipart\/form-data/i.test(ct)) {
    return bad(`Invalid Content-Type header (${String(ct ?? 'none')}), expected multipart/form-data. (HINT: If you're using curl, you can pass in \`-F\` instead of \`-d\`.)`);
  }
  if (!isForm(ctx.body)) return bad('Could not parse multipart form');
  return ctx.body;
}

/** Last value of a text field (forms may repeat a name). */
function fieldsOf(form: Form): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(form)) out[k] = Array.isArray(v) ? v[v.length - 1] : v;
  return out;
}

function checkKnown(p: JsonObject, allowed: Set<string>): Reply | undefined {
  for (const k of Object.keys(p)) if (!allowed.has(k)) return unknownParam(k);
  return undefined;
}

function modelOf(p: JsonObject, fallback: string | undefined): string | Reply {
  const v = p.model;
  if (v === undefined || v === null || v === '') return fallback ?? missing('model');
  if (typeof v !== 'string') return invalidType('model', 'a string', v instanceof UploadedFile ? 'file' : v);
  if (isNonexistentModel(v)) return notFoundModel(v);
  return v;
}

// ---------------------------------------------------------------- images

type Family = 'dall-e-2' | 'dall-e-3' | 'gpt-image';
type ImageOp = 'generation' | 'edit' | 'variation';

/** Unknown image models behave like `dall-e-2`, the API's default. */
function imageFamily(model: string): Family {
  if (model.startsWith('dall-e-3')) return 'dall-e-3';
  if (/^(gpt-image|chatgpt-image)/.test(model)) return 'gpt-image';
  return 'dall-e-2';
}

const SIZES: Record<Family, string[]> = {
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
  'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'],
  'gpt-image': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
};
const QUALITIES: Record<Family, string[]> = {
  'dall-e-2': ['standard'],
  'dall-e-3': ['standard', 'hd'],
  'gpt-image': ['low', 'medium', 'high', 'auto'],
};
const PROMPT_MAX: Record<Family, number> = { 'dall-e-2': 1000, 'dall-e-3': 4000, 'gpt-image': 32000 };
const GPT_IMAGE_ONLY = ['background', 'moderation', 'output_compression', 'output_format', 'partial_images', 'stream', 'input_fidelity'];

const GENERATION_PARAMS = new Set([
  'prompt', 'model', 'n', 'size', 'quality', 'response_format', 'style', 'user', 'background', 'moderation',
  'output_compression', 'output_format', 'partial_images', 'stream', 'safety_identifier',
]);
const EDIT_PARAMS = new Set([
  'image', 'image[]', 'mask', 'prompt', 'model', 'n', 'size', 'quality', 'response_format', 'user', 'background',
  'input_fidelity', 'output_compression', 'output_format', 'partial_images', 'stream', 'safety_identifier',
]);
const VARIATION_PARAMS = new Set(['image', 'model', 'n', 'size', 'response_format', 'user']);

/** Output tokens of one GPT image by quality and shape (square, portrait, landscape). */
const IMAGE_TOKENS: Record<string, Record<string, number>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
};
/** Input tokens billed per image sent to an edit. */
const INPUT_IMAGE_TOKENS = 194;

interface ImageOptions {
  n: number;
  size: string;
  width: number;
  height: number;
  responseFormat: 'url' | 'b64_json';
  quality: string;
  background: string;
  outputFormat: ImageKind;
  stream: boolean;
  partialImages: number;
}

function imageOptions(p: JsonObject, family: Family, op: ImageOp): ImageOptions | Reply {
  const n = intParam(p, 'n', 1, family === 'dall-e-3' ? 1 : 10);
  if (isReply(n)) return n;
  const size = enumParam(p, 'size', SIZES[family]);
  if (isReply(size)) return size;
  let responseFormat: 'url' | 'b64_json' = family === 'gpt-image' ? 'b64_json' : 'url';
  if (p.response_format !== undefined && p.response_format !== null) {
    if (family === 'gpt-image') return unknownParam('response_format');
    const rf = enumParam(p, 'response_format', ['url', 'b64_json'] as const);
    if (isReply(rf)) return rf;
    if (rf) responseFormat = rf;
  }
  if (op !== 'variation') {
    const q = enumParam(p, 'quality', QUALITIES[family]);
    if (isReply(q)) return q;
  }
  if (family === 'dall-e-3') {
    const style = enumParam(p, 'style', ['vivid', 'natural']);
    if (isReply(style)) return style;
  }
  if (family !== 'gpt-image') {
    const extra = GPT_IMAGE_ONLY.find((k) => p[k] !== undefined && p[k] !== null);
    if (extra) return bad(`The '${extra}' parameter is only supported for GPT image models.`, extra, 'unsupported_parameter');
  }
  const background = enumParam(p, 'background', ['transparent', 'opaque', 'auto']);
  if (isReply(background)) return background;
  const outputFormat = enumParam(p, 'output_format', ['png', 'jpeg', 'webp'] as const);
  if (isReply(outputFormat)) return outputFormat;
  if (background === 'transparent' && outputFormat === 'jpeg') {
    return bad('Transparent background is not supported for jpeg output format. Use png or webp.', 'background', 'invalid_value');
  }
  const compression = intParam(p, 'output_compression', 0, 100);
  if (isReply(compression)) return compression;
  if (compression !== undefined && compression < 100 && (outputFormat ?? 'png') === 'png') {
    return bad('Compression less than 100 is not supported for PNG output format.', 'output_compression', 'invalid_value');
  }
  if (op === 'generation') {
    const moderation = enumParam(p, 'moderation', ['low', 'auto']);
    if (isReply(moderation)) return moderation;
  } else if (op === 'edit') {
    const fidelity = enumParam(p, 'input_fidelity', ['low', 'high']);
    if (isReply(fidelity)) return fidelity;
  }
  const partialImages = intParam(p, 'partial_images', 0, 3);
  if (isReply(partialImages)) return partialImages;
  const stream = boolParam(p, 'stream');
  if (isReply(stream)) return stream;
  const resolved = !size || size === 'auto' ? '1024x1024' : size;
  const [width, height] = resolved.split('x').map(Number);
  const quality = typeof p.quality === 'string' ? p.quality : family === 'gpt-image' ? 'auto' : 'standard';
  return {
    n: n ?? 1,
    size: resolved,
    width,
    height,
    responseFormat,
    quality: quality === 'auto' ? 'medium' : quality,
    background: !background || background === 'auto' ? 'opaque' : background,
    outputFormat: outputFormat ?? 'png',
    stream: stream ?? false,
    partialImages: partialImages ?? 0,
  };
}

function imageUrl(id: string): string {
  return `https://oaidalleapiprodscus.blob.core.windows.net/private/org-mock/user-mock/img-${id}.png?st=2025-01-01T00%3A00%3A00Z&se=2025-01-01T02%3A00%3A00Z&sp=r&sig=mock`;
}

function imageReply(ctx: RequestContext, family: Family, op: ImageOp, o: ImageOptions, seed: string, prompt: string, inputImages: number): Reply {
  const created = nowSeconds();
  const images = Array.from({ length: o.n }, (_, i) => imageFile(o.outputFormat, o.width, o.height, `${seed}#${i}`));
  if (family !== 'gpt-image') {
    const data = images.map((img) => ({
      ...(o.responseFormat === 'url' ? { url: imageUrl(ctx.nextId()) } : { b64_json: img.toString('base64') }),
      ...(family === 'dall-e-3' ? { revised_prompt: `A detailed, high-quality rendering of: ${prompt}` } : {}),
    }));
    return json(200, { created, data });
  }
  const textTokens = countWords(prompt);
  const imageTokens = inputImages * INPUT_IMAGE_TOKENS;
  const perImage = IMAGE_TOKENS[o.quality]?.[o.size] ?? IMAGE_TOKENS.medium['1024x1024'];
  const usage = (count: number) => ({
    input_tokens: textTokens + imageTokens,
    input_tokens_details: { image_tokens: imageTokens, text_tokens: textTokens },
    output_tokens: perImage * count,
    total_tokens: textTokens + imageTokens + perImage * count,
  });
  const meta = { background: o.background, output_format: o.outputFormat, quality: o.quality, size: o.size };
  if (!o.stream) return json(200, { created, ...meta, data: images.map((img) => ({ b64_json: img.toString('base64') })), usage: usage(o.n) });
  const prefix = op === 'edit' ? 'image_edit' : 'image_generation';
  const events: string[] = [];
  images.forEach((img, i) => {
    for (let k = 0; k < o.partialImages; k++) {
      const partial = imageFile(o.outputFormat, o.width, o.height, `${seed}#${i}~${k}`);
      const type = `${prefix}.partial_image`;
      events.push(namedEvent(type, { type, b64_json: partial.toString('base64'), created_at: created, ...meta, partial_image_index: k }));
    }
    const type = `${prefix}.completed`;
    events.push(namedEvent(type, { type, b64_json: img.toString('base64'), created_at: created, ...meta, usage: usage(1) }));
  });
  return { kind: 'sse', events, headers: SSE_HEADERS };
}

function generations(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad(PARSE_ERROR);
  const body = ctx.body;
  if (!isObject(body) || isForm(body)) return bad('Invalid type for request body: expected an object.');
  const unknown = checkKnown(body, GENERATION_PARAMS);
  if (unknown) return unknown;
  const model = modelOf(body, 'dall-e-2');
  if (isReply(model)) return model;
  const family = imageFamily(model);
  const prompt = stringParam(body, 'prompt', true, PROMPT_MAX[family]);
  if (isReply(prompt) || prompt === undefined) return prompt ?? missing('prompt');
  const o = imageOptions(body, family, 'generation');
  if (isReply(o)) return o;
  return imageReply(ctx, family, 'generation', o, `${model}:${prompt}`, prompt, 0);
}

function sha(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 16);
}

/** dall-e-2 takes one square PNG under 4 MB (and a mask of the same size). */
function checkDallE2Png(file: UploadedFile, param: string): Reply | undefined {
  const dims = pngSize(file.data);
  if (!dims || file.data.length >= 4 * MB) return bad('Uploaded image must be a PNG and less than 4 MB.', param, 'invalid_image_format');
  if (dims.width !== dims.height) return bad('Uploaded image must be square.', param, 'invalid_image_format');
  return undefined;
}

function edits(ctx: RequestContext): Reply {
  const form = formOf(ctx);
  if (isReply(form)) return form;
  const p = fieldsOf(form);
  const unknown = checkKnown(p, EDIT_PARAMS);
  if (unknown) return unknown;
  const model = modelOf(p, 'dall-e-2');
  if (isReply(model)) return model;
  const family = imageFamily(model);
  if (family === 'dall-e-3') return invalidValue('model', model, ['dall-e-2', 'gpt-image-1']);
  const images = filesOf(form, ['image', 'image[]']);
  if (isReply(images)) return images;
  if (images.length === 0) return missing('image');
  const prompt = stringParam(p, 'prompt', true, PROMPT_MAX[family]);
  if (isReply(prompt) || prompt === undefined) return prompt ?? missing('prompt');
  const masks = filesOf(form, ['mask']);
  if (isReply(masks)) return masks;
  if (family === 'dall-e-2') {
    if (images.length > 1) return bad('dall-e-2 accepts a single image to edit.', 'image', 'invalid_value');
    const imageErr = checkDallE2Png(images[0], 'image');
    if (imageErr) return imageErr;
    if (masks[0]) {
      const maskErr = checkDallE2Png(masks[0], 'mask');
      if (maskErr) return maskErr;
      const a = pngSize(images[0].data)!;
      const b = pngSize(masks[0].data)!;
      if (a.width !== b.width || a.height !== b.height) return bad('Invalid mask image: the mask and image must have the same dimensions.', 'mask', 'invalid_value');
    }
  } else {
    if (images.length > 16) return bad(`Invalid 'image': array too long. Expected an array with maximum length 16, but got an array with length ${images.length} instead.`, 'image', 'array_above_max_length');
    for (const img of images) {
      if (!imageKind(img.data) || img.data.length >= 50 * MB) {
        return bad(`Invalid image file '${img.filename}': must be a png, webp, or jpg file under 50 MB.`, 'image', 'invalid_image_format');
      }
    }
    if (masks[0] && imageKind(masks[0].data) !== 'png') return bad('Invalid mask image: the mask must be a PNG file.', 'mask', 'invalid_image_format');
  }
  const o = imageOptions(p, family, 'edit');
  if (isReply(o)) return o;
  return imageReply(ctx, family, 'edit', o, `${model}:${prompt}:${images.map((i) => sha(i.data)).join(',')}`, prompt, images.length);
}

function variations(ctx: RequestContext): Reply {
  const form = formOf(ctx);
  if (isReply(form)) return form;
  const p = fieldsOf(form);
  const unknown = checkKnown(p, VARIATION_PARAMS);
  if (unknown) return unknown;
  const model = modelOf(p, 'dall-e-2');
  if (isReply(model)) return model;
  if (model !== 'dall-e-2') return invalidValue('model', model, ['dall-e-2']);
  const images = filesOf(form, ['image']);
  if (isReply(images)) return images;
  if (images.length === 0) return missing('image');
  const imageErr = checkDallE2Png(images[0], 'image');
  if (imageErr) return imageErr;
  const o = imageOptions(p, 'dall-e-2', 'variation');
  if (isReply(o)) return o;
  return imageReply(ctx, 'dall-e-2', 'variation', o, `variation:${sha(images[0].data)}`, '', 1);
}

// ---------------------------------------------------------------- speech

const SPEECH_PARAMS = new Set(['model', 'input', 'voice', 'instructions', 'response_format', 'speed', 'stream_format']);
const VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar'];
const SPEECH_FORMATS: SpeechFormat[] = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];

function speech(ctx: RequestContext): Reply {
  if (ctx.badJson) return bad(PARSE_ERROR);
  const body = ctx.body;
  if (!isObject(body) || isForm(body)) return bad('Invalid type for request body: expected an object.');
  const unknown = checkKnown(body, SPEECH_PARAMS);
  if (unknown) return unknown;
  const model = modelOf(body, undefined);
  if (isReply(model)) return model;
  const input = stringParam(body, 'input', true, 4096);
  if (isReply(input) || input === undefined) return input ?? missing('input');
  const voice = body.voice;
  if (voice === undefined || voice === null || voice === '') return missing('voice');
  if (typeof voice === 'string') {
    if (!VOICES.includes(voice) && !voice.startsWith('voice_')) return invalidValue('voice', voice, VOICES);
  } else if (!isObject(voice) || typeof voice.id !== 'string') {
    return invalidType('voice', 'a string or an object with an id', voice);
  }
  const format = enumParam(body, 'response_format', SPEECH_FORMATS);
  if (isReply(format)) return format;
  const speed = numberParam(body, 'speed', 0.25, 4);
  if (isReply(speed)) return speed;
  const legacy = model.startsWith('tts-1');
  const instructions = stringParam(body, 'instructions', false, 4096);
  if (isReply(instructions)) return instructions;
  if (instructions && legacy) return bad(`Instructions are not supported for ${model}.`, 'instructions', 'unsupported_parameter');
  const streamFormat = enumParam(body, 'stream_format', ['sse', 'audio']);
  if (isReply(streamFormat)) return streamFormat;
  if (streamFormat === 'sse' && legacy) return bad(`stream_format 'sse' is not supported for ${model}.`, 'stream_format', 'unsupported_value');

  const audio = speechAudio(format ?? 'mp3', input, speed ?? 1);
  if (streamFormat === 'sse') {
    const events = pieces(audio).map((chunk) => dataEvent({ type: 'speech.audio.delta', audio: chunk.toString('base64') }));
    const inputTokens = countWords(input) + (instructions ? countWords(instructions) : 0);
    const outputTokens = Math.ceil(speechSeconds(input, speed ?? 1) * 20);
    events.push(dataEvent({ type: 'speech.audio.done', usage: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens } }));
    return { kind: 'sse', events, headers: SSE_HEADERS };
  }
  // The audio goes out in several writes, as the real API streams it (chunked, no content-length).
  return { kind: 'sse', events: pieces(audio).map((b) => b.toString('latin1')), encoding: 'latin1', headers: { 'content-type': SPEECH_CONTENT_TYPES[format ?? 'mp3'] } };
}

// ---------------------------------------------------------------- transcriptions

const TRANSCRIPTION_PARAMS = new Set([
  'file', 'model', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities[]',
  'timestamp_granularities', 'include[]', 'include', 'stream', 'chunking_strategy',
]);
const AUDIO_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'];
const LANGUAGES: Record<string, string> = { en: 'english', fr: 'french', de: 'german', es: 'spanish', it: 'italian', ja: 'japanese' };
const WORD_SECONDS = 0.4;
const SEGMENT_WORDS = 8;

/** Start of word `i`, in seconds (two decimals, as the API reports them). */
function at(i: number): number {
  return Math.round(i * WORD_SECONDS * 100) / 100;
}

interface Segment {
  start: number;
  end: number;
  text: string;
}

function segmentsOf(words: string[]): Segment[] {
  const out: Segment[] = [];
  for (let i = 0; i < words.length; i += SEGMENT_WORDS) {
    const group = words.slice(i, i + SEGMENT_WORDS);
    out.push({ start: at(i), end: at(i + group.length), text: group.join(' ') });
  }
  return out;
}

function timestamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const hh = String(Math.floor(ms / 3_600_000)).padStart(2, '0');
  const mm = String(Math.floor(ms / 60_000) % 60).padStart(2, '0');
  const ss = String(Math.floor(ms / 1000) % 60).padStart(2, '0');
  return `${hh}:${mm}:${ss}${sep}${String(ms % 1000).padStart(3, '0')}`;
}

function listField(form: Form, name: string): string[] {
  const v = form[`${name}[]`] ?? form[name];
  return (v === undefined ? [] : Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

function transcriptions(ctx: RequestContext): Reply {
  const form = formOf(ctx);
  if (isReply(form)) return form;
  const p = fieldsOf(form);
  const unknown = checkKnown(p, TRANSCRIPTION_PARAMS);
  if (unknown) return unknown;
  const files = filesOf(form, ['file']);
  if (isReply(files)) return files;
  if (files.length === 0) return missing('file');
  const model = modelOf(p, undefined);
  if (isReply(model)) return model;
  const file = files[0];
  const ext = /\.([^.]+)$/.exec(file.filename)?.[1]?.toLowerCase();
  if (!ext || !AUDIO_EXTENSIONS.includes(ext)) {
    return bad(`Invalid file format. Supported formats: [${AUDIO_EXTENSIONS.map((e) => `'${e}'`).join(', ')}]`, 'file', 'invalid_value');
  }
  if (file.data.length > 25 * MB) return openaiError(413, `Maximum content size limit (${25 * MB}) exceeded (${file.data.length} bytes read)`, { code: null });
  const format = enumParam(p, 'response_format', TRANSCRIPT_FORMATS) ?? 'json';
  if (isReply(format)) return format;
  const tokens = model.startsWith('gpt-4o');
  if (tokens && format !== 'json' && format !== 'text') {
    return bad(`response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text'.`, 'response_format', 'unsupported_value');
  }
  const temperature = numberParam(p, 'temperature', 0, 1);
  if (isReply(temperature)) return temperature;
  const granularities = listField(form, 'timestamp_granularities');
  const badGranularity = granularities.find((g) => g !== 'word' && g !== 'segment');
  if (badGranularity) return invalidValue('timestamp_granularities[]', badGranularity, ['word', 'segment']);
  if (granularities.length && format !== 'verbose_json') {
    return bad("timestamp_granularities is only supported with response_format 'verbose_json'.", 'timestamp_granularities', 'invalid_value');
  }
  const include = listField(form, 'include');
  if (include.some((i) => i !== 'logprobs')) return invalidValue('include[]', include.find((i) => i !== 'logprobs'), ['logprobs']);
  if (include.length && (!tokens || format !== 'json')) return bad("include[]=logprobs is only supported with response_format 'json' and the gpt-4o transcribe models.", 'include', 'invalid_value');
  const stream = boolParam(p, 'stream');
  if (isReply(stream)) return stream;
  const language = stringParam(p, 'language', false);
  if (isReply(language)) return language;
  const prompt = stringParam(p, 'prompt', false);
  if (isReply(prompt)) return prompt;

  const text = embeddedSpeechText(file.data) ?? `Mock transcript of ${file.filename}`;
  const words = splitWords(text).map((w) => w.trim());
  const duration = at(Math.max(1, words.length));
  const audioTokens = Math.ceil(duration * 10);
  const textTokens = prompt ? countWords(prompt) : 0;
  const usage = tokens
    ? { type: 'tokens', input_tokens: audioTokens + textTokens, input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens }, output_tokens: words.length, total_tokens: audioTokens + textTokens + words.length }
    : { type: 'duration', seconds: Math.ceil(duration) };
  const logprobs = include.length ? words.map((w) => ({ token: w, logprob: -0.01, bytes: [...Buffer.from(w)] })) : undefined;

  // Streaming is a gpt-4o transcribe feature; whisper-1 ignores the flag, as documented.
  if (stream && tokens) {
    const events = splitWords(text).map((delta) => dataEvent({ type: 'transcript.text.delta', delta, ...(logprobs ? { logprobs: [] } : {}) }));
    events.push(dataEvent({ type: 'transcript.text.done', text, ...(logprobs ? { logprobs } : {}), usage }));
    return { kind: 'sse', events, headers: SSE_HEADERS };
  }
  const segments = segmentsOf(words);
  const textReply = (body: string, type = 'text/plain; charset=utf-8'): Reply => ({ kind: 'json', status: 200, body, headers: { 'content-type': type } });
  switch (format) {
    case 'text':
      return textReply(`${text}\n`);
    case 'srt':
      return textReply(segments.map((s, i) => `${i + 1}\n${timestamp(s.start, ',')} --> ${timestamp(s.end, ',')}\n${s.text}\n\n`).join(''));
    case 'vtt':
      return textReply(`WEBVTT\n\n${segments.map((s) => `${timestamp(s.start, '.')} --> ${timestamp(s.end, '.')}\n${s.text}\n\n`).join('')}`, 'text/vtt; charset=utf-8');
    case 'verbose_json':
      return json(200, {
        task: 'transcribe',
        language: LANGUAGES[language ?? 'en'] ?? language ?? 'english',
        duration,
        text,
        ...(granularities.includes('word') ? { words: words.map((word, i) => ({ word, start: at(i), end: at(i + 1) })) } : {}),
        ...(granularities.length === 0 || granularities.includes('segment')
          ? {
            segments: segments.map((s, id) => ({
              id, seek: 0, start: s.start, end: s.end, text: ` ${s.text}`, tokens: s.text.split(' ').map((w) => 1000 + w.length),
              temperature: temperature ?? 0, avg_logprob: -0.2, compression_ratio: 1.2, no_speech_prob: 0.01,
            })),
          }
          : {}),
        usage,
      });
    default:
      return json(200, { text, ...(logprobs ? { logprobs } : {}), usage });
  }
}

// ---------------------------------------------------------------- module

const MEDIA_ROUTES = new Map<string, (ctx: RequestContext) => Reply>([
  ['/v1/images/generations', generations],
  ['/v1/images/edits', edits],
  ['/v1/images/variations', variations],
  ['/v1/audio/speech', speech],
  ['/v1/audio/transcriptions', transcriptions],
]);

/** The handler of an OpenAI images or audio path (POST), if `path` is one. */
export function openaiMediaHandler(path: string): ((ctx: RequestContext) => Reply) | undefined {
  return MEDIA_ROUTES.get(path);
}
