// Realtime sessions per replica: N WebSocket sessions, each sending one event a second
// (`session.update`, answered `session.updated` by the mock's OpenAI Realtime endpoint), first
// straight to the mock, then through the gateway. Reports the round trip's percentiles both ways
// (the difference is what the relay adds), the gateway's RSS idle and at its peak, sessions that
// stalled (missed more than two answers), and the CPU each process spent in each phase (the mock
// and the clients alone in the direct phase: what the gateway competes with for the cores). The
// mock and the gateway are child processes (the gateway from its TypeScript sources, as
// `node proxy/src/main.ts`); the clients run here.
//
//   node bench/realtime.ts --sessions 1000 --seconds 30
//   node bench/realtime.ts --ab main,HEAD~1 --rounds 3  # this checkout, main and HEAD~1, relayed phases alternating
//   node bench/realtime.ts --gc --gateway-flags=--cpu-prof,--cpu-prof-dir=/tmp/rt-prof
//   node bench/realtime.ts --pin                         # the gateway on core 0, the mock and clients on core 1
//
// --ab REF[,REF...] runs each REF's sources (a `git archive` of it under bench/.peers, sharing this
// checkout's node_modules) as another gateway; each round measures the direct phase, then each gateway in
// turn, so drift in the machine's load hits both alike. --gc reads the gateway's GC pauses
// (--trace-gc) and reports their count, sum and longest. --pin gives the gateway a core of its own
// (taskset: the gateway on CPU 0, the mock and the clients on CPU 1), as a replica with its own
// CPU would run: without it, three busy processes share two cores and wait for each other.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';
import { freePort, PEERS, ROOT, rssMb } from './lib/procs.ts';
import { median, summarize } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    ab: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    gc: { type: 'boolean', default: false },
    'gateway-flags': { type: 'string', default: '' },
    pin: { type: 'boolean', default: false },
  },
  strict: true,
});
const SESSIONS = Number(values.sessions);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const GATEWAY_FLAGS = values['gateway-flags'].split(',').filter(Boolean);

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function start(args: string[], port: number, ready: string, opts: { cwd?: string; flags?: string[]; out?: string } = {}): Promise<ChildProcess> {
  const fd = opts.out ? openSync(opts.out, 'w') : undefined;
  const child = spawn(process.execPath, [...(opts.flags ?? []), ...args], { cwd: opts.cwd ?? ROOT, stdio: ['ignore', fd ?? 'ignore', 'inherit'] });
  if (fd !== undefined) closeSync(fd);
  children.push(child);
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}${ready}`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${args[0]} did not start`);
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

interface Phase {
  rtt: number[];
  replies: number[];
  failed: number;
  /** CPU seconds over the measured seconds: the mock's, the gateway's (relayed phases) and the clients'. */
  cpu: { mock: number; gateway: number; client: number };
  /** The clients' event loop delay, p99 ms: how late this process itself read the answers. */
  clientLoopP99: number;
  peakRss: number;
}

/** N sessions on `url`, one event a second each for SECONDS, staggered over the first second. */
async function run(url: string, headers: Record<string, string>, mockPid: number, gatewayPid?: number): Promise<Phase> {
  const phase: Phase = { rtt: [], replies: new Array<number>(SESSIONS).fill(0), failed: 0, cpu: { mock: 0, gateway: 0, client: 0 }, clientLoopP99: 0, peakRss: 0 };
  const sockets: WebSocket[] = [];
  const sentAt: Map<string, number>[] = [];
  // Open in batches, as a fleet of clients would connect over a few seconds.
  for (let i = 0; i < SESSIONS; i += 50) {
    const batch = Array.from({ length: Math.min(50, SESSIONS - i) }, (_, k) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      const index = i + k;
      const sent = new Map<string, number>();
      sentAt[index] = sent;
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
        sentAt[i].set(id, performance.now());
        ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: id } }));
      };
      tick();
      timers[i] = setInterval(tick, 1000);
    }, (i / SESSIONS) * 1000),
  );
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = { mock: cpuSeconds(mockPid), gateway: gatewayPid ? cpuSeconds(gatewayPid) : 0, client: process.cpuUsage() };
  const sampler = gatewayPid
    ? setInterval(() => {
        phase.peakRss = Math.max(phase.peakRss, rssMb(gatewayPid));
      }, 1000)
    : undefined;
  await new Promise((r) => setTimeout(r, SECONDS * 1000 + 500));
  const client = process.cpuUsage(cpu0.client);
  phase.cpu = { mock: cpuSeconds(mockPid) - cpu0.mock, gateway: gatewayPid ? cpuSeconds(gatewayPid) - cpu0.gateway : 0, client: (client.user + client.system) / 1e6 };
  loop.disable();
  phase.clientLoopP99 = loop.percentile(99) / 1e6;
  for (const t of timers) clearInterval(t);
  if (sampler) clearInterval(sampler);
  for (const ws of sockets) ws.close();
  await new Promise((r) => setTimeout(r, 1000));
  return phase;
}

/** REF's sources as a directory beside this checkout (a `git archive`, kept for the next run). */
function checkout(ref: string): { root: string; commit: string } {
  const commit = spawnSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  if (!commit) throw new Error(`--ab ${ref}: not a commit of this repository`);
  const root = join(PEERS, `rt-${commit}`);
  if (!existsSync(join(root, 'package.json'))) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    const r = spawnSync('sh', ['-c', `git archive ${commit} | tar -x -C '${root}'`], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`git archive ${commit} failed`);
  }
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return { root, commit };
}

/** GC pauses from --trace-gc lines (`..., 0.85 / 0.00 ms`): count, sum and longest, ms. */
function gcPauses(file: string): { n: number; sum: number; max: number; scavenges: number; marks: number } {
  const out = { n: 0, sum: 0, max: 0, scavenges: 0, marks: 0 };
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (!m) continue;
    const ms = Number(m[1]);
    out.n++;
    out.sum += ms;
    out.max = Math.max(out.max, ms);
    if (line.includes('Scavenge')) out.scavenges++;
    else out.marks++;
  }
  return out;
}

/** Every thread of `pid` on `cpu` (--pin). */
function pin(pid: number, cpu: number): void {
  const r = spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`taskset -a -cp ${cpu} ${pid} failed`);
}

const mockPort = await freePort();
const mock = await start([join(ROOT, 'test/mock-provider/main.ts'), '--port', String(mockPort), '--max-recorded', '1'], mockPort, '/_mock/health');
if (values.pin) {
  pin(mock.pid!, 1);
  pin(process.pid, 1);
}

interface Gateway {
  name: string;
  port: number;
  child: ChildProcess;
  idleRss: number;
  gcFile: string;
  phases: Phase[];
}

const roots = [{ name: 'this checkout', root: ROOT }];
for (const ref of (values.ab ?? '').split(',').filter(Boolean)) {
  const other = checkout(ref);
  roots.push({ name: `${ref} (${other.commit})`, root: other.root });
}
const gateways: Gateway[] = [];
for (const { name, root } of roots) {
  const port = await freePort();
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-bench-rt-'));
  writeFileSync(
    join(appDir, 'config.json'),
    JSON.stringify({ providers: { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${mockPort}/openai` } } }, websocket: { max_connections_per_user: SESSIONS * 2 } }),
  );
  const gcFile = join(appDir, 'gc.log');
  const flags = [...GATEWAY_FLAGS, ...(values.gc ? ['--trace-gc'] : [])];
  const child = await start([join(root, 'proxy/src/main.ts'), '--app-dir', appDir, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn'], port, '/health', { cwd: root, flags, out: gcFile });
  if (values.pin) pin(child.pid!, 0);
  gateways.push({ name, port, child, idleRss: rssMb(child.pid!), gcFile, phases: [] });
}

const directs: Phase[] = [];
for (let round = 0; round < ROUNDS; round++) {
  directs.push(await run(`ws://127.0.0.1:${mockPort}/openai/v1/realtime?model=gpt-realtime`, { authorization: 'Bearer sk-bench' }, mock.pid!));
  for (const g of gateways) g.phases.push(await run(`ws://127.0.0.1:${g.port}/v1/realtime?model=openai/gpt-realtime`, {}, mock.pid!, g.child.pid!));
}

const expected = SECONDS;
const stalled = (p: Phase) => p.replies.filter((r) => r < expected - 2).length;
const f = (x: number, d = 2) => x.toFixed(d);
const perEvent = (cpu: number, p: Phase) => f((cpu / Math.max(1, p.rtt.length)) * 1e6, 0);
const lines = [`sessions ${SESSIONS}, ${SECONDS} s, one event a second each, ${ROUNDS} round(s)${values.pin ? ', gateway pinned to CPU 0, mock and clients to CPU 1' : ''}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`];
for (let round = 0; round < ROUNDS; round++) {
  const d = summarize(directs[round].rtt);
  const head = ['figure', 'direct', ...gateways.flatMap((g) => [g.name, 'added'])];
  lines.push('', `round ${round + 1}`, `| ${head.join(' | ')} |`, `|${head.map((_, i) => (i ? '---:' : '---')).join('|')}|`);
  const row = (label: string, direct: string, each: (g: Gateway, p: Phase) => [string, string]) => lines.push(`| ${label} | ${direct} | ${gateways.flatMap((g) => each(g, g.phases[round])).join(' | ')} |`);
  row('round trip p50 (ms)', f(d.p50), (_, p) => {
    const s = summarize(p.rtt);
    return [f(s.p50), f(s.p50 - d.p50)];
  });
  row('round trip p99 (ms)', f(d.p99), (_, p) => {
    const s = summarize(p.rtt);
    return [f(s.p99), f(s.p99 - d.p99)];
  });
  row('events answered', String(d.n), (_, p) => [String(p.rtt.length), '']);
  row('sessions failed to open / stalled', `${directs[round].failed} / ${stalled(directs[round])}`, (_, p) => [`${p.failed} / ${stalled(p)}`, '']);
  row('CPU µs per event: mock', perEvent(directs[round].cpu.mock, directs[round]), (_, p) => [perEvent(p.cpu.mock, p), '']);
  row('CPU µs per event: clients', perEvent(directs[round].cpu.client, directs[round]), (_, p) => [perEvent(p.cpu.client, p), '']);
  row('CPU µs per event: gateway', '', (_, p) => [perEvent(p.cpu.gateway, p), '']);
  row('cores busy (all three)', f((directs[round].cpu.mock + directs[round].cpu.client) / SECONDS), (_, p) => [f((p.cpu.mock + p.cpu.client + p.cpu.gateway) / SECONDS), '']);
  row('clients\' event loop delay p99 (ms)', f(directs[round].clientLoopP99), (_, p) => [f(p.clientLoopP99), '']);
  row('gateway RSS idle / peak (MB)', '', (g, p) => [`${f(g.idleRss, 0)} / ${f(p.peakRss, 0)}`, '']);
}
if (ROUNDS > 1) {
  lines.push('', 'medians over rounds: added p50 / p99 (ms)');
  for (const g of gateways) {
    const added = g.phases.map((p, r) => [summarize(p.rtt).p50 - summarize(directs[r].rtt).p50, summarize(p.rtt).p99 - summarize(directs[r].rtt).p99]);
    lines.push(`- ${g.name}: ${f(median(added.map((a) => a[0])))} / ${f(median(added.map((a) => a[1])))}; per round p99 ${added.map((a) => f(a[1])).join(', ')}`);
  }
}
for (const g of gateways) g.child.kill('SIGTERM');
await Promise.all(gateways.map((g) => new Promise((r) => (g.child.exitCode !== null ? r(undefined) : g.child.once('exit', r)))));
if (values.gc) {
  lines.push('', 'gateway GC pauses over the whole run (--trace-gc): count (scavenges / mark-compacts), sum, longest');
  for (const g of gateways) {
    const p = gcPauses(g.gcFile);
    lines.push(`- ${g.name}: ${p.n} (${p.scavenges} / ${p.marks}), ${f(p.sum, 1)} ms, ${f(p.max)} ms`);
  }
}
process.stdout.write(lines.join('\n') + '\n');
for (const c of children) c.kill('SIGTERM');
process.exit(0);
