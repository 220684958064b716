// Async jobs shared fairly between virtual keys, and bounded per key and in all: one key's backlog
// of a hundred slow jobs does not make another key's job wait behind it, and a submit over a bound
// (jobs waiting or running, bytes kept) answers 429 with Retry-After, the setting and why, storing
// nothing. Real gateways on SQLite, the mock provider slowed down so jobs stay queued.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

const VK = { alpha: 'sk-bf-alpha-0123456789', bravo: 'sk-bf-bravo-0123456789', charlie: 'sk-bf-charlie-0123456789', delta: 'sk-bf-delta-0123456789', echo: 'sk-bf-echo-0123456789' };
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
let fair: InProcessGateway;
let stuckMock: MockProvider;
let bounded: InProcessGateway;

before(async () => {
  // Each job takes 500 ms upstream; two run at once, so a hundred take at least 25 s to drain.
  slowMock = await startMockProvider({ latencyMs: 500 });
  fair = await startGateway(config(slowMock.url, { max_concurrent_jobs: 2 }));
  // Jobs that never finish within the test: what is submitted stays waiting or running.
  stuckMock = await startMockProvider({ latencyMs: 60_000 });
  bounded = await startGateway(config(stuckMock.url, { max_concurrent_jobs: 1, max_pending_jobs_per_key: 2, max_pending_jobs: 5, max_stored_mb_per_key: 2, max_stored_mb: 3 }));
});

after(async () => {
  await fair?.stop();
  await bounded?.stop();
  await slowMock?.close();
  await stuckMock?.close();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { id?: string; status?: string; error?: { message: string; type: string; code?: string } };
}

async function submit(g: InProcessGateway, key: keyof typeof VK, content = 'hello'): Promise<Answer> {
  const res = await fetch(`${g.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': VK[key] },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Answer['body'] };
}

async function statusOf(g: InProcessGateway, key: keyof typeof VK, id: string): Promise<string> {
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
  // What of alpha's backlog was still waiting when bravo's job came (submitting took a while; the
  // workers were draining meanwhile).
  const statuses = async () => Promise.all(backlog.map((id) => statusOf(fair, 'alpha', id)));
  const atSubmit = await statuses();
  const waiting = new Set(backlog.filter((_, i) => atSubmit[i] === 'pending'));
  assert.ok(waiting.size >= 10, `a backlog of alpha's jobs was waiting when bravo's came (${waiting.size})`);
  await eventually(async () => assert.equal(await statusOf(fair, 'bravo', b.body.id!), 'completed'), 60_000);
  console.log(`bravo's job completed ${Date.now() - started} ms after its submit`);
  // First in, first out would have run every waiting alpha job first; taking turns per key, bravo's
  // ran next, while the other worker went on with a few of alpha's (bound loose for a loaded machine).
  const now = await statuses();
  const ranBefore = backlog.filter((id, i) => waiting.has(id) && now[i] !== 'pending').length;
  assert.ok(ranBefore < waiting.size / 2, `${ranBefore} of the ${waiting.size} waiting alpha jobs started before bravo's finished`);
  assert.equal(now.at(-1), 'pending', "alpha's last job has not started");
});

test('a submit over a bound answers 429 with Retry-After, naming the setting; nothing is stored', async () => {
  const MiB = 1024 * 1024;
  const big = 'x'.repeat(1.2 * MiB);
  // Per key: alpha may have two jobs waiting or running.
  for (let i = 0; i < 2; i++) assert.equal((await submit(bounded, 'alpha')).status, 202);
  const perKey = await submit(bounded, 'alpha');
  assert.equal(perKey.status, 429);
  assert.equal(perKey.body.error?.type, 'rate_limit_error');
  assert.equal(perKey.body.error?.code, 'async_jobs_per_key_exceeded');
  assert.match(perKey.body.error?.message ?? '', /virtual key 'alpha'.*2 async jobs.*max_pending_jobs_per_key = 2/);
  assert.ok(Number(perKey.retryAfter) >= 1, `Retry-After: ${perKey.retryAfter}`);

  // Per key: bravo may keep 2 MiB; a second 1.2 MiB request would pass it.
  assert.equal((await submit(bounded, 'bravo', big)).status, 202);
  const bytesPerKey = await submit(bounded, 'bravo', big);
  assert.equal(bytesPerKey.status, 429);
  assert.equal(bytesPerKey.body.error?.code, 'async_storage_per_key_exceeded');
  assert.match(bytesPerKey.body.error?.message ?? '', /virtual key 'bravo' keeps 1\.2 MiB.*max_stored_mb_per_key = 2/);
  assert.ok(Number(bytesPerKey.retryAfter) >= 1);

  // In all: 3 MiB kept (bravo's 1.2 and charlie's 1.2 leave no room for delta's 1.2).
  assert.equal((await submit(bounded, 'charlie', big)).status, 202);
  const bytesInAll = await submit(bounded, 'delta', big);
  assert.equal(bytesInAll.status, 429);
  assert.equal(bytesInAll.body.error?.code, 'async_storage_exceeded');
  assert.match(bytesInAll.body.error?.message ?? '', /max_stored_mb = 3/);

  // In all: five jobs waiting or running (alpha 2, bravo 1, charlie 1, delta 1 small one).
  assert.equal((await submit(bounded, 'delta')).status, 202);
  const jobsInAll = await submit(bounded, 'echo');
  assert.equal(jobsInAll.status, 429);
  assert.equal(jobsInAll.body.error?.code, 'async_jobs_exceeded');
  assert.match(jobsInAll.body.error?.message ?? '', /5 jobs waiting or running.*max_pending_jobs = 5/);
  assert.ok(Number(jobsInAll.retryAfter) >= 1);

  // The refused submits stored nothing: the bounds still count exactly the accepted jobs.
  const metrics = await (await fetch(`${bounded.url}/metrics`)).text();
  const live = [...metrics.matchAll(/^skybridge_async_jobs\{state="(pending|processing)"\} (\d+)/gm)].reduce((n, m) => n + Number(m[2]), 0);
  assert.equal(live, 5);
});
