// Videos shared by two gateway replicas on one throw-away PostgreSQL (the logs store): a video made
// through one replica is retrieved, downloaded, listed and deleted through the other, and the job
// is settled exactly once however many replicas see it finish (the budget is charged once).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, basic } from '../helpers/api.ts';

const VK = 'sk-bf-video-pg-0123456789';
let mock: MockProvider;
let pgServer: RunningPostgres;
const replicas: RunningGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  pgServer = await startPostgres();
  const config = {
    providers: mockProviders(mock.url),
    logs_store: { enabled: true, type: 'postgres', config: { host: pgServer.host, port: String(pgServer.port), user: pgServer.user, password: '', db_name: pgServer.database, ssl_mode: 'disable' } },
    governance: {
      auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'video-pg-admin-password' },
      budgets: [{ id: 'pg-video-budget', max_limit: 100, reset_duration: '1M' }],
      virtual_keys: [{ id: 'pg-vk', name: 'pg-vk', value: VK, budget_id: 'pg-video-budget', provider_configs: [{ provider: 'openai', allowed_models: ['sora-2'], key_ids: ['*'], weight: 1 }] }],
    },
  };
  replicas.push(...(await Promise.all([startGateway(config), startGateway(config)])));
});

after(async () => {
  for (const g of replicas) await g.stop();
  await mock?.close();
  await pgServer?.stop();
});

const client = (g: RunningGateway) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: VK, maxRetries: 0 });

test('a video made on one replica is served by the other, and settled once', async () => {
  const [a, b] = replicas.map(client);
  const v = await a.videos.create({ model: 'openai/sora-2', prompt: 'shared across replicas', seconds: '8' });
  // Both replicas poll it; whichever sees it finish settles it, once.
  const seen = [await b.videos.retrieve(v.id), await a.videos.retrieve(v.id), await b.videos.retrieve(v.id), await a.videos.retrieve(v.id)];
  assert.equal(seen.at(-1)!.status, 'completed');
  const bytes = Buffer.from(await (await b.videos.downloadContent(v.id)).arrayBuffer());
  assert.equal(bytes.length, 64 * 1024);
  const listed: string[] = [];
  for await (const x of b.videos.list()) listed.push(x.id);
  assert.ok(listed.includes(v.id));
  // Budgets are counted per replica without Redis: the sum over both is what was charged.
  const usage = async () => {
    let sum = 0;
    for (const g of replicas) {
      const res = await apiClient(g, basic('admin', 'video-pg-admin-password'))<{ budgets: { id: string; current_usage: number }[] }>('GET', '/api/governance/usage');
      sum += res.body.budgets.find((x) => x.id === 'pg-video-budget')!.current_usage;
    }
    return sum;
  };
  await eventually(async () => assert.ok(Math.abs((await usage()) - 8 * 0.1) < 1e-9, `charged ${await usage()}`), 5000);
  assert.equal((await a.videos.delete(v.id)).deleted, true);
  await assert.rejects(b.videos.retrieve(v.id), (err: unknown) => err instanceof OpenAI.APIError && err.status === 404);
});
