// Async jobs shared fairly between virtual keys: one key's backlog of a hundred slow jobs does not
// make another key's job wait behind it. A real gateway on SQLite, the mock provider slowed down so
// jobs stay queued.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, eventually, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/setup.ts';

const VK = { alpha: 'sk-bf-alpha-0123456789', bravo: 'sk-bf-bravo-0123456789' };
const grants = [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }];

function config(mockUrl: string, jobs: Record<string, number>): Record<string, unknown> {
  return {
    providers: mockProviders(mockUrl),
    logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
    client: { enforce_auth_on_inference: true, async_job_config: { poll_interval_ms: 100, ...jobs } },
    governance: { virtual_keys: Object.entries(VK).map(([name, value]) => ({ id: name, name, value, provider_configs: grants })) },
  };
}

let slowMock: MockProvider;
let fair: RunningGateway;

before(async () => {
  // Each job takes 200 ms upstream; two run at once, so a hundred take at least 10 s to drain.
  slowMock = await startMockProvider({ latencyMs: 200 });
  fair = await startGateway(config(slowMock.url, { max_concurrent_jobs: 2 }));
});

after(async () => {
  await fair?.stop();
  await slowMock?.close();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { id?: string; status?: string; error?: { message: string; type: string; code?: string } };
}

async function submit(g: RunningGateway, key: keyof typeof VK, content: string): Promise<Answer> {
  const res = await fetch(`${g.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': VK[key] },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Answer['body'] };
}

async function statusOf(g: RunningGateway, key: keyof typeof VK, id: string): Promise<string> {
  const res = await fetch(`${g.url}/v1/async/chat/completions/${id}`, { headers: { 'x-bf-vk': VK[key] } });
  return ((await res.json()) as { status: string }).status;
}

test("a key's job does not wait behind another key's backlog of a hundred jobs", async () => {
  const backlog: string[] = [];
  for (let i = 0; i < 100; i += 10) {
    const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => submit(fair, 'alpha', `backlog ${i + j}`)));
    for (const a of batch) {
      assert.equal(a.status, 202, JSON.stringify(a.body));
      backlog.push(a.body.id!);
    }
  }
  const started = Date.now();
  const b = await submit(fair, 'bravo', 'not behind alpha');
  assert.equal(b.status, 202);
  await eventually(async () => assert.equal(await statusOf(fair, 'bravo', b.body.id!), 'completed'), 60_000);
  // Bravo's job finished while alpha's backlog was still far from drained: alpha's last job has
  // not even started (the claim order is per key), where a first-in-first-out queue would have run
  // all hundred first.
  assert.equal(await statusOf(fair, 'alpha', backlog.at(-1)!), 'pending');
  console.log(`bravo's job completed ${Date.now() - started} ms after its submit`);
  const done = (await Promise.all(backlog.slice(50).map((id) => statusOf(fair, 'alpha', id)))).filter((s) => s === 'completed').length;
  assert.equal(done, 0, 'none of the second half of the backlog ran before bravo');
});
