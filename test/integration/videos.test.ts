// Video generation and management through the gateway with the official openai SDK
// (client.videos.create/retrieve/list/delete/downloadContent/remix/edit/extend/createCharacter/
// getCharacter) on every OpenAI-format prefix, against OpenAI's Videos API and against Veo's
// long-running operations on Gemini and Vertex, normalised into the same video object. Governed as
// chat is (virtual-key model and provider rules, routing rules on request_type, rate limits,
// budgets charged when the job finishes: seconds x the per-second price, nothing for a failed job),
// logged with the video request types, and served async (/v1/async/videos) with the webhook firing
// once the video is ready.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { GoogleGenAI } from '@google/genai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient } from '../helpers/api.ts';
import { compat } from '../helpers/compat.ts';
import { mockProvider } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { createServiceAccount } from '../mock-provider/vertex.ts';
import { videoByte } from '../mock-provider/videos.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-video-main-0123456789';
const OTHER_VK = 'sk-bf-video-other-0123456789';
const CHAT_ONLY_VK = 'sk-bf-video-chat-only-01234';
const LIMITED_VK = 'sk-bf-video-limited-0123456';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PREFIXES = ['/v1', '/openai/v1', '/openai', '/litellm/v1', '/langchain/v1', '/pydanticai/v1'] as const;

let mock: MockProvider;
let receiver: Receiver;
let gw: InProcessGateway;

const grant = (provider: string, models: string[]) => ({ provider, allowed_models: models, key_ids: ['*'], weight: 1 });

before(async () => {
  [mock, receiver] = await Promise.all([startMockProvider(), startReceiver()]);
  receiver.setSecret(SECRET);
  const account = createServiceAccount(mock.url);
  gw = await startGateway(
    {
      providers: {
        openai: mockProvider(mock.url, 'openai'),
        gemini: mockProvider(mock.url, 'gemini'),
        anthropic: mockProvider(mock.url, 'anthropic'),
        vertex: {
          keys: [{ name: 'sa', value: '', weight: 1, vertex_key_config: { project_id: 'mock-project', region: 'us-east5', auth_credentials: 'env.VIDEO_VERTEX_SA' } }],
          network_config: { base_url: `${mock.url}/vertex`, max_retries: 0 },
        },
      },
      logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
      client: { enable_logging: true, enforce_auth_on_inference: true },
      governance: {
        auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'video-admin-password' },
        budgets: [{ id: 'video-budget', max_limit: 1000, reset_duration: '1M' }],
        rate_limits: [{ id: 'one-per-hour', request_max_limit: 1, request_reset_duration: '1h' }],
        routing_rules: [
          {
            id: 'house-video',
            name: 'house video model',
            cel_expression: 'request_type == "video_generation" && model == "house-video"',
            targets: [{ provider: 'gemini', model: 'veo-3.1-fast-generate-preview', weight: 1 }],
          },
        ],
        virtual_keys: [
          {
            id: 'video-vk',
            name: 'video-vk',
            value: VK,
            budget_id: 'video-budget',
            provider_configs: [
              grant('openai', ['sora-2', 'sora-2-pro']),
              grant('gemini', ['veo-3.1-generate-preview', 'veo-3.1-fast-generate-preview']),
              grant('vertex', ['veo-3.1-fast-generate-preview']),
              grant('anthropic', ['claude-sonnet-4-5']),
            ],
          },
          { id: 'other-vk', name: 'other-vk', value: OTHER_VK, provider_configs: [grant('openai', ['sora-2'])] },
          { id: 'chat-only-vk', name: 'chat-only-vk', value: CHAT_ONLY_VK, provider_configs: [grant('openai', ['gpt-4o'])] },
          { id: 'limited-vk', name: 'limited-vk', value: LIMITED_VK, rate_limit_id: 'one-per-hour', provider_configs: [grant('openai', ['sora-2'])] },
        ],
      },
      webhooks: [{ name: 'video-ready', url: `${receiver.url}?to=video`, events: ['async_job.completed', 'async_job.failed'], secret: 'env.VIDEO_WH_SECRET', allow_private_network: true, include_response: true }],
    },
    { env: { VIDEO_VERTEX_SA: JSON.stringify(account), VIDEO_WH_SECRET: SECRET } },
  );
});

after(async () => {
  await gw?.stop();
  await receiver?.close();
  await mock?.close();
});

const client = (key = VK, prefix = '/v1') => new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey: key, maxRetries: 0 });
const api = () => apiClient(gw, { authorization: `Basic ${Buffer.from('admin:video-admin-password').toString('base64')}` });


/** Retrieves until the job is finished (the mock moves one step per poll). */
async function finished(c: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  for (let i = 0; i < 10; i++) {
    const v = await c.videos.retrieve(id);
    if (v.status === 'completed' || v.status === 'failed') return v;
  }
  assert.fail(`video ${id} never finished`);
}

async function bytesOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

function checkVideoBytes(b: Buffer, length: number): void {
  assert.equal(b.length, length);
  for (let i = 0; i < b.length; i += 997) assert.equal(b[i], videoByte(i), `byte ${i}`);
}

interface LogEntry {
  id: string;
  object: string;
  provider?: string;
  model?: string;
  virtual_key_id?: string;
  status: string;
  cost?: number;
}

async function logs(): Promise<LogEntry[]> {
  const res = await api()<{ logs: LogEntry[] }>('GET', '/api/logs?limit=500');
  return res.body.logs;
}

async function budgetUsage(): Promise<number> {
  const res = await api()<{ budgets: { id: string; current_usage: number }[] }>('GET', '/api/governance/usage');
  return res.body.budgets.find((b) => b.id === 'video-budget')!.current_usage;
}

describe('OpenAI videos', () => {
  for (const prefix of PREFIXES) {
    test(`create, retrieve to completion, download, list, delete ${compat(prefix, 'videos', 'openai')}`, async () => {
      const c = client(VK, prefix);
      const created = await c.videos.create({ model: 'openai/sora-2', prompt: `a fox in the snow via ${prefix}`, seconds: '8', size: '1280x720' });
      assert.match(created.id, /^video_[0-9a-f]{32}$/, 'the id is the gateway-s own');
      assert.equal(created.object, 'video');
      assert.equal(created.status, 'queued');
      assert.equal(created.progress, 0);
      assert.equal(created.model, 'sora-2');
      assert.equal(created.seconds, '8');
      assert.equal(created.size, '1280x720');

      const step = await c.videos.retrieve(created.id);
      assert.equal(step.status, 'in_progress');
      assert.equal(step.progress, 50);
      const done = await finished(c, created.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.progress, 100);
      assert.ok(done.completed_at);

      checkVideoBytes(await bytesOf(await c.videos.downloadContent(created.id)), 64 * 1024);
      const thumb = await c.videos.downloadContent(created.id, { variant: 'thumbnail' });
      assert.equal(thumb.headers.get('content-type'), 'image/webp');
      assert.match((await bytesOf(thumb)).toString(), /^thumbnail:video_/);
      const sprite = await bytesOf(await c.videos.downloadContent(created.id, { variant: 'spritesheet' }));
      assert.match(sprite.toString(), /^spritesheet:video_/);

      const listed: string[] = [];
      for await (const v of c.videos.list({ limit: 100 })) listed.push(v.id);
      assert.ok(listed.includes(created.id));

      const deleted = await c.videos.delete(created.id);
      assert.deepEqual({ id: deleted.id, deleted: deleted.deleted, object: deleted.object }, { id: created.id, deleted: true, object: 'video.deleted' });
      assert.equal((await errorOf(c.videos.retrieve(created.id))).status, 404);
    });
  }

  test(`remix, edit and extend a finished video ${compat('/v1', 'videos.remix', 'openai')}`, async () => {
    const c = client();
    const source = await c.videos.create({ model: 'openai/sora-2', prompt: 'a paper boat', seconds: '4' });
    await finished(c, source.id);
    const remix = await c.videos.remix(source.id, { prompt: 'a paper boat at night' });
    assert.match(remix.id, /^video_[0-9a-f]{32}$/);
    assert.notEqual(remix.id, source.id);
    assert.equal(remix.remixed_from_video_id, source.id, 'the source is named by the gateway-s id');
    assert.equal(remix.prompt, 'a paper boat at night');
    assert.equal((await finished(c, remix.id)).status, 'completed');

    const edit = await c.videos.edit({ prompt: 'make it red', video: { id: source.id } });
    assert.equal(edit.remixed_from_video_id, source.id);
    assert.equal((await finished(c, edit.id)).status, 'completed');

    const extended = await c.videos.extend({ prompt: 'keep sailing', seconds: '8', video: { id: source.id } });
    assert.equal(extended.seconds, '12', 'the extension adds its seconds to the source-s');
    const upstream = mock.requests.filter((r) => r.path === '/openai/v1/videos/extensions').at(-1);
    assert.ok(upstream, 'the extension went upstream');
    assert.notEqual((upstream.body as Record<string, unknown>)['video[id]'], source.id, 'the provider gets its own id, not the gateway-s');
  });

  test(`characters are created and retrieved at the provider ${compat('/v1', 'videos.characters', 'openai')}`, async () => {
    const c = client();
    const made = await c.videos.createCharacter({ name: 'Mascot', video: await toFile(Buffer.from('fake mp4 bytes'), 'mascot.mp4', { type: 'video/mp4' }) });
    assert.equal(made.name, 'Mascot');
    assert.ok(made.id);
    const got = await c.videos.getCharacter(made.id!);
    assert.equal(got.name, 'Mascot');
  });

  test('a reference image is sent on as a file part', async () => {
    const c = client();
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const v = await c.videos.create({ model: 'openai/sora-2', prompt: 'animate this', input_reference: await toFile(png, 'ref.png', { type: 'image/png' }) });
    assert.equal(v.status, 'queued');
    const sent = mock.requests.filter((r) => r.path === '/openai/v1/videos' && r.method === 'POST').at(-1)!;
    const file = (sent.body as Record<string, { filename: string; contentType: string; data: Buffer }>).input_reference;
    assert.deepEqual({ filename: file.filename, contentType: file.contentType, data: file.data }, { filename: 'ref.png', contentType: 'image/png', data: png });
  });

  test('a JSON create (the reference gateway-s shape) works too', async () => {
    const res = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` },
      body: JSON.stringify({ model: 'openai/sora-2', prompt: 'json please', seconds: '4', size: '720x1280' }),
    });
    assert.equal(res.status, 200);
    const v = (await res.json()) as { status: string; extra_fields: { provider: string; request_type: string } };
    assert.equal(v.status, 'queued');
    assert.equal(v.extra_fields.provider, 'openai');
    assert.equal(v.extra_fields.request_type, 'video_generation');
  });
});

describe('Veo normalised to the video object', () => {
  test(`Gemini: predictLongRunning polled into queued/in_progress/completed, the file relayed ${compat('/v1', 'videos', 'gemini')}`, async () => {
    const c = client();
    const v = await c.videos.create({ model: 'gemini/veo-3.1-generate-preview', prompt: 'waves on a beach', seconds: '8', size: '1920x1080' as OpenAI.Videos.VideoSize });
    assert.equal(v.object, 'video');
    assert.equal(v.model, 'veo-3.1-generate-preview');
    assert.equal(v.status, 'in_progress');
    assert.equal(v.size, '1920x1080');
    const sent = mock.requests.filter((r) => r.path.endsWith(':predictLongRunning')).at(-1)!;
    assert.deepEqual(sent.body, { instances: [{ prompt: 'waves on a beach' }], parameters: { sampleCount: 1, durationSeconds: 8, aspectRatio: '16:9', resolution: '1080p' } });
    const done = await finished(c, v.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.progress, 100);
    checkVideoBytes(await bytesOf(await c.videos.downloadContent(v.id)), 64 * 1024);
    assert.equal((await errorOf(c.videos.downloadContent(v.id, { variant: 'thumbnail' }))).status, 400);
    // Veo has no delete: the gateway forgets the video.
    assert.equal((await c.videos.delete(v.id)).deleted, true);
    assert.equal((await errorOf(c.videos.retrieve(v.id))).status, 404);
  });

  test(`Vertex: predictLongRunning and fetchPredictOperation, the inline bytes decoded ${compat('/v1', 'videos', 'vertex')}`, async () => {
    const c = client();
    const v = await c.videos.create({ model: 'vertex/veo-3.1-fast-generate-preview', prompt: 'a city at dusk', seconds: '4', size: '720x1280' });
    assert.equal(v.status, 'in_progress');
    const sent = mock.requests.filter((r) => r.path.includes('/publishers/google/models/veo-3.1-fast-generate-preview:predictLongRunning')).at(-1)!;
    assert.match(sent.path, /^\/vertex\/v1\/projects\/mock-project\/locations\/us-east5\//);
    assert.equal((await finished(c, v.id)).status, 'completed');
    checkVideoBytes(await bytesOf(await c.videos.downloadContent(v.id)), 64 * 1024);
  });

  test('a failed Veo operation is a failed video with the provider-s reason', async () => {
    const c = client();
    const v = await c.videos.create({ model: 'gemini/veo-3.1-generate-preview', prompt: 'something [fail]', seconds: '4' });
    const done = await finished(c, v.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'upstream_3');
    assert.match(done.error?.message ?? '', /usage guidelines/);
    const e = await errorOf(c.videos.downloadContent(v.id));
    assert.equal(e.status, 409);
  });

  test('remix is OpenAI-only: a Veo video gets the unsupported-operation 400', async () => {
    const c = client();
    const v = await c.videos.create({ model: 'gemini/veo-3.1-generate-preview', prompt: 'clouds', seconds: '4' });
    await finished(c, v.id);
    const e = await errorOf(c.videos.remix(v.id, { prompt: 'more clouds' }));
    assert.equal(e.status, 400);
    assert.equal((e.error as { code?: string }).code, 'unsupported_operation');
  });
});

describe('@google/genai through /genai: generateVideos and getVideosOperation', () => {
  const genai = (key = VK) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: `${gw.url}/genai` } });

  for (const [model, upstream] of [['gemini/veo-3.1-generate-preview', 'gemini'], ['openai/sora-2', 'openai']] as const) {
    test(`a Veo operation polled until done, the video fetched from its URI ${compat('/genai', 'generateVideos', upstream)}`, async () => {
      const ai = genai();
      let op = await ai.models.generateVideos({
        model,
        source: { prompt: `a lighthouse in a storm for ${upstream}` },
        config: { numberOfVideos: 1, durationSeconds: upstream === 'openai' ? 4 : 8, aspectRatio: '16:9' },
      });
      assert.match(op.name ?? '', new RegExp(`^models/${model}/operations/video_[0-9a-f]{32}$`));
      assert.notEqual(op.done, true);
      for (let i = 0; i < 10 && !op.done; i++) op = await ai.operations.getVideosOperation({ operation: op });
      assert.equal(op.done, true);
      assert.equal(op.error, undefined);
      const uri = op.response?.generatedVideos?.[0]?.video?.uri;
      assert.ok(uri, 'the finished operation names the video');
      const res = await fetch(uri, { headers: { 'x-goog-api-key': VK } });
      assert.equal(res.status, 200);
      checkVideoBytes(Buffer.from(await res.arrayBuffer()), 64 * 1024);
    });
  }

  test('a failed job is a done operation with an error; bad input is a Gemini-shaped 400', async () => {
    const ai = genai();
    let op = await ai.models.generateVideos({ model: 'gemini/veo-3.1-generate-preview', source: { prompt: 'no [fail]' }, config: { durationSeconds: 4 } });
    for (let i = 0; i < 10 && !op.done; i++) op = await ai.operations.getVideosOperation({ operation: op });
    assert.equal(op.done, true);
    assert.match(String((op.error as { message?: string } | undefined)?.message), /usage guidelines/);
    const res = await fetch(`${gw.url}/genai/v1beta/models/gemini/veo-3.1-generate-preview:predictLongRunning`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': VK },
      body: JSON.stringify({ instances: [{ prompt: 'x' }], parameters: { aspectRatio: '4:3' } }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { code: number; status: string; message: string } };
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.match(body.error.message, /aspectRatio/);
    const gone = await fetch(`${gw.url}/genai/v1beta/models/gemini/veo-3.1-generate-preview/operations/video_0123456789abcdef0123456789abcdef`, { headers: { 'x-goog-api-key': VK } });
    assert.equal(gone.status, 404);
    assert.equal(((await gone.json()) as { error: { status: string } }).error.status, 'NOT_FOUND');
  });
});

describe('refusals', () => {
  test('a provider without video generation: the unsupported-operation 400', async () => {
    const e = await errorOf(client().videos.create({ model: 'anthropic/claude-sonnet-4-5', prompt: 'a cat' }));
    assert.equal(e.status, 400);
    assert.equal((e.error as { code?: string }).code, 'unsupported_operation');
    assert.match(e.message, /video_generation/);
  });

  test('bad input: a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'openai/sora-2' }, 'prompt'],
      [{ model: 'openai/sora-2', prompt: 'x', seconds: 'ten' }, 'seconds'],
      [{ model: 'openai/sora-2', prompt: 'x', size: 'huge' }, 'size'],
      [{ prompt: 'x' }, 'model'],
      [{ model: 'openai/sora-2', prompt: 'x', input_reference: { image_url: 5 } }, 'input_reference'],
    ];
    for (const [body, field] of cases) {
      const res = await fetch(`${gw.url}/v1/videos`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` }, body: JSON.stringify(body) });
      assert.equal(res.status, 400, JSON.stringify(body));
      const err = ((await res.json()) as { error: { param?: string; message: string } }).error;
      assert.ok(err.param?.includes(field), `param ${err.param} names ${field} (${err.message})`);
    }
    const v = await client().videos.create({ model: 'openai/sora-2', prompt: 'fine', seconds: '4' });
    await finished(client(), v.id);
    const bad = await errorOf(client().videos.downloadContent(v.id, { variant: 'poster' as 'video' }));
    assert.equal(bad.status, 400);
    assert.equal((bad.error as { param?: string }).param, 'variant');
    const ext = await errorOf(client().videos.extend({ prompt: 'more', video: { id: v.id } } as unknown as OpenAI.Videos.VideoExtendParams));
    assert.equal(ext.status, 400);
    assert.equal((ext.error as { param?: string }).param, 'seconds');
    // A JSON body that is not an object (found by the fuzz suite: a 500 on the async route) is a 400 on both.
    for (const path of ['/v1/videos', '/v1/async/videos']) {
      for (const body of ['["A)R"]', '"text"', '42', 'null']) {
        const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` }, body });
        assert.equal(res.status, 400, `${path} ${body}: ${await res.clone().text()}`);
        assert.match(((await res.json()) as { error: { message: string } }).error.message, /JSON object/);
      }
    }
  });

  test('a video belongs to the key that made it: another key gets a 404', async () => {
    const v = await client().videos.create({ model: 'openai/sora-2', prompt: 'mine', seconds: '4' });
    const e = await errorOf(client(OTHER_VK).videos.retrieve(v.id));
    assert.equal(e.status, 404);
    const listed: string[] = [];
    for await (const x of client(OTHER_VK).videos.list()) listed.push(x.id);
    assert.ok(!listed.includes(v.id));
  });

  test('virtual-key model rules apply: a key without a video model is refused', async () => {
    const e = await errorOf(client(CHAT_ONLY_VK).videos.create({ model: 'openai/sora-2', prompt: 'nope' }));
    assert.equal(e.status, 403);
    assert.equal((await errorOf(client('sk-bf-not-a-key-000000000').videos.create({ model: 'openai/sora-2', prompt: 'x' }))).status, 401);
  });

  test('rate limits apply to video requests', async () => {
    const c = client(LIMITED_VK);
    await c.videos.create({ model: 'openai/sora-2', prompt: 'first', seconds: '4' });
    const e = await errorOf(c.videos.create({ model: 'openai/sora-2', prompt: 'second', seconds: '4' }));
    assert.equal(e.status, 429);
  });

  test('routing rules see request_type: a video request to house-video goes to Gemini Veo', async () => {
    const v = await client().videos.create({ model: 'house-video', prompt: 'routed', seconds: '4' });
    assert.equal(v.model, 'veo-3.1-fast-generate-preview');
    const r = (await (await fetch(`${gw.url}/v1/videos/${v.id}`, { headers: { authorization: `Bearer ${VK}` } })).json()) as { extra_fields: { provider: string } };
    assert.equal(r.extra_fields.provider, 'gemini');
  });
});

describe('pricing, budgets and logs', () => {
  test('a completed video is charged once, seconds x its per-second price; a failed one costs nothing', async () => {
    const c = client();
    const before = await budgetUsage();
    const v = await c.videos.create({ model: 'openai/sora-2-pro', prompt: 'priced', seconds: '8', size: '1024x1792' });
    await finished(c, v.id);
    // Retrieving again and downloading do not charge it again.
    await c.videos.retrieve(v.id);
    await bytesOf(await c.videos.downloadContent(v.id));
    let charged = 0;
    await eventually(async () => {
      charged = (await budgetUsage()) - before;
      assert.ok(Math.abs(charged - 8 * 0.5) < 1e-9, `charged ${charged}`);
    }, 5000);
    let settledBy: LogEntry | undefined;
    await eventually(async () => {
      const all = await logs();
      assert.ok(all.some((l) => l.object === 'video_generation' && l.model === 'sora-2-pro'), 'the create is logged');
      settledBy = all.find((l) => l.object === 'video_retrieve' && (l.cost ?? 0) > 0 && l.model === 'sora-2-pro');
      assert.ok(settledBy, 'the retrieve that saw it finish carries the cost');
      assert.ok(all.some((l) => l.object === 'video_download'), 'the download is logged');
    }, 5000);
    assert.equal(settledBy!.cost, 4);
    assert.equal(settledBy!.virtual_key_id, 'video-vk');

    const failedBefore = await budgetUsage();
    const f = await c.videos.create({ model: 'openai/sora-2', prompt: 'will not render [fail]', seconds: '8' });
    const done = await finished(c, f.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.error?.code, 'moderation_blocked');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await budgetUsage(), failedBefore, 'a failed job costs nothing');
  });

  test('an upstream failure mid-operation loses nothing already stored', async () => {
    const c = client();
    const v = await c.videos.create({ model: 'openai/sora-2', prompt: 'survives [bytes:300000]', seconds: '4' });
    mock.inject({ format: 'openai', status: 500, message: 'upstream exploded' });
    const e = await errorOf(c.videos.retrieve(v.id));
    assert.equal(e.status, 500);
    // The video is still the gateway's, and finishes once the provider answers again.
    assert.equal((await finished(c, v.id)).status, 'completed');
    // A download broken off mid-way leaves the video downloadable.
    mock.inject({ format: 'openai', resetAfterChunks: 1 });
    await assert.rejects(async () => bytesOf(await c.videos.downloadContent(v.id)));
    checkVideoBytes(await bytesOf(await c.videos.downloadContent(v.id)), 300_000);
  });
});

describe('async videos', () => {
  test(`an async submit completes when the video is ready, and the webhook fires then ${compat('/v1', 'videos.async', 'openai')}`, async () => {
    const res = await fetch(`${gw.url}/v1/async/videos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}`, 'x-bf-async-webhook': 'video-ready' },
      body: JSON.stringify({ model: 'openai/sora-2', prompt: 'async fox', seconds: '4' }),
    });
    assert.equal(res.status, 202);
    const job = (await res.json()) as { id: string };
    let delivery: Record<string, unknown> | undefined;
    await eventually(() => {
      const r = receiver.received.find((x) => x.json.data.job_id === job.id);
      assert.ok(r, 'no webhook yet');
      assert.equal(r.verified, true);
      delivery = r.json.data;
    }, 20_000);
    assert.equal(delivery!.status, 'completed');
    const video = delivery!.response as { id: string; status: string; progress: number };
    assert.equal(video.status, 'completed', 'the job completed with the finished video');
    assert.equal(video.progress, 100);
    // The video is the caller's like any other.
    checkVideoBytes(await bytesOf(await client().videos.downloadContent(video.id)), 64 * 1024);
    const polled = await fetch(`${gw.url}/v1/async/videos/${job.id}`, { headers: { authorization: `Bearer ${VK}` } });
    assert.equal(polled.status, 200);
  });

  test('an async submit of a failing video ends failed-video, completed job (the job ran; the video failed)', async () => {
    const res = await fetch(`${gw.url}/v1/async/videos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` },
      body: JSON.stringify({ model: 'gemini/veo-3.1-generate-preview', prompt: 'nope [fail]', seconds: '4' }),
    });
    assert.equal(res.status, 202);
    const { id } = (await res.json()) as { id: string };
    let body: { status: string; result?: { status: string; error: { code: string } } } | undefined;
    await eventually(async () => {
      const p = await fetch(`${gw.url}/v1/async/videos/${id}`, { headers: { authorization: `Bearer ${VK}` } });
      body = (await p.json()) as typeof body;
      assert.equal(p.status, 200);
    }, 20_000);
    assert.equal(body!.result?.status, 'failed');
    assert.equal(body!.result?.error.code, 'upstream_3');
  });
  test(`an async remix (the SDK's own call, base URL /v1/async) completes when the new video is ready, and the webhook fires then ${compat('/v1', 'videos.remix.async', 'openai')}`, async () => {
    const c = client();
    const source = await c.videos.create({ model: 'openai/sora-2', prompt: 'a lantern', seconds: '4' });
    await finished(c, source.id);
    const asyncClient = new OpenAI({ baseURL: `${gw.url}/v1/async`, apiKey: VK, maxRetries: 0 });
    // POST /v1/async/videos/{id}/remix: the answer is the job (the SDK reads it as its video type).
    const job = (await asyncClient.videos.remix(source.id, { prompt: 'a lantern in the fog' }, { headers: { 'x-bf-async-webhook': 'video-ready' } })) as unknown as { id: string; status: string };
    assert.equal(job.status, 'pending');
    let delivery: Record<string, unknown> | undefined;
    await eventually(() => {
      const r = receiver.received.find((x) => x.json.data.job_id === job.id);
      assert.ok(r, 'no webhook yet');
      assert.equal(r.verified, true);
      delivery = r.json.data;
    }, 20_000);
    assert.equal(delivery!.status, 'completed');
    const remix = delivery!.response as { id: string; status: string; remixed_from_video_id: string; prompt: string };
    assert.equal(remix.status, 'completed', 'the job completed with the finished remix');
    assert.equal(remix.remixed_from_video_id, source.id);
    assert.equal(remix.prompt, 'a lantern in the fog');
    checkVideoBytes(await bytesOf(await c.videos.downloadContent(remix.id)), 64 * 1024);
    // Polled at the row's path.
    const polled = await fetch(`${gw.url}/v1/async/videos/remix/${job.id}`, { headers: { authorization: `Bearer ${VK}` } });
    assert.equal(polled.status, 200);
    assert.equal(((await polled.json()) as { result: { id: string } }).result.id, remix.id);
  });

  test(`async edits (JSON) and extensions (the SDK's form) run to the finished video ${compat('/v1', 'videos.extend.async', 'openai')}`, async () => {
    const c = client();
    const source = await c.videos.create({ model: 'openai/sora-2', prompt: 'a sailboat', seconds: '4' });
    await finished(c, source.id);
    const res = await fetch(`${gw.url}/openai/v1/async/videos/edits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` },
      body: JSON.stringify({ prompt: 'make the sail red', video: { id: source.id } }),
    });
    assert.equal(res.status, 202);
    const edit = (await res.json()) as { id: string };
    const extend = (await new OpenAI({ baseURL: `${gw.url}/v1/async`, apiKey: VK, maxRetries: 0 }).videos.extend({ prompt: 'sail on', seconds: '4', video: { id: source.id } })) as unknown as { id: string };
    for (const [path, id, seconds] of [['edits', edit.id, '4'], ['extensions', extend.id, '8']] as const) {
      let body: { status: string; result?: { status: string; seconds: string; remixed_from_video_id: string } } | undefined;
      await eventually(async () => {
        const p = await fetch(`${gw.url}/v1/async/videos/${path}/${id}`, { headers: { authorization: `Bearer ${VK}` } });
        body = (await p.json()) as typeof body;
        assert.equal(p.status, 200, JSON.stringify(body));
      }, 20_000);
      assert.equal(body!.status, 'completed');
      assert.equal(body!.result?.status, 'completed', `${path}: the finished video`);
      assert.equal(body!.result?.remixed_from_video_id, source.id);
      assert.equal(body!.result?.seconds, seconds);
    }
  });

  test("an async remix of another key's video is the sync call's 404, at submit; bad input its 400", async () => {
    const mine = await client().videos.create({ model: 'openai/sora-2', prompt: 'private', seconds: '4' });
    const other = await fetch(`${gw.url}/v1/async/videos/${mine.id}/remix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OTHER_VK}` },
      body: JSON.stringify({ prompt: 'steal it' }),
    });
    assert.equal(other.status, 404);
    const noPrompt = await fetch(`${gw.url}/v1/async/videos/${mine.id}/remix`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` }, body: '{}' });
    assert.equal(noPrompt.status, 400);
    assert.equal(((await noPrompt.json()) as { error: { param: string } }).error.param, 'prompt');
    const twice = await fetch(`${gw.url}/v1/async/videos/${mine.id}/remix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` },
      body: JSON.stringify({ prompt: 'x', video: { id: 'video_other' } }),
    });
    assert.equal(twice.status, 400);
    assert.equal(((await twice.json()) as { error: { param: string } }).error.param, 'video');
    const noSource = await fetch(`${gw.url}/v1/async/videos/remix`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` }, body: JSON.stringify({ prompt: 'x' }) });
    assert.equal(noSource.status, 400);
    assert.equal(((await noSource.json()) as { error: { param: string } }).error.param, 'video');
  });
});
