// Two gateway replicas sharing a throw-away PostgreSQL: a replica killed in the middle of a delivery
// is taken over by the other once the lease runs out (the same webhook-id arrives), and under
// contention every delivery arrives exactly once although both replicas claim from the same queue.
// Deliveries are stored through enqueueJobEvent (what async jobs call when a job finishes) from this
// process, so neither replica is woken by it: both find the work by polling, as for another node's job.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, basic } from '../helpers/api.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { startPostgres, type RunningPostgres } from '../helpers/postgres.ts';
import { PostgresDriver } from '../../proxy/src/logs/postgres-store.ts';
import { enqueueJobEvent } from '../../proxy/src/webhooks/enqueue.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ENV = { SKYBRIDGE_TEST_WH_SECRET: SECRET, SKYBRIDGE_WEBHOOK_POLL_MS: '200' };

let pg: RunningPostgres;
let receiver: Receiver;
let driver: PostgresDriver;
const gateways: RunningGateway[] = [];

function config() {
  return {
    logs_store: { enabled: true, type: 'postgres', config: { host: pg.host, port: String(pg.port), user: pg.user, password: '', db_name: pg.database, ssl_mode: 'disable' } },
    governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } },
    webhooks: [
      {
        name: 'shared',
        url: receiver.url,
        events: ['async_job.completed'],
        secret: 'env.SKYBRIDGE_TEST_WH_SECRET',
        allow_private_network: true,
        attempt_timeout_seconds: 4,
        retry_backoff_initial_seconds: 1,
        max_concurrent_deliveries: 4,
      },
    ],
  };
}

async function replica(): Promise<RunningGateway> {
  const g = await startGateway(config(), { env: ENV });
  gateways.push(g);
  return g;
}

let seq = 0;
async function enqueue(): Promise<void> {
  const snapshot = compileSnapshot(checkConfig(config(), 'test', ENV).config);
  const id = `job_${++seq}`;
  const ev = {
    endpoint: 'shared',
    event: 'async_job.completed' as const,
    job: { id, request_type: 'chat_completion', status: 'completed' as const, status_code: 200, result_url: `/v1/async/chat/completions/${id}`, result_expires_at: new Date(Date.now() + 3_600_000).toISOString() },
  };
  assert.equal(await enqueueJobEvent(driver, snapshot, ev), 'queued');
}

before(async () => {
  pg = await startPostgres();
  receiver = await startReceiver();
  receiver.setSecret(SECRET);
});

after(async () => {
  await driver?.close();
  // A killed replica has exited already (stop() would wait for an exit that has happened).
  await Promise.allSettled(gateways.filter((g) => g.process.exitCode === null && g.process.signalCode === null).map((g) => g.stop()));
  await receiver?.close();
  await pg?.stop();
});

test('the replica sending a delivery is killed: the other takes it over after the lease, same webhook-id', async () => {
  const a = await replica();
  driver = new PostgresDriver({ host: pg.host, port: pg.port, user: pg.user, db_name: pg.database });
  receiver.behave((n) => (n === 0 ? 'hang' : 200));
  await enqueue();
  await eventually(() => assert.equal(receiver.received.length, 1), 5000);
  const first = receiver.received[0];
  a.process.kill('SIGKILL');
  const b = await replica();
  await eventually(() => assert.equal(receiver.received.length, 2), 20_000);
  const second = receiver.received[1];
  assert.equal(second.id, first.id);
  assert.equal(second.verified, true);
  // The lease covers the 4 s attempt timeout plus a 5 s margin: no takeover before it runs out.
  assert.ok(second.at - first.at >= 8_500, `taken over after ${second.at - first.at} ms`);
  await eventually(async () => {
    const d = (await apiClient(b, basic(ADMIN, PASSWORD))<{ deliveries: { state: string }[] }>('GET', `/api/webhooks/deliveries?delivery_id=${first.id}`)).body.deliveries[0];
    assert.equal(d?.state, 'delivered');
  }, 5000);
});

test('two replicas claiming one queue: every delivery arrives exactly once, and both replicas send', async () => {
  await replica();
  const live = gateways.filter((g) => g.process.exitCode === null && g.process.signalCode === null);
  assert.equal(live.length, 2);
  receiver.received.length = 0;
  receiver.behave(() => ({ delayMs: 100, status: 200 }));
  const N = 60;
  for (let i = 0; i < N; i++) await enqueue();
  await eventually(() => assert.equal(new Set(receiver.received.map((r) => r.id)).size, N), 30_000);
  await new Promise((r) => setTimeout(r, 1000));
  const counts = new Map<string, number>();
  for (const r of receiver.received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  assert.deepEqual([...counts.values()].filter((c) => c > 1), [], 'no delivery sent twice');
  assert.ok(receiver.received.every((r) => r.verified));
  const nodes = await driver.query("SELECT node, COUNT(*) AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.job_id <> 'job_1' GROUP BY node");
  assert.equal(nodes.length, 2, `attempts by ${JSON.stringify(nodes)}`);
});
