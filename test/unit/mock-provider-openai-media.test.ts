// The mock's OpenAI images and audio endpoints, checked with the official `openai` SDK directly
// (no gateway): documented shapes, validation as the real API does it, and real-looking media.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { embeddedSpeechText, png, pngSize, speechAudio, type SpeechFormat } from '../mock-provider/media-files.ts';
import { OPENAI_AUTH, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let client: OpenAI;

before(async () => {
  mock = await startMockProvider();
  client = new OpenAI({ baseURL: `${mock.url}/openai/v1`, apiKey: 'sk-test', maxRetries: 0 });
});
after(() => mock.close());

async function rejects(p: Promise<unknown>, status: number, message: RegExp, param?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof OpenAI.APIError, String(e));
    assert.equal(e.status, status);
    assert.match(e.message, message);
    if (param !== undefined) assert.equal(e.param, param);
    return true;
  });
}

describe('mock media files', () => {
  test('PNGs are valid and sized; speech carries its text in every format that has metadata', () => {
    const image = png(64, 32, 'seed');
    assert.deepEqual(pngSize(image), { width: 64, height: 32 });
    for (const format of ['mp3', 'wav', 'flac', 'opus'] as SpeechFormat[]) {
      assert.equal(embeddedSpeechText(speechAudio(format, 'Grüße aus dem Mock')), 'Grüße aus dem Mock', format);
    }
    assert.equal(speechAudio('mp3', 'x').toString('latin1', 0, 3), 'ID3');
    assert.equal(speechAudio('opus', 'x').toString('latin1', 0, 4), 'OggS');
    assert.equal(speechAudio('aac', 'x').readUInt16BE(0) & 0xfff6, 0xfff0);
  });
});

describe('openai images', () => {
  test('dall-e-3 answers one image with a revised prompt, as a URL by default', async () => {
    const res = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse' });
    assert.equal(res.data?.length, 1);
    assert.match(res.data![0].url!, /^https:\/\/.+\.png\?/);
    assert.match(res.data![0].revised_prompt!, /a lighthouse/);
    await rejects(client.images.generate({ model: 'dall-e-3', prompt: 'x', n: 2 }), 400, /integer above maximum value/, 'n');
    await rejects(client.images.generate({ model: 'dall-e-3', prompt: 'x', size: '256x256' }), 400, /Invalid value: '256x256'/, 'size');
  });

  test('gpt-image-1 answers b64_json PNGs with usage, and refuses response_format', async () => {
    const res = await client.images.generate({ model: 'gpt-image-1', prompt: 'a small red boat', size: '1536x1024', quality: 'high' });
    const image = Buffer.from(res.data![0].b64_json!, 'base64');
    assert.deepEqual(pngSize(image), { width: 1536, height: 1024 });
    assert.equal(res.size, '1536x1024');
    assert.equal(res.quality, 'high');
    assert.deepEqual(res.usage, { input_tokens: 4, input_tokens_details: { image_tokens: 0, text_tokens: 4 }, output_tokens: 6208, total_tokens: 6212 });
    await rejects(client.images.generate({ model: 'gpt-image-1', prompt: 'x', response_format: 'url' }), 400, /Unknown parameter: 'response_format'/);
    await rejects(client.images.generate({ model: 'gpt-image-1', prompt: '' }), 400, /Missing required parameter: 'prompt'/, 'prompt');
  });

  test('gpt-image-1 streams partial images, then the completed one', async () => {
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'stream it', stream: true, partial_images: 2 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    assert.deepEqual(types, ['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
  });

  test('edits take a multipart image; dall-e-2 wants one square PNG', async () => {
    const res = await client.images.edit({ model: 'dall-e-2', prompt: 'add a hat', image: await toFile(png(256, 256, 'cat'), 'cat.png', { type: 'image/png' }), size: '256x256', response_format: 'b64_json' });
    assert.deepEqual(pngSize(Buffer.from(res.data![0].b64_json!, 'base64')), { width: 256, height: 256 });
    const seen = mock.requests.at(-1)!;
    assert.deepEqual(JSON.parse(JSON.stringify(seen.body)), { model: 'dall-e-2', prompt: 'add a hat', image: { filename: 'cat.png', content_type: 'image/png', bytes: png(256, 256, 'cat').length }, size: '256x256', response_format: 'b64_json' });
    await rejects(client.images.edit({ model: 'dall-e-2', prompt: 'x', image: await toFile(png(64, 32, 'w'), 'wide.png') }), 400, /must be square/);
    await rejects(client.images.edit({ model: 'dall-e-2', prompt: 'x', image: await toFile(Buffer.from('GIF89a'), 'a.gif') }), 400, /must be a PNG/);
    const raw = await postRaw(`${mock.url}/openai/v1/images/edits`, { model: 'dall-e-2', prompt: 'x' }, OPENAI_AUTH);
    assert.equal(raw.status, 400);
    assert.match(raw.text, /expected multipart\/form-data/);
  });

  test('variations are dall-e-2 only and need the image', async () => {
    const res = await client.images.createVariation({ image: await toFile(png(512, 512, 'v'), 'v.png'), n: 3, size: '512x512' });
    assert.equal(res.data?.length, 3);
    await rejects(client.images.createVariation({ model: 'gpt-image-1', image: await toFile(png(512, 512, 'v'), 'v.png') }), 400, /Invalid value: 'gpt-image-1'/, 'model');
  });
});

describe('openai audio', () => {
  test('speech streams audio of the requested format in several chunks', async () => {
    const res = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'Testing one two', voice: 'coral', response_format: 'wav' });
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    const audio = Buffer.from(await res.arrayBuffer());
    assert.equal(audio.toString('latin1', 0, 4), 'RIFF');
    assert.equal(embeddedSpeechText(audio), 'Testing one two');
    assert.ok(audio.equals(Buffer.from(mock.requests.at(-1)!.responseBody!, 'latin1')));
    await rejects(client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'robot' }), 400, /Invalid value: 'robot'/, 'voice');
    await rejects(client.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy', instructions: 'whisper' }), 400, /Instructions are not supported/);
    await rejects(client.audio.speech.create({ model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' }), 400, /string too long/, 'input');
  });

  test('transcriptions read the text back, in each response format', async () => {
    const file = await toFile(speechAudio('mp3', 'Hello from the mock'), 'hello.mp3');
    const json = await client.audio.transcriptions.create({ model: 'whisper-1', file });
    assert.deepEqual(json, { text: 'Hello from the mock', usage: { type: 'duration', seconds: 2 } });
    assert.equal(await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'text' }), 'Hello from the mock\n');
    assert.equal(await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'srt' }), '1\n00:00:00,000 --> 00:00:01,600\nHello from the mock\n\n');
    assert.equal(await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'vtt' }), 'WEBVTT\n\n00:00:00.000 --> 00:00:01.600\nHello from the mock\n\n');
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
    assert.equal(verbose.duration, 1.6);
    assert.equal(verbose.words?.length, 4);
    assert.equal(verbose.segments?.[0].text, ' Hello from the mock');
    const other = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.from('not really audio'), 'note.wav') });
    assert.equal(other.text, 'Mock transcript of note.wav');
    await rejects(client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.from('x'), 'notes.txt') }), 400, /Invalid file format/);
    await rejects(client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file, response_format: 'srt' }), 400, /not compatible/, 'response_format');
  });

  test('gpt-4o transcribe streams transcript events ending with usage', async () => {
    const stream = await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await toFile(speechAudio('mp3', 'One two three'), 'a.mp3'), stream: true });
    let text = '';
    let done: OpenAI.Audio.TranscriptionTextDoneEvent | undefined;
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') text += ev.delta;
      else if (ev.type === 'transcript.text.done') done = ev;
    }
    assert.equal(text, 'One two three');
    assert.equal(done?.text, 'One two three');
    assert.equal(done?.usage?.type, 'tokens');
  });
});
