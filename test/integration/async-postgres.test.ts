// Async jobs shared by two gateway replicas on one throw-away PostgreSQL: a job submitted to either
// replica runs exactly once while both live; the replica running a job is killed (SIGKILL) mid-job
// and the other one completes it once the lease lapses, and the job's webhook arrives, signed, at
// a real receiver.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let pgServer: RunningPostgres;
let receiver: Server;
const deliveries: { headers: Record<string, string>; body: string }[] = [];
const replicas: RunningGateway[] = [];
const SECRET = `whsec_${Buffer.from('async-postgres-test-secret-0123456789').toString('base64')}`;

before(async () => {
  mock = await startMockProvider();
  pgServer = await startPostgres();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      deliveries.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const config = {
    providers: mockProviders(mock.url),
    logs_store: { enabled: true, type: 'postgres', config: { host: pgServer.host, port: String(pgServer.port), user: pgServer.user, password: '', db_name: pgServer.database, ssl_mode: 'disable' } },
    // A short lease, so a killed replica's job is taken over within seconds.
    client: { async_job_config: { lease_seconds: 2, poll_interval_ms: 100 } },
    // Deliveries to private-network receivers need dashboard authentication configured.
    governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'async-postgres-admin-password' } },
    webhooks: [
      {
        name: 'receiver',
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        events: ['async_job.completed', 'async_job.failed'],
        secret: SECRET,
        allow_private_network: true,
        retry_backoff_initial_seconds: 1,
      },
    ],
  };
  replicas.push(...(await Promise.all([startGateway(config), startGateway(config)])));
});

after(async () => {
  for (const g of replicas) if (g.process.exitCode === null && g.process.signalCode === null) await g.stop();
  await new Promise((r) => receiver.close(r));
  await mock.close();
  await pgServer.stop();
});

async function submit(g: RunningGateway, input: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${g.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: input }] }),
  });
  const body = (await res.json()) as { id: string };
  assert.equal(res.status, 202, JSON.stringify(body));
  return body.id;
}

async function result(g: RunningGateway, id: string, timeoutMs = 20_000): Promise<{ status: string; result?: { choices: { message: { content: string } }[] } }> {
  let job: { status: string } | undefined;
  await eventually(async () => {
    const res = await fetch(`${g.url}/v1/async/chat/completions/${id}`);
    job = (await res.json()) as { status: string };
    assert.equal(res.status, 200, JSON.stringify(job));
  }, timeoutMs);
  return job as { status: string; result?: { choices: { message: { content: string } }[] } };
}

async function jobRow(id: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ host: pgServer.host, port: pgServer.port, user: pgServer.user, database: pgServer.database });
  await client.connect();
  try {
    return (await client.query('SELECT * FROM async_jobs WHERE id = $1', [id])).rows[0] as Record<string, unknown>;
  } finally {
    await client.end();
  }
}

const upstreamCalls = (text: string) => mock.requests.filter((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes(text)).length;

test('jobs submitted to both replicas each run exactly once, readable from either replica', async () => {
  const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(replicas[i % 2], `shared job ${i}.`)));
  for (const [i, id] of ids.entries()) {
    const job = await result(replicas[(i + 1) % 2], id);
    assert.equal(job.status, 'completed');
    assert.equal(job.result!.choices[0].message.content, `Mock reply to: shared job ${i}.`);
  }
  for (let i = 0; i < ids.length; i++) assert.equal(upstreamCalls(`shared job ${i}.`), 1, `job ${i} ran once`);
  const owners = new Set(await Promise.all(ids.map(async (id) => (await jobRow(id)).lease_owner)));
  assert.ok(owners.size >= 1);
});

test('the replica running a job is killed mid-job: the other completes it after the lease lapses, and the webhook arrives', async () => {
  mock.inject({ format: 'openai', model: 'gpt-4o', latencyMs: 60_000 });
  const id = await submit(replicas[0], 'outlive your replica', { 'x-bf-async-webhook': 'receiver' });
  await eventually(() => assert.equal(upstreamCalls('outlive your replica'), 1), 10_000);
  const row = await jobRow(id);
  assert.equal(row.status, 'processing');
  const [, pid] = String(row.lease_owner).split(':');
  const victim = replicas.find((g) => String(g.process.pid) === pid);
  assert.ok(victim, `the job's runner (${String(row.lease_owner)}) is one of the replicas`);
  const survivor = replicas.find((g) => g !== victim)!;
  const killedAt = Date.now();
  victim.process.kill('SIGKILL');
  await new Promise((r) => victim.process.once('exit', r));

  const job = await result(survivor, id, 30_000);
  assert.equal(job.status, 'completed');
  assert.equal(job.result!.choices[0].message.content, 'Mock reply to: outlive your replica');
  // Not before the 2 s lease lapsed; the provider saw the call from each run.
  assert.ok(Date.now() - killedAt >= 1500, `taken over after ${Date.now() - killedAt} ms`);
  assert.equal(upstreamCalls('outlive your replica'), 2);
  const finished = await jobRow(id);
  assert.equal(Number(finished.attempts), 2);
  assert.notEqual(finished.lease_owner, row.lease_owner);

  // The webhook of the job arrives from the survivor, signed with the endpoint's secret.
  await eventually(() => assert.ok(deliveries.some((d) => d.body.includes(id)), 'delivery arrived'), 20_000);
  const d = deliveries.find((x) => x.body.includes(id))!;
  const payload = new Webhook(SECRET).verify(d.body, d.headers) as { event: string; data: { job_id: string; status: string; result_url: string } };
  assert.equal(payload.event, 'async_job.completed');
  assert.equal(payload.data.job_id, id);
  assert.equal(payload.data.status, 'completed');
  assert.equal(payload.data.result_url, `/v1/async/chat/completions/${id}`);
});
