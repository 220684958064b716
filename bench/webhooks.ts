// Webhook delivery on one node: signed deliveries per second to a local receiver, and the time from
// a job's completion (enqueueJobEvent) to the first delivery attempt arriving while the queue is idle.
// The node is what the gateway runs: a Dispatcher over the SQLite logs store (worker thread), or a
// PostgreSQL store with --postgres. The receiver runs in a child process so it does not share this
// event loop; it checks every 20th signature with the standardwebhooks package.
//
//   node bench/webhooks.ts                 # 5000 deliveries, 300 idle enqueues, concurrency 64
//   node bench/webhooks.ts --deliveries 20000 --concurrency 128 --postgres
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteStore } from '../proxy/src/logs/sqlite-store.ts';
import { openPostgresStore } from '../proxy/src/logs/postgres-store.ts';
import { checkConfig } from '../proxy/src/config/check.ts';
import { compileSnapshot } from '../proxy/src/config/snapshot.ts';
import { Dispatcher } from '../proxy/src/webhooks/dispatcher.ts';
import { enqueueJobEvent } from '../proxy/src/webhooks/enqueue.ts';
import { DeliveryQueue } from '../proxy/src/webhooks/queue.ts';
import { storedData } from '../proxy/src/webhooks/payload.ts';
import { startPostgres, type RunningPostgres } from '../test/helpers/postgres.ts';

const { values: args } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '5000' },
    idle: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '64' },
    postgres: { type: 'boolean', default: false },
    receiver: { type: 'string' },
  },
});
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const now = () => performance.timeOrigin + performance.now();

// The receiver child: answers 204, records (id, arrival time), verifies a sample of signatures.
if (args.receiver === 'child') {
  const { createServer } = await import('node:http');
  const { Webhook } = await import('standardwebhooks');
  const wh = new Webhook(SECRET);
  const arrivals: [string, number][] = [];
  let bad = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.end(JSON.stringify({ arrivals, bad }));
      return;
    }
    const at = now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (arrivals.length % 20 === 0) {
        try {
          wh.verify(Buffer.concat(chunks).toString(), req.headers as Record<string, string>);
        } catch {
          bad++;
        }
      }
      arrivals.push([String(req.headers['webhook-id']), at]);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port));
} else {
  await main();
}

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['--receiver', 'child'], { stdio: 'inherit' });
  const port = await new Promise<number>((r) => child.once('message', (m) => r(m as number)));
  const url = `http://127.0.0.1:${port}/hook`;
  const stats = async () => (await (await fetch(url)).json()) as { arrivals: [string, number][]; bad: number };

  const dir = mkdtempSync(join(tmpdir(), 'skybridge-wh-bench-'));
  const pg: RunningPostgres | undefined = args.postgres ? await startPostgres() : undefined;
  const store = pg ? await openPostgresStore({ host: pg.host, port: pg.port, user: pg.user, db_name: pg.database }) : await openSqliteStore(join(dir, 'logs.db'));
  const driver = store.driver;
  const config = {
    webhooks: [{ name: 'bench', url, events: ['async_job.completed'], secret: SECRET, allow_private_network: true, max_concurrent_deliveries: Number(args.concurrency) }],
  };
  const snapshot = compileSnapshot(checkConfig(config, 'bench').config);
  const dispatcher = new Dispatcher(driver, () => snapshot, { pollMs: 200 }).start();
  const job = (id: string) => ({
    id,
    request_type: 'chat_completion',
    status: 'completed' as const,
    status_code: 200,
    result_url: `/v1/async/chat/completions/${id}`,
    result_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    response: { id, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hello '.repeat(40) }, finish_reason: 'stop' }] },
  });

  // 1. Idle latency: one job finishes at a time; time until its first attempt reaches the receiver.
  const idle = Number(args.idle);
  const started = new Map<string, number>();
  for (let i = 0; i < idle; i++) {
    const before = (await stats()).arrivals.length;
    const t = now();
    await enqueueJobEvent(driver, snapshot, { endpoint: 'bench', event: 'async_job.completed', job: job(`idle_${i}`) });
    started.set(`idle_${i}`, t);
    for (;;) {
      const s = await stats();
      if (s.arrivals.length > before) break;
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  const ids = await driver.query("SELECT id, job_id FROM webhook_deliveries WHERE job_id LIKE 'idle_%'");
  const jobOf = new Map(ids.map((r) => [String(r.id), String(r.job_id)]));
  const lat = (await stats()).arrivals
    .filter(([id]) => jobOf.has(id))
    .map(([id, at]) => at - started.get(jobOf.get(id)!)!)
    .sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)];

  // 2. Throughput: a backlog of signed deliveries drained by the dispatcher.
  const n = Number(args.deliveries);
  await dispatcher.stop();
  const queue = new DeliveryQueue(driver);
  const fill = Date.now();
  for (let i = 0; i < n; i++) await queue.add({ endpoint: 'bench', event: 'async_job.completed', data: storedData(job(`bulk_${i}`), false, 256) });
  const fillS = (Date.now() - fill) / 1000;
  const base = (await stats()).arrivals.length;
  const drainer = new Dispatcher(driver, () => snapshot, { pollMs: 200 });
  const t0 = now();
  drainer.start();
  let s = await stats();
  while (s.arrivals.length < base + n) {
    await new Promise((r) => setTimeout(r, 100));
    s = await stats();
  }
  const seconds = (s.arrivals[s.arrivals.length - 1][1] - t0) / 1000;
  await drainer.stop();
  const delivered = Number((await driver.query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'delivered'"))[0].n);

  const out = {
    store: store.kind,
    concurrency: Number(args.concurrency),
    idle_enqueue_to_first_attempt_ms: { n: lat.length, p50: round(pct(50)), p90: round(pct(90)), p99: round(pct(99)), max: round(lat[lat.length - 1]) },
    throughput: { deliveries: n, seconds: round(seconds), per_second: Math.round(n / seconds), backlog_fill_seconds: round(fillS) },
    recorded_delivered: delivered,
    bad_signatures: s.bad,
  };
  console.log(JSON.stringify(out, null, 2));
  await store.close();
  child.kill();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}

function round(v: number): number {
  return Math.round(v * 100) / 100;
}
