// Sora 2 on Azure OpenAI through the gateway, with the official openai SDK: the v1 API's
// /openai/v1/videos (OpenAI's Videos API on Azure's host, api-key auth, no api-version), the key's
// deployment mapping applied to the create form's `model` (with and without a reference image),
// the job polled, downloaded, remixed, listed and deleted through the gateway's own video ids, priced
// as Sora when it completes, and the calls Azure does not document answered as unsupported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { apiClient } from '../helpers/api.ts';
import { eventually } from '../helpers/patience.ts';
import { compat } from '../helpers/compat.ts';
import { errorOf } from '../helpers/openai-errors.ts';
import { startMockProvider, type MockProvider, type RecordedRequest } from '../mock-provider/server.ts';
import { videoByte } from '../mock-provider/videos.ts';
import { UploadedFile } from '../mock-provider/multipart.ts';

const ADMIN = { authorization: `Basic ${Buffer.from('admin:azure-video-admin').toString('base64')}` };
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway(
    {
      providers: {
        azure: {
          keys: [
            {
              name: 'sora-resource',
              value: 'env.AZURE_VIDEO_KEY',
              weight: 1,
              azure_key_config: { endpoint: `${mock.url}/azure`, deployments: { 'sora-2': 'video-prod', 'sora-2-pro': 'nonexistent-pro' }, api_version: '2024-10-21' },
            },
          ],
          network_config: { max_retries: 0 },
        },
      },
      logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
      client: { enable_logging: true },
      governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'azure-video-admin' } },
    },
    { env: { AZURE_VIDEO_KEY: 'azure-video-key-1' } },
  );
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

const client = (prefix = '/v1') => new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey: 'unused', maxRetries: 0 });
const sent = (method: string, path: RegExp): RecordedRequest[] => mock.requests.filter((r) => r.format === 'azure' && r.method === method && path.test(r.path));

async function finished(c: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  for (let i = 0; i < 10; i++) {
    const v = await c.videos.retrieve(id);
    if (v.status === 'completed' || v.status === 'failed') return v;
  }
  assert.fail(`video ${id} never finished`);
}

describe('Sora 2 on Azure OpenAI', () => {
  for (const prefix of ['/v1', '/openai/v1'] as const) {
    test(`create with the deployment, poll, download, list, delete ${compat(prefix, 'videos', 'azure')}`, async () => {
      const c = client(prefix);
      const created = await c.videos.create({ model: 'azure/sora-2', prompt: `a heron over a lake via ${prefix}`, seconds: '8', size: '1280x720' });
      assert.match(created.id, /^video_[0-9a-f]{32}$/);
      assert.equal(created.status, 'queued');
      assert.equal(created.model, 'sora-2', 'the model asked for, not the deployment');
      assert.equal(created.seconds, '8');
      const create = sent('POST', /^\/azure\/openai\/v1\/videos$/).at(-1)!;
      assert.equal((create.body as Record<string, unknown>).model, 'video-prod', "the key's deployment for sora-2");
      assert.equal(create.headers['api-key'], 'azure-video-key-1');
      assert.equal(create.query['api-version'], undefined, 'the v1 API takes no api-version');

      const done = await finished(c, created.id);
      assert.equal(done.status, 'completed');
      const bytes = Buffer.from(await (await c.videos.downloadContent(created.id)).arrayBuffer());
      assert.equal(bytes.length, 64 * 1024);
      for (let i = 0; i < bytes.length; i += 4099) assert.equal(bytes[i], videoByte(i));
      assert.match(sent('GET', /^\/azure\/openai\/v1\/videos\/[^/]+\/content$/).at(-1)!.query.variant ?? '', /^video$/);

      const listed: string[] = [];
      for await (const v of c.videos.list()) listed.push(v.id);
      assert.ok(listed.includes(created.id));
      const deleted = await c.videos.delete(created.id);
      assert.equal(deleted.deleted, true);
      assert.ok(sent('DELETE', /^\/azure\/openai\/v1\/videos\/video_/).length > 0, 'deleted at Azure too');
      assert.equal((await errorOf(c.videos.retrieve(created.id))).status, 404);
    });
  }

  test(`a reference image goes as Azure documents it (input_reference file part), the deployment mapped in the form ${compat('/v1', 'videos.image', 'azure')}`, async () => {
    const c = client();
    const created = await c.videos.create({
      model: 'azure/sora-2',
      prompt: 'the horses start to run',
      size: '1280x720',
      input_reference: await toFile(PNG, 'horses.png', { type: 'image/png' }),
    });
    assert.equal(created.status, 'queued');
    const form = sent('POST', /^\/azure\/openai\/v1\/videos$/).at(-1)!.body as Record<string, unknown>;
    assert.equal(form.model, 'video-prod');
    assert.ok(form.input_reference instanceof UploadedFile, 'the image is a file part');
    assert.deepEqual((form.input_reference as UploadedFile).data, PNG);
  });

  test(`remix a finished video on the same resource ${compat('/v1', 'videos.remix', 'azure')}`, async () => {
    const c = client();
    const source = await c.videos.create({ model: 'azure/sora-2', prompt: 'a paper crane' });
    await finished(c, source.id);
    const remix = await c.videos.remix(source.id, { prompt: 'a paper crane in the rain' });
    assert.equal(remix.remixed_from_video_id, source.id);
    assert.equal((await finished(c, remix.id)).status, 'completed');
    assert.ok(sent('POST', /^\/azure\/openai\/v1\/videos\/video_[^/]+\/remix$/).length > 0);
  });

  test('a completed Azure video is priced as Sora 2: seconds x $0.10', async () => {
    const c = client();
    const v = await c.videos.create({ model: 'azure/sora-2', prompt: 'a priced sunrise', seconds: '12' });
    await finished(c, v.id);
    // Log records are written after the answer: waited for.
    await eventually(async () => {
      const res = await apiClient(gw, ADMIN)<{ logs: { object: string; provider?: string; cost?: number }[] }>('GET', '/api/logs?limit=500');
      const settled = res.body.logs.find((l) => l.object === 'video_retrieve' && l.provider === 'azure' && (l.cost ?? 0) > 0);
      assert.ok(settled, 'the retrieve that saw it finish carries the cost');
      assert.ok(Math.abs(settled.cost! - 1.2) < 1e-9, `cost ${settled.cost}`);
    }, 5000);
  });

  test('edits, extensions and characters are not Azure routes: the unsupported-operation 400', async () => {
    const c = client();
    const source = await c.videos.create({ model: 'azure/sora-2', prompt: 'a kite' });
    await finished(c, source.id);
    for (const call of [c.videos.edit({ prompt: 'make it red', video: { id: source.id } }), c.videos.extend({ prompt: 'longer', seconds: '4', video: { id: source.id } })]) {
      const e = await errorOf(call);
      assert.equal(e.status, 400);
      assert.equal((e.error as { code?: string }).code, 'unsupported_operation');
    }
  });

  test("a deployment Azure does not have is Azure's 404, named", async () => {
    const e = await errorOf(client().videos.create({ model: 'azure/sora-2-pro', prompt: 'nowhere' }));
    assert.equal(e.status, 404);
    assert.match(e.message, /deployment/i);
  });
});
