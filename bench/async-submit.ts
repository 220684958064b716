// Async submit latency against a sync request's added latency, one request at a time (c=1), on a
// gateway process with a SQLite (or PostgreSQL) logs store and the mock provider in its own process
// (in this one it would answer the jobs' calls on the event loop that times the submits):
//   direct  POST /openai/v1/chat/completions straight to the mock
//   sync    POST /v1/chat/completions through the gateway     → added = sync − direct
//   submit  POST /v1/async/chat/completions (202 once stored)  → compared with `added`
//   node bench/async-submit.ts [requests] [sqlite|postgres]
import { request, Agent } from 'undici';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startMock, stop } from './lib/procs.ts';
import { startGateway } from '../test/helpers/gateway.ts';
import { startPostgres, type RunningPostgres } from '../test/helpers/postgres.ts';
import { mockProviders } from '../test/helpers/providers.ts';

const N = Number(process.argv[2] ?? 2000);
const STORE = process.argv[3] === 'postgres' ? 'postgres' : 'sqlite';
const WARM = 200;
const GAP_MS = Number(process.env.GAP_MS ?? 0);
const agent = new Agent({ connections: 1, pipelining: 1 });

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function timed(url: string, body: string, expect: number, auth = 'Bearer sk-openai-test'): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < WARM + N; i++) {
    const t = performance.now();
    const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body, dispatcher: agent });
    await res.body.arrayBuffer();
    const ms = performance.now() - t;
    if (res.statusCode !== expect) throw new Error(`${url}: ${res.statusCode}`);
    if (i >= WARM) out.push(ms);
    if (GAP_MS) await new Promise((r) => setTimeout(r, GAP_MS));
  }
  return out;
}

const mockPort = await freePort();
const mockProc = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, mkdtempSync(join(tmpdir(), 'async-bench-')));
const mock = { url: `http://127.0.0.1:${mockPort}` };
let pg: RunningPostgres | undefined;
if (STORE === 'postgres') pg = await startPostgres();
const logsStore =
  STORE === 'postgres'
    ? { enabled: true, type: 'postgres', config: { host: pg!.host, port: String(pg!.port), user: pg!.user, password: '', db_name: pg!.database, ssl_mode: 'disable' } }
    : { enabled: true, type: 'sqlite', config: { path: 'logs.db' } };
const gateway = await startGateway({ providers: mockProviders(mock.url), logs_store: logsStore, client: { disable_content_logging: true } }, { args: ['--log-level', 'info'] });
try {
  const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Say hello' }] });
  const direct = await timed(`${mock.url}/openai/v1/chat/completions`, JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say hello' }] }), 200);
  const sync = await timed(`${gateway.url}/v1/chat/completions`, body, 200);
  const submit = await timed(`${gateway.url}/v1/async/chat/completions`, body, 202);
  const p50 = { direct: quantile(direct, 0.5), sync: quantile(sync, 0.5), submit: quantile(submit, 0.5) };
  const p99 = { direct: quantile(direct, 0.99), sync: quantile(sync, 0.99), submit: quantile(submit, 0.99) };
  const added = { p50: p50.sync - p50.direct, p99: p99.sync - p99.direct };
  const f = (x: number) => x.toFixed(3);
  console.log(`store ${STORE}, ${N} requests each, c=1 (ms)`);
  console.log(`direct to mock   p50 ${f(p50.direct)}  p99 ${f(p99.direct)}`);
  console.log(`sync via gateway p50 ${f(p50.sync)}  p99 ${f(p99.sync)}   added p50 ${f(added.p50)}  p99 ${f(added.p99)}`);
  console.log(`async submit     p50 ${f(p50.submit)}  p99 ${f(p99.submit)}`);
  console.log(`submit / sync added latency: p50 ${(p50.submit / added.p50).toFixed(2)}x   (submit / whole sync request: ${(p50.submit / p50.sync).toFixed(2)}x)`);
} finally {
  await gateway.stop();
  await stop(mockProc);
  await agent.close();
  await pg?.stop();
}
