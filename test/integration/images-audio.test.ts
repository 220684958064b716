// Images and audio through the gateway with the official OpenAI SDK: generation, edits and
// variations (multipart), speech streamed as audio bytes, transcriptions in each format, the
// unsupported-operation 400 and the upload size limit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { embeddedSpeechText, png, pngSize, speechAudio } from '../mock-provider/media-files.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { compat } from '../helpers/compat.ts';

let mock: MockProvider;
let gateway: InProcessGateway;
let client: OpenAI;

const MAX_MB = 1;

before(async () => {
  // Events and audio chunks 25 ms apart, so a test can see the gateway pass them on one by one.
  mock = await startMockProvider({ chunkDelayMs: 25 });
  gateway = await startGateway({
    client: { max_request_body_size_mb: MAX_MB },
    providers: {
      ...mockProviders(mock.url),
      // Groq speaks OpenAI's audio API under its own prefix; here it is the mock's OpenAI dialect.
      groq: { keys: [{ name: 'groq-key', value: 'sk-groq-test' }], network_config: { base_url: `${mock.url}/openai` } },
    },
  });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
});
after(async () => {
  await gateway.stop();
  await mock.close();
});

interface Extra {
  extra_fields?: { provider?: string; request_type?: string; model_requested?: string };
}

/** A request field the SDK types do not know (`fallbacks`). */
function withFallbacks<T extends object>(params: T, fallbacks: string[]): T {
  return { ...params, fallbacks } as T;
}

async function rejects(p: Promise<unknown>, status: number, check: (e: InstanceType<typeof OpenAI.APIError>) => void = () => undefined): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof OpenAI.APIError, String(e));
    assert.equal(e.status, status, e.message);
    check(e);
    return true;
  });
}

describe('images', () => {
  test(`generate: the provider prefix is stripped and the images come back with extra_fields ${compat('/v1', 'images.generate', 'openai')}`, async () => {
    const res = await client.images.generate({ model: 'openai/dall-e-3', prompt: 'a lighthouse at dusk', response_format: 'b64_json' });
    assert.equal(res.data?.length, 1);
    assert.deepEqual(pngSize(Buffer.from(res.data![0].b64_json!, 'base64')), { width: 1024, height: 1024 });
    assert.match(res.data![0].revised_prompt!, /a lighthouse at dusk/);
    assert.deepEqual((res as Extra).extra_fields && { ...(res as Extra).extra_fields, latency: undefined }, {
      provider: 'openai', request_type: 'image_generation', model_requested: 'openai/dall-e-3', latency: undefined,
    });
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.path, '/openai/v1/images/generations');
    assert.deepEqual(seen.body, { model: 'dall-e-3', prompt: 'a lighthouse at dusk', response_format: 'b64_json' });
  });

  test(`generate with gpt-image-1: usage, and streamed partial images ${compat('/v1', 'images.generate.stream', 'openai')}`, async () => {
    const res = await client.images.generate({ model: 'openai/gpt-image-1', prompt: 'a red kite', quality: 'low', size: '1024x1536' });
    assert.equal(res.size, '1024x1536');
    assert.equal(res.usage?.output_tokens, 408);
    const stream = await client.images.generate({ model: 'openai/gpt-image-1', prompt: 'a red kite', stream: true, partial_images: 1, size: '1024x1024', quality: 'low' });
    const events: (OpenAI.ImageGenStreamEvent & Extra)[] = [];
    for await (const ev of stream) events.push(ev);
    assert.deepEqual(events.map((e) => e.type), ['image_generation.partial_image', 'image_generation.completed']);
    assert.equal(events[1].extra_fields?.provider, 'openai');
    assert.ok(events[1].type === 'image_generation.completed' && events[1].usage.output_tokens === 272);
  });

  test(`edit: the uploaded file reaches the provider intact, through a fallback too ${compat('/v1', 'images.edit', 'openai')}`, async () => {
    const image = png(256, 256, 'a cat');
    // The first attempt fails with a 503; the fallback gets the same form again.
    mock.inject({ format: 'openai', status: 503 });
    const before = mock.requests.length;
    const res = await client.images.edit(withFallbacks({
      model: 'openai/gpt-image-1',
      prompt: 'give the cat a hat',
      image: await toFile(image, 'cat.png', { type: 'image/png' }),
      size: '256x256',
    }, ['openai/dall-e-2']));
    assert.equal(mock.requests.length - before, 2);
    const [first, second] = mock.requests.slice(-2).map((r) => JSON.parse(JSON.stringify(r.body)) as Record<string, unknown>);
    assert.deepEqual(first, { model: 'gpt-image-1', prompt: 'give the cat a hat', image: { filename: 'cat.png', content_type: 'image/png', bytes: image.length }, size: '256x256' });
    assert.equal(second.model, 'dall-e-2');
    assert.deepEqual(second.image, first.image);
    // dall-e-2 answers a URL by default; the answer says which provider and model served it.
    assert.match(res.data![0].url!, /^https:\/\//);
    assert.equal((res as Extra).extra_fields?.provider, 'openai');
  });

  test('edit with several images (image[])', async () => {
    const res = await client.images.edit({
      model: 'openai/gpt-image-1',
      prompt: 'combine these',
      image: [await toFile(png(64, 64, 'one'), 'one.png', { type: 'image/png' }), await toFile(png(64, 64, 'two'), 'two.png', { type: 'image/png' })],
      quality: 'low',
    });
    assert.equal(res.usage?.input_tokens_details?.image_tokens, 2 * 194);
    const seen = JSON.parse(JSON.stringify(mock.requests.at(-1)!.body)) as Record<string, unknown[]>;
    assert.deepEqual(seen['image[]'].map((f) => (f as { filename: string }).filename), ['one.png', 'two.png']);
  });

  test(`createVariation ${compat('/v1', 'images.createVariation', 'openai')}`, async () => {
    const res = await client.images.createVariation({ model: 'openai/dall-e-2', image: await toFile(png(256, 256, 'v'), 'v.png', { type: 'image/png' }), n: 2, size: '256x256', response_format: 'b64_json' });
    assert.equal(res.data?.length, 2);
    for (const d of res.data!) assert.deepEqual(pngSize(Buffer.from(d.b64_json!, 'base64')), { width: 256, height: 256 });
    assert.equal(mock.requests.at(-1)!.path, '/openai/v1/images/variations');
  });

  test('the provider validates what the gateway does not: its 400 comes back', async () => {
    await rejects(client.images.createVariation({ model: 'openai/dall-e-2', image: await toFile(png(64, 32, 'wide'), 'wide.png') }), 400, (e) => {
      assert.match(e.message, /must be square/);
      assert.equal((e.error as { is_bifrost_error?: boolean } | undefined)?.is_bifrost_error, undefined);
    });
  });

  test('bad forms are refused before any provider call, naming the field', async () => {
    const before = mock.requests.length;
    const form = (fields: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      return fetch(`${gateway.url}/v1/images/edits`, { method: 'POST', body: f });
    };
    const noImage = await form({ model: 'openai/gpt-image-1', prompt: 'x' });
    assert.equal(noImage.status, 400);
    assert.equal(((await noImage.json()) as { error: { param: string } }).error.param, 'image');
    const noModel = await form({ prompt: 'x', image: new Blob([png(8, 8, 'm')], { type: 'image/png' }) });
    assert.equal(noModel.status, 400);
    assert.equal(((await noModel.json()) as { error: { param: string } }).error.param, 'model');
    const json = await fetch(`${gateway.url}/v1/images/edits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"openai/dall-e-2"}' });
    assert.equal(json.status, 400);
    assert.equal(mock.requests.length, before);
  });
});

describe('audio', () => {
  test(`speech: the audio is streamed chunk by chunk with the upstream content type ${compat('/v1', 'audio.speech', 'openai')}`, async () => {
    const res = await client.audio.speech.create({ model: 'openai/gpt-4o-mini-tts', input: 'Hello from the gateway, one chunk at a time.', voice: 'coral' });
    assert.equal(res.headers.get('content-type'), 'audio/mpeg');
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    let sentWhenFirstArrived = -1;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (chunks.length === 0) sentWhenFirstArrived = Buffer.byteLength(mock.requests.at(-1)!.responseBody ?? '', 'latin1');
      chunks.push(value);
    }
    const received = Buffer.concat(chunks);
    const sent = Buffer.from(mock.requests.at(-1)!.responseBody!, 'latin1');
    assert.ok(received.equals(sent), 'the client gets exactly the bytes the provider sent');
    assert.equal(embeddedSpeechText(received), 'Hello from the gateway, one chunk at a time.');
    // Not buffered: the first bytes reached the client before the provider had sent them all.
    assert.ok(sentWhenFirstArrived > 0 && sentWhenFirstArrived < sent.length, `first chunk after ${sentWhenFirstArrived} of ${sent.length} bytes`);
    assert.deepEqual(mock.requests.at(-1)!.body, { model: 'gpt-4o-mini-tts', input: 'Hello from the gateway, one chunk at a time.', voice: 'coral' });
  });

  test('speech in another format keeps its content type', async () => {
    const res = await client.audio.speech.create({ model: 'openai/tts-1', input: 'Wave', voice: 'alloy', response_format: 'wav' });
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    const audio = Buffer.from(await res.arrayBuffer());
    assert.equal(audio.toString('latin1', 0, 4), 'RIFF');
  });

  test(`speech as SSE audio events, each with extra_fields ${compat('/v1', 'audio.speech.stream', 'openai')}`, async () => {
    const res = await client.audio.speech.create({ model: 'openai/gpt-4o-mini-tts', input: 'Events please', voice: 'alloy', stream_format: 'sse' });
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => JSON.parse(b.slice(6)) as { type: string; audio?: string; usage?: { input_tokens: number }; extra_fields?: { provider: string } });
    assert.ok(events.length >= 2);
    assert.equal(events.at(-1)!.type, 'speech.audio.done');
    assert.equal(events.at(-1)!.usage?.input_tokens, 2);
    assert.ok(events.every((e) => e.extra_fields?.provider === 'openai'));
    const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio!, 'base64')));
    assert.equal(embeddedSpeechText(audio), 'Events please');
  });

  test('speech errors from the provider are JSON errors, not audio', async () => {
    await rejects(client.audio.speech.create({ model: 'openai/tts-1', input: 'x', voice: 'robot' }), 400, (e) => assert.equal(e.param, 'voice'));
  });

  test(`transcriptions: json and text, of the speech the provider made ${compat('/v1', 'audio.transcriptions', 'openai')}`, async () => {
    const file = await toFile(speechAudio('mp3', 'Testing the gateway transcription'), 'speech.mp3', { type: 'audio/mpeg' });
    const json = await client.audio.transcriptions.create({ model: 'openai/whisper-1', file });
    assert.equal(json.text, 'Testing the gateway transcription');
    assert.deepEqual(json.usage, { type: 'duration', seconds: 2 });
    assert.equal((json as Extra).extra_fields?.request_type, 'transcription');
    const seen = JSON.parse(JSON.stringify(mock.requests.at(-1)!.body)) as Record<string, unknown>;
    assert.equal(seen.model, 'whisper-1');

    const text = await client.audio.transcriptions.create({ model: 'openai/whisper-1', file, response_format: 'text' });
    assert.equal(text, 'Testing the gateway transcription\n');
    const srt = await client.audio.transcriptions.create({ model: 'openai/whisper-1', file, response_format: 'srt' });
    assert.equal(srt, '1\n00:00:00,000 --> 00:00:01,600\nTesting the gateway transcription\n\n');
    const verbose = await client.audio.transcriptions.create({ model: 'openai/whisper-1', file, response_format: 'verbose_json', timestamp_granularities: ['word'] });
    assert.deepEqual(verbose.words?.map((w) => w.word), ['Testing', 'the', 'gateway', 'transcription']);
  });

  test(`transcriptions stream transcript events when the model streams ${compat('/v1', 'audio.transcriptions.stream', 'openai')}`, async () => {
    const stream = await client.audio.transcriptions.create({ model: 'openai/gpt-4o-mini-transcribe', file: await toFile(speechAudio('wav', 'Streaming words arrive'), 'a.wav'), stream: true });
    let text = '';
    let usage: OpenAI.Audio.TranscriptionTextDoneEvent['usage'];
    for await (const ev of stream) {
      if (ev.type === 'transcript.text.delta') text += ev.delta;
      else if (ev.type === 'transcript.text.done') usage = ev.usage;
    }
    assert.equal(text, 'Streaming words arrive');
    assert.equal(usage?.type, 'tokens');
  });

  test('groq serves transcription (and not images)', async () => {
    const res = await client.audio.transcriptions.create({ model: 'groq/whisper-large-v3', file: await toFile(speechAudio('mp3', 'Groq heard this'), 'g.mp3') });
    assert.equal(res.text, 'Groq heard this');
    assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-groq-test');
    await rejects(client.images.generate({ model: 'groq/some-model', prompt: 'x' }), 400, (e) => assert.match(e.message, /'image_generation'.*'groq'/));
  });
});

describe('unsupported operations and limits', () => {
  test('a provider without the operation answers 400 naming provider and operation', async () => {
    const before = mock.requests.length;
    await rejects(client.images.generate({ model: 'anthropic/claude-sonnet-4-5', prompt: 'x' }), 400, (e) => {
      assert.equal(e.type, 'unsupported_operation');
      assert.match(e.message, /operation 'image_generation' is not supported by provider 'anthropic'/);
    });
    await rejects(client.audio.speech.create({ model: 'gemini/gemini-2.5-flash', input: 'x', voice: 'alloy' }), 400, (e) => assert.match(e.message, /'speech'.*'gemini'/));
    await rejects(client.audio.transcriptions.create({ model: 'anthropic/claude-sonnet-4-5', file: await toFile(Buffer.from('abc'), 'a.mp3') }), 400, (e) => assert.match(e.message, /'transcription'.*'anthropic'/));
    await rejects(client.images.edit({ model: 'gemini/gemini-2.5-flash', prompt: 'x', image: await toFile(png(8, 8, 'g'), 'g.png') }), 400, (e) => assert.match(e.message, /'image_edit'.*'gemini'/));
    assert.equal(mock.requests.length, before);
  });

  test('an unsupported primary falls back to a provider that has the operation', async () => {
    const res = await client.images.generate(withFallbacks({ model: 'anthropic/claude-sonnet-4-5', prompt: 'fallback art' }, ['openai/dall-e-2']));
    assert.equal((res as Extra).extra_fields?.provider, 'openai');
    assert.equal((mock.requests.at(-1)!.body as { model: string }).model, 'dall-e-2');
  });

  test('an upload over the body size limit is a 413, with or without a content-length', async () => {
    const before = mock.requests.length;
    const big = Buffer.alloc(MAX_MB * 1024 * 1024 + 1);
    await rejects(client.images.edit({ model: 'openai/dall-e-2', prompt: 'x', image: await toFile(big, 'big.png', { type: 'image/png' }) }), 413);
    // Chunked, so only the bytes received can tell.
    const encoded = new Response((() => {
      const f = new FormData();
      f.append('model', 'openai/whisper-1');
      f.append('file', new Blob([big]), 'long.mp3');
      return f;
    })());
    const contentType = encoded.headers.get('content-type')!;
    const res = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: { 'content-type': contentType }, body: encoded.body, duplex: 'half' } as RequestInit);
    assert.equal(res.status, 413);
    const body = (await res.json()) as { error: { type: string } };
    assert.equal(body.error.type, 'request_too_large');
    assert.equal(mock.requests.length, before);
  });

  test('served under every OpenAI-format prefix', async () => {
    for (const prefix of ['/openai', '/openai/v1', '/litellm/v1', '/langchain/v1', '/pydanticai/v1']) {
      const c = new OpenAI({ baseURL: `${gateway.url}${prefix}`, apiKey: 'x', maxRetries: 0 });
      const res = await c.audio.speech.create({ model: 'openai/tts-1', input: `via ${prefix}`, voice: 'alloy' });
      assert.equal(embeddedSpeechText(Buffer.from(await res.arrayBuffer())), `via ${prefix}`, prefix);
    }
  });
});
