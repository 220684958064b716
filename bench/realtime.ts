// Realtime sessions per replica: N WebSocket sessions, each sending one event a second
// (`session.update`, answered `session.updated` by the mock's OpenAI Realtime endpoint), first
// straight to the mock, then through the gateway. Reports the round trip's percentiles both ways
// (the difference is what the relay adds), the gateway's RSS idle and at its peak, and sessions that
// stalled (missed more than two answers). The mock and the gateway are child processes (the
// gateway from its TypeScript sources, as `node proxy/src/main.ts`); the clients run here.
//
//   node bench/realtime.ts --sessions 1000 --seconds 30
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { freePort, ROOT, rssMb } from './lib/procs.ts';
import { summarize } from './lib/stats.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '1000' }, seconds: { type: 'string', default: '30' } }, strict: true });
const SESSIONS = Number(values.sessions);
const SECONDS = Number(values.seconds);

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function start(args: string[], port: number, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${ready}`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${args[0]} did not start`);
}

interface Phase {
  rtt: number[];
  replies: number[];
  failed: number;
}

/** N sessions on `url`, one event a second each for SECONDS, staggered over the first second. */
async function run(url: string, headers: Record<string, string>, onTick?: () => void): Promise<Phase> {
  const phase: Phase = { rtt: [], replies: new Array<number>(SESSIONS).fill(0), failed: 0 };
  const sockets: WebSocket[] = [];
  // Open in batches, as a fleet of clients would connect over a few seconds.
  for (let i = 0; i < SESSIONS; i += 50) {
    const batch = Array.from({ length: Math.min(50, SESSIONS - i) }, (_, k) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      const index = i + k;
      const sent = new Map<string, number>();
      ws.on('message', (data: Buffer) => {
        const text = data.toString();
        if (!text.includes('"session.updated"')) return;
        const id = /"instructions":"(b\d+-\d+)"/.exec(text)?.[1];
        const at = id === undefined ? undefined : sent.get(id);
        if (at === undefined) return;
        sent.delete(id!);
        phase.rtt.push(performance.now() - at);
        phase.replies[index]++;
      });
      (ws as WebSocket & { sent?: Map<string, number> }).sent = sent;
      return new Promise<WebSocket>((resolve) => {
        ws.once('open', () => resolve(ws));
        ws.once('error', () => {
          phase.failed++;
          resolve(ws);
        });
      });
    });
    sockets.push(...(await Promise.all(batch)));
  }
  let n = 0;
  const timers = sockets.map((ws, i) =>
    setTimeout(() => {
      const tick = () => {
        if (ws.readyState !== 1) return;
        const id = `b${i}-${n++}`;
        (ws as WebSocket & { sent?: Map<string, number> }).sent!.set(id, performance.now());
        ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: id } }));
      };
      tick();
      timers[i] = setInterval(tick, 1000);
    }, (i / SESSIONS) * 1000),
  );
  const sampler = onTick ? setInterval(onTick, 1000) : undefined;
  await new Promise((r) => setTimeout(r, SECONDS * 1000 + 500));
  for (const t of timers) clearInterval(t);
  if (sampler) clearInterval(sampler);
  for (const ws of sockets) ws.close();
  await new Promise((r) => setTimeout(r, 1000));
  return phase;
}

const mockPort = await freePort();
const gwPort = await freePort();
await start([join(ROOT, 'test/mock-provider/main.ts'), '--port', String(mockPort), '--max-recorded', '1'], mockPort, '/_mock/health');
const appDir = mkdtempSync(join(tmpdir(), 'skybridge-bench-rt-'));
writeFileSync(
  join(appDir, 'config.json'),
  JSON.stringify({ providers: { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${mockPort}/openai` } } }, websocket: { max_connections_per_user: SESSIONS * 2 } }),
);
const gateway = await start([join(ROOT, 'proxy/src/main.ts'), '--app-dir', appDir, '--port', String(gwPort), '--host', '127.0.0.1', '--log-level', 'warn'], gwPort, '/health');

const direct = await run(`ws://127.0.0.1:${mockPort}/openai/v1/realtime?model=gpt-realtime`, { authorization: 'Bearer sk-bench' });
const idleRss = rssMb(gateway.pid!);
let peakRss = idleRss;
const relayed = await run(`ws://127.0.0.1:${gwPort}/v1/realtime?model=openai/gpt-realtime`, {}, () => {
  peakRss = Math.max(peakRss, rssMb(gateway.pid!));
});

const expected = SECONDS;
const stalled = (p: Phase) => p.replies.filter((r) => r < expected - 2).length;
const d = summarize(direct.rtt);
const g = summarize(relayed.rtt);
const f = (x: number) => x.toFixed(2);
process.stdout.write(
  [
    `sessions ${SESSIONS}, ${SECONDS} s, one event a second each`,
    `| figure | direct | through the gateway | added |`,
    `|---|---:|---:|---:|`,
    `| round trip p50 (ms) | ${f(d.p50)} | ${f(g.p50)} | ${f(g.p50 - d.p50)} |`,
    `| round trip p99 (ms) | ${f(d.p99)} | ${f(g.p99)} | ${f(g.p99 - d.p99)} |`,
    `| events answered | ${d.n} | ${g.n} | |`,
    `| sessions failed to open | ${direct.failed} | ${relayed.failed} | |`,
    `| sessions stalled (missed > 2 answers) | ${stalled(direct)} | ${stalled(relayed)} | |`,
    `| gateway RSS idle / peak (MB) | | ${idleRss.toFixed(0)} / ${peakRss.toFixed(0)} | |`,
    '',
  ].join('\n'),
);
for (const c of children) c.kill('SIGTERM');
process.exit(0);
