// Pure helpers of the image and audio operations: form parsing, multipart encoding, usage, the
// event stream plan, relay headers, the OpenAI request builders, and the catalog's offers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { encodeMultipart } from '../../proxy/src/upstream/form-encode.ts';
import type { FormFile, FormPart } from '../../proxy/src/http/multipart.ts';
import { FORM_SPECS, mediaUsage, parseForm } from '../../proxy/src/unified/media.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { encodeMediaEvent, mediaEventPlan } from '../../proxy/src/operations/media-stream-plan.ts';
import { relayHeaders } from '../../proxy/src/pipeline/body-relay.ts';
import { toOpenAIForm, toOpenAIImageGeneration, toOpenAISpeech } from '../../proxy/src/providers/openai/media.ts';
import { PROVIDER_KINDS } from '../../proxy/src/providers/catalog.ts';

const png: FormFile = { name: 'image', filename: 'cat.png', contentType: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]) };

function badRequest(fn: () => unknown, param: string): void {
  assert.throws(fn, (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param);
}

/** Parses a multipart body with busboy, as the gateway does with a client's. */
function parseWithBusboy(body: Buffer, contentType: string): Promise<{ name: string; value: string | Buffer; filename?: string; mimeType?: string }[]> {
  return new Promise((resolve, reject) => {
    const out: { name: string; value: string | Buffer; filename?: string; mimeType?: string }[] = [];
    const bb = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8' });
    bb.on('field', (name, value) => out.push({ name, value }));
    bb.on('file', (name, stream, info) => {
      const part = { name, value: Buffer.alloc(0), filename: info.filename, mimeType: info.mimeType };
      out.push(part);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (part.value = Buffer.concat(chunks)));
    });
    bb.on('close', () => resolve(out));
    bb.on('error', reject);
    Readable.from([body]).pipe(bb);
  });
}

describe('parseForm', () => {
  test('takes model and fallbacks out and keeps every other part in order', () => {
    const parts: FormPart[] = [
      { name: 'prompt', value: 'a hat' },
      { name: 'model', value: 'openai/gpt-image-1' },
      png,
      { name: 'fallbacks[]', value: 'openai/dall-e-2' },
      { name: 'fallbacks', value: '["other/x","more/y"]' },
      { name: 'size', value: '1024x1024' },
    ];
    const form = parseForm(parts, FORM_SPECS.image_edit);
    assert.equal(form.model, 'openai/gpt-image-1');
    assert.deepEqual(form.fallbacks, ['openai/dall-e-2', 'other/x', 'more/y']);
    assert.deepEqual(form.parts.map((p) => p.name), ['prompt', 'image', 'size']);
    assert.equal(form.fields.size, '1024x1024');
    assert.equal(form.stream, false);
  });

  test('reads stream and checks the response formats it must act on', () => {
    const file: FormFile = { ...png, name: 'file', filename: 'a.mp3' };
    const form = parseForm([{ name: 'model', value: 'openai/gpt-4o-transcribe' }, file, { name: 'stream', value: 'true' }, { name: 'response_format', value: 'text' }], FORM_SPECS.transcription);
    assert.equal(form.stream, true);
    assert.equal(form.fields.response_format, 'text');
    badRequest(() => parseForm([{ name: 'model', value: 'm' }, file, { name: 'response_format', value: 'docx' }], FORM_SPECS.transcription), 'response_format');
    badRequest(() => parseForm([{ name: 'model', value: 'm' }, file, { name: 'stream', value: 'yes' }], FORM_SPECS.transcription), 'stream');
  });

  test('names the missing or malformed field', () => {
    badRequest(() => parseForm([png], FORM_SPECS.image_edit), 'model');
    badRequest(() => parseForm([{ name: 'model', value: 'openai/dall-e-2' }], FORM_SPECS.image_variation), 'image');
    badRequest(() => parseForm([{ name: 'model', value: 'openai/dall-e-2' }, { name: 'image', value: 'not a file' }], FORM_SPECS.image_variation), 'image');
    badRequest(() => parseForm([{ name: 'model', value: 'openai/whisper-1' }, png], FORM_SPECS.transcription), 'file');
    badRequest(() => parseForm([{ name: 'model', value: 'm' }, png, { name: 'fallbacks', value: '[1,2]' }], FORM_SPECS.image_edit), 'fallbacks');
    badRequest(() => parseForm([{ ...png, name: 'model' }, png], FORM_SPECS.image_edit), 'model');
  });

  test('accepts image[] for several images', () => {
    const form = parseForm([{ name: 'model', value: 'openai/gpt-image-1' }, { ...png, name: 'image[]' }, { ...png, name: 'image[]' }], FORM_SPECS.image_edit);
    assert.equal(form.parts.length, 2);
  });
});

describe('encodeMultipart', () => {
  test('round-trips through busboy: fields, files, bytes and names', async () => {
    const bytes = Buffer.from([0, 255, 13, 10, 45, 45, 1]);
    const parts: FormPart[] = [
      { name: 'model', value: 'dall-e-2' },
      { name: 'prompt', value: 'ünïcode "quoted"\r\nline' },
      { name: 'image', filename: 'tête "1".png', contentType: 'image/png', data: bytes },
      { name: 'include[]', value: 'logprobs' },
    ];
    const { bytes: body, contentType } = encodeMultipart(parts);
    assert.match(contentType, /^multipart\/form-data; boundary=----skybridge[0-9a-f]{24}$/);
    const back = await parseWithBusboy(body, contentType);
    assert.deepEqual(back.map((p) => p.name), ['model', 'prompt', 'image', 'include[]']);
    assert.equal(back[1].value, 'ünïcode "quoted"\r\nline');
    assert.ok(Buffer.isBuffer(back[2].value) && back[2].value.equals(bytes));
    assert.equal(back[2].mimeType, 'image/png');
    // WHATWG escaping keeps the quote inside the filename parameter.
    assert.equal(back[2].filename, 'tête %221%22.png');
  });

  test('a fresh boundary per body', () => {
    assert.notEqual(encodeMultipart([]).contentType, encodeMultipart([]).contentType);
  });
});

describe('OpenAI media requests', () => {
  test('a form goes upstream with the bare model first and the client parts after it', async () => {
    const form = parseForm([{ name: 'prompt', value: 'p' }, { name: 'model', value: 'openai/dall-e-2' }, png, { name: 'fallbacks', value: 'openai/x' }], FORM_SPECS.image_edit);
    const up = toOpenAIForm('image_edit', form, 'dall-e-2');
    assert.equal(up.path, '/images/edits');
    assert.equal(up.requestType, 'image_edit');
    assert.equal(up.body, undefined);
    const back = await parseWithBusboy(up.payload!.bytes, up.payload!.contentType);
    assert.deepEqual(back.map((p) => [p.name, Buffer.isBuffer(p.value) ? p.value.length : p.value]), [['model', 'dall-e-2'], ['prompt', 'p'], ['image', png.data.length]]);
    assert.equal(toOpenAIForm('transcription', form, 'whisper-1').path, '/audio/transcriptions');
    assert.equal(toOpenAIForm('image_variation', form, 'dall-e-2').path, '/images/variations');
  });

  test('JSON operations drop the gateway fields; speech asks for audio or SSE', () => {
    const gen = toOpenAIImageGeneration({ model: 'openai/gpt-image-1', prompt: 'x', fallbacks: ['a/b'], stream: true }, 'gpt-image-1');
    assert.deepEqual(gen.body, { model: 'gpt-image-1', prompt: 'x', stream: true });
    assert.equal(gen.stream, true);
    const audio = toOpenAISpeech({ model: 'openai/tts-1', input: 'hi', voice: 'alloy' }, 'tts-1');
    assert.deepEqual(audio.body, { model: 'tts-1', input: 'hi', voice: 'alloy' });
    assert.equal(audio.accept, '*/*');
    assert.equal(toOpenAISpeech({ model: 'm', input: 'hi', voice: 'alloy', stream_format: 'sse' }, 'm').accept, 'text/event-stream');
  });
});

describe('media usage and event streams', () => {
  test('mediaUsage maps input/output tokens onto the chat names', () => {
    assert.deepEqual(mediaUsage({ input_tokens: 3, output_tokens: 272, total_tokens: 275 }), { prompt_tokens: 3, completion_tokens: 272, total_tokens: 275 });
    assert.deepEqual(mediaUsage({ type: 'tokens', input_tokens: 5 }), { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    assert.equal(mediaUsage({ type: 'duration', seconds: 9 }), undefined);
    assert.equal(mediaUsage(undefined), undefined);
  });

  test('events relay one for one, keep their name, and count the final usage', () => {
    const plan = mediaEventPlan();
    const [delta] = plan.translator.push({ data: '{"type":"transcript.text.delta","delta":"Hi"}' });
    const [done] = plan.translator.push({ data: '{"type":"transcript.text.done","text":"Hi","usage":{"type":"tokens","input_tokens":4,"output_tokens":1,"total_tokens":5}}' });
    const [named] = plan.translator.push({ event: 'image_generation.completed', data: '{"type":"image_generation.completed","b64_json":"AA=="}' });
    const [sentinel] = plan.translator.push({ data: '[DONE]' });
    assert.equal(plan.terminal(delta), false);
    assert.equal(plan.terminal(done), true);
    assert.equal(plan.terminal(named), true);
    assert.deepEqual(plan.usage(done), { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 });
    plan.decorate(delta, { provider: 'openai', chunk_index: 0 });
    assert.equal(encodeMediaEvent(delta), 'data: {"type":"transcript.text.delta","delta":"Hi","extra_fields":{"provider":"openai","chunk_index":0}}\n\n');
    assert.match(encodeMediaEvent(named), /^event: image_generation\.completed\ndata: \{"type":"image_generation\.completed"/);
    assert.equal(encodeMediaEvent(sentinel), 'data: [DONE]\n\n');
    assert.match(plan.errorEvent(new GatewayError(502, 'boom')), /^event: error\ndata: \{"is_bifrost_error":true,"status_code":502,"error":\{"message":"boom"/);
  });

  test('relayed bodies keep the upstream content type, or get the expected one', () => {
    assert.deepEqual(relayHeaders({ 'content-type': 'audio/wav', 'content-length': '44', server: 'x', 'set-cookie': ['a'] }, 'audio/mpeg'), { 'content-type': 'audio/wav', 'content-length': '44' });
    assert.deepEqual(relayHeaders({}, 'audio/mpeg'), { 'content-type': 'audio/mpeg' });
  });
});

describe('catalog', () => {
  test('OpenAI offers every media operation; others what their APIs document', () => {
    for (const op of ['image_generation', 'image_edit', 'image_variation', 'speech', 'transcription'] as const) assert.ok(PROVIDER_KINDS.openai.operations.has(op), op);
    assert.ok(PROVIDER_KINDS.groq.operations.has('transcription'));
    assert.ok(PROVIDER_KINDS.groq.operations.has('speech'));
    assert.ok(!PROVIDER_KINDS.groq.operations.has('image_generation'));
    assert.ok(PROVIDER_KINDS.mistral.operations.has('transcription'));
    assert.ok(PROVIDER_KINDS.xai.operations.has('image_generation'));
    assert.ok(!PROVIDER_KINDS.anthropic.operations.has('image_generation'));
    assert.ok(!PROVIDER_KINDS.anthropic.operations.has('transcription'));
  });
});
