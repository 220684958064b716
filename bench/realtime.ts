// Realtime sessions per replica: N WebSocket sessions, each sending one event a second
// (`session.update`, answered `session.updated` by the mock's OpenAI Realtime endpoint), first
// straight to the mock, then through the gateway. Reports the round trip's percentiles both ways
// (the difference is what the relay adds), the gateway's RSS idle and at its peak, sessions that
// stalled (missed more than two answers), and the CPU each process spent in each phase (the mock
// and the clients alone in the direct phase: what the gateway competes with for the cores). The
// mock and the gateway are child processes (the gateway from its TypeScript sources with the node
// flags of the image's ENTRYPOINT, as `npm start` runs it); the clients are worker threads here.
//
//   node bench/realtime.ts --sessions 1000 --seconds 20 --rounds 2 --probe
//   node bench/realtime.ts --warmup 0 --no-hold          # the old way: round 1 is the first seconds after start, builds idle between phases
//   node bench/realtime.ts --ab main,HEAD~1 --rounds 3  # this checkout, main and HEAD~1, relayed phases alternating
//   node bench/realtime.ts --ab .@--max-semi-space-size=32  # this checkout, also under another node flag
//   node bench/realtime.ts --gc --gateway-flags=--cpu-prof,--cpu-prof-dir=/tmp/rt-prof
//   node bench/realtime.ts --heap allocated              # the gateway's allocations per event, by function
//   node bench/realtime.ts --heap promoted               # what of them reaches the old generation
//   node bench/realtime.ts --pin                         # the gateway on core 0, the mock and clients on core 1
//
// How the load is made, and why (changed 2026-11-27; earlier figures were made the old way):
// - Each session sends on its own clock: at a phase drawn once (seeded, the same for every phase and
//   gateway) plus whole seconds from a start every client thread shares, as independent clients do.
//   The old way (`--schedule interval`: a setInterval per session) clumps: Node re-arms an interval
//   from the time its callback ran, so sessions whose timers ran in one late pass stay together for
//   the rest of the run, and the bursts grow. At load 14 that sent 98 % of the events in bursts of 4
//   or more within one millisecond (up to 64 at once); the fixed clocks send about 10 % so, what
//   random phases give (the row "sends: most in one ms").
// - The clients are split over --client-threads worker threads (default 4), so one thread's GC or
//   busy spell delays the answers of its share of the sessions only.
// - The gateway runs with the image's node flags (--max-semi-space-size=8): without them its young
//   generation was 32 MB, and on a quiet machine its scavenges paused it 11-43 ms (--gc trace of
//   2026-11-27), a gateway no replica runs. --no-image-flags measures without.
// - The mock keeps one event per session (--max-recorded 1), not every event (its collections copied
//   them all, 14-62 ms pauses in both phases).
// - Every build relays --warmup seconds (default 10) of the same load before the first timed round,
//   untimed (added 2026-11-27 night): the first seconds after a start (JIT tiers, first connections,
//   the young generation's first growth) made every run's first round slow in both builds. The
//   warm-up's figures are reported apart as the first seconds after start; --warmup 0 is the old way.
// - A probe process of its own (bench/lib/realtime-probe.ts, --probe-sessions per leg, default 10,
//   --probe-rate events a second per leg, default 50; 0 sessions turns it off) times events apart
//   from the client threads, whose loops each carry 250 sessions: in a relayed phase one leg through
//   the gateway and one straight to the mock, interleaved, so its "added" is the relayed leg's
//   percentile less the direct leg's in the same seconds (the machine's and the mock's state alike),
//   and the direct leg's p99 is what is not the gateway.
// "Added" of the 1,000 sessions is still the relayed percentile minus the direct one, each over every event of its phase.
//
// --ab REF[,REF...] runs each REF's sources (a `git archive` of it under bench/.peers, sharing this
// checkout's node_modules) as another gateway; REF@--flag adds node flags, and `.` is this
// checkout. Each round measures the direct phase, then each gateway in turn (the reverse order in
// odd rounds), so drift in the machine's load hits all alike. --gc reads the gateway's GC pauses (--trace-gc) and reports their
// count, sum and longest. --probe loads bench/lib/gc-probe.ts into the gateway and the mock and
// reports each process's GC in each phase, and for the slowest 1 % of events the share that was in
// flight while the gateway, the mock or the client thread was in a GC (a cross-check from inside
// the processes, not a correction: the figures above stay as measured). --heap allocated|retained
// samples the gateway's allocations over the measured seconds of the first relayed phase (--heap
// promoted: those that reached the old generation, what makes its mark-compacts). --pin
// gives the gateway a core of its own (taskset: the gateway on CPU 0, the mock and the clients on
// CPU 1), as a replica with its own CPU would run.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { WebSocket } from 'ws';
import { freePort, PEERS, ROOT, rssMb } from './lib/procs.ts';
import { median, summarize } from './lib/stats.ts';
import { bursts, pausesIn, tailCauses, type Pause } from './lib/tail.ts';
import { allocationsBySelf, sampleAllocations, type HeapNode, type SampleMode } from './lib/heap-sampling.ts';
import type { ClientJob, ClientResult } from './lib/realtime-client.ts';
import type { ProbeRecord } from './lib/gc-probe.ts';
import type { ProbeLeg, ProbeMessage, ProbeResult } from './lib/realtime-probe.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    ab: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    gc: { type: 'boolean', default: false },
    'gateway-flags': { type: 'string', default: '' },
    pin: { type: 'boolean', default: false },
    probe: { type: 'boolean', default: false },
    'client-threads': { type: 'string', default: '4' },
    schedule: { type: 'string', default: 'fixed' },
    'image-flags': { type: 'boolean', default: true },
    heap: { type: 'string' },
    warmup: { type: 'string', default: '10' },
    hold: { type: 'boolean', default: true },
    'probe-sessions': { type: 'string', default: '10' },
    'probe-rate': { type: 'string', default: '50' },
  },
  allowNegative: true,
  strict: true,
});
const SESSIONS = Number(values.sessions);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const PROBE_SESSIONS = Number(values['probe-sessions']);
const PROBE_RATE = Number(values['probe-rate']);
const ROUNDS = Number(values.rounds);
const GATEWAY_FLAGS = values['gateway-flags'].split(',').filter(Boolean);
const WORKERS = Number(values['client-threads']);
if (values.schedule !== 'fixed' && values.schedule !== 'interval') throw new Error('--schedule is fixed or interval');
const SCHEDULE: ClientJob['schedule'] = values.schedule;
const PROBE = join(ROOT, 'bench/lib/gc-probe.ts');
const HEAP_WHAT: Record<SampleMode, string> = {
  allocated: 'allocated in',
  retained: 'retained at the end (after a full GC) of what was allocated in',
  promoted: 'promoted to the old generation (or young after a last scavenge) of what was allocated in',
};

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

async function start(args: string[], port: number, ready: string, opts: { cwd?: string; flags?: string[]; out?: string; probe?: string } = {}): Promise<ChildProcess> {
  const fd = opts.out ? openSync(opts.out, 'w') : undefined;
  const flags = [...(opts.flags ?? []), ...(opts.probe ? ['--import', PROBE] : [])];
  const env = opts.probe ? { ...process.env, BENCH_PROBE_OUT: opts.probe } : process.env;
  const child = spawn(process.execPath, [...flags, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: ['ignore', fd ?? 'ignore', 'inherit'] });
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
  /** When each event of `rtt` was sent (epoch ms), and which client thread sent it. */
  sentAt: number[];
  thread: number[];
  replies: number[];
  failed: number;
  /** CPU seconds over the measured seconds: the mock's, the gateway's (relayed phases) and the clients'. */
  cpu: { mock: number; gateway: number; client: number };
  /** The client threads' event loop delay, p99 ms (the worst thread's): how late they read the answers. */
  clientLoopP99: number;
  /** Each client thread's GC pauses: [start epoch ms, ms]. */
  clientGc: [number, number][][];
  /** The measured window (epoch ms). */
  window: [number, number];
  peakRss: number;
  /** The probe process's sessions (--probe-sessions): its legs (direct, and through the gateway in a relayed phase). */
  probe?: ProbeResult;
}

/** Each session's phase within the second (ms): drawn once per run (seeded), shared by every phase and gateway. */
function phasesOf(n: number): number[] {
  if (SCHEDULE === 'interval') return Array.from({ length: n }, (_, i) => (i / n) * 1000);
  let seed = 0x2f6b3a1d;
  // mulberry32: the same phases every run, so runs compare.
  const next = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, () => next() * 1000);
}
const PHASES = phasesOf(SESSIONS);
const epochNow = (): number => performance.timeOrigin + performance.now();

/** N sessions on `url` over the client threads, one event a second each for `seconds`. */
async function run(url: string, headers: Record<string, string>, mockPid: number, gatewayPid?: number, window?: { open(): Promise<void>; close(): Promise<void> }, seconds = SECONDS, probeLegs: ProbeLeg[] = []): Promise<Phase> {
  const per = Math.ceil(SESSIONS / WORKERS);
  const workers: { worker: Worker; sessions: number[] }[] = [];
  for (let w = 0; w * per < SESSIONS; w++) {
    const sessions = Array.from({ length: Math.min(per, SESSIONS - w * per) }, (_, k) => w * per + k);
    const job: ClientJob = { url, headers, sessions, phases: sessions.map((i) => PHASES[i]), seconds, schedule: SCHEDULE };
    workers.push({ worker: new Worker(new URL('./lib/realtime-client.ts', import.meta.url), { workerData: job }), sessions });
  }
  await Promise.all(workers.map(({ worker }) => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  })));
  if (probe && probeLegs.length) await ask(probe, { kind: 'open', legs: probeLegs, sessions: PROBE_SESSIONS }, 'open');
  await window?.open();
  const start = epochNow() + 200;
  const probed = probe && probeLegs.length ? ask<{ result: ProbeResult }>(probe, { kind: 'start', start, seconds, rate: PROBE_RATE }, 'done') : undefined;
  const results = workers.map(({ worker }) => new Promise<ClientResult>((resolve, reject) => {
    worker.on('message', (m: { kind: string; result: ClientResult }) => m.kind === 'done' && resolve(m.result));
    worker.once('error', reject);
  }));
  const cpu0 = { mock: cpuSeconds(mockPid), gateway: gatewayPid ? cpuSeconds(gatewayPid) : 0, client: process.cpuUsage() };
  for (const { worker } of workers) worker.postMessage({ start });
  let peakRss = 0;
  const sampler = gatewayPid ? setInterval(() => (peakRss = Math.max(peakRss, rssMb(gatewayPid))), 1000) : undefined;
  // The window closes while every session is still open (--heap retained sees what they hold).
  const closed = new Promise((r) => setTimeout(r, start + seconds * 1000 - epochNow())).then(() => window?.close());
  const done = await Promise.all(results);
  const client = process.cpuUsage(cpu0.client);
  await closed;
  const probeResult = (await probed)?.result;
  const phase: Phase = {
    rtt: [],
    sentAt: [],
    thread: [],
    replies: new Array<number>(SESSIONS).fill(0),
    failed: 0,
    cpu: { mock: cpuSeconds(mockPid) - cpu0.mock, gateway: gatewayPid ? cpuSeconds(gatewayPid) - cpu0.gateway : 0, client: (client.user + client.system) / 1e6 },
    clientLoopP99: Math.max(...done.map((d) => d.loopP99)),
    clientGc: done.map((d) => d.gc),
    window: [start, start + seconds * 1000 + 500],
    peakRss,
    ...(probeResult && { probe: probeResult }),
  };
  done.forEach((d, w) => {
    phase.failed += d.failed;
    for (let k = 0; k < d.rtt.length; k++) {
      phase.rtt.push(d.rtt[k]);
      phase.sentAt.push(d.sentAt[k]);
      phase.thread.push(w);
    }
    workers[w].sessions.forEach((i, local) => (phase.replies[i] = d.replies[local]));
  });
  if (sampler) clearInterval(sampler);
  await Promise.all(workers.map(({ worker }) => new Promise((resolve) => worker.once('exit', resolve))));
  await new Promise((r) => setTimeout(r, 500));
  return phase;
}

/** Sends the probe a message and waits for its answer of `kind`. */
function ask<T>(child: ChildProcess, msg: ProbeMessage, kind: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { kind: string } & T) => {
      if (m.kind !== kind) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.send(msg);
  });
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

/** The node flags the image runs the gateway with (its Dockerfile's ENTRYPOINT), as `npm start` does. */
function imageFlags(root: string): string[] {
  const entry = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
  if (!entry) throw new Error(`no ENTRYPOINT in ${root}/Dockerfile`);
  return (JSON.parse(entry) as string[]).filter((a) => a.startsWith('--'));
}

/** --heap: the top allocating functions of a phase's measured seconds, bytes per event round trip. */
function heapReport(head: HeapNode, events: number, what: string): string {
  const byFn = allocationsBySelf(head, (url) => url.replace(/^file:\/\/.*?\/(proxy|node_modules)\//, '$1/'));
  const total = byFn.reduce((s, [, b]) => s + b, 0);
  return [`${what} the measured seconds: ${(total / 2 ** 20).toFixed(1)} MB (sampled), ${(total / Math.max(1, events)).toFixed(0)} B per event round trip`, ...byFn.slice(0, 25).map(([k, b]) => `  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${(b / Math.max(1, events)).toFixed(0).padStart(6)} B  ${k}`)].join('\n');
}

/** Every thread of `pid` on `cpu` (--pin). */
function pin(pid: number, cpu: number): void {
  const r = spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`taskset -a -cp ${cpu} ${pid} failed`);
}

const probeDir = mkdtempSync(join(tmpdir(), 'skybridge-bench-rt-probe-'));
const mockPort = await freePort();
const mockProbe = join(probeDir, 'mock.json');
const mock = await start([join(ROOT, 'test/mock-provider/main.ts'), '--port', String(mockPort), '--max-recorded', '1'], mockPort, '/_mock/health', values.probe ? { probe: mockProbe } : {});
// The probe's sessions run in a process of their own (bench/lib/realtime-probe.ts), apart from the
// client threads' event loops and the mock's.
const probe = PROBE_SESSIONS > 0 ? fork(join(ROOT, 'bench/lib/realtime-probe.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : undefined;
if (probe) children.push(probe);
if (values.pin) {
  pin(mock.pid!, 1);
  pin(process.pid, 1);
  if (probe) pin(probe.pid!, 1);
}

interface Gateway {
  name: string;
  port: number;
  child: ChildProcess;
  idleRss: number;
  gcFile: string;
  probeFile: string;
  inspectPort?: number;
  /** --heap: what the gateway allocated per event in the first round, by function. */
  heap?: string;
  /** The untimed warm-up (--warmup): the first seconds of relaying after the gateway started. */
  warm?: Phase;
  phases: Phase[];
}

const roots: { name: string; root: string; flags: string[] }[] = [{ name: 'this checkout', root: ROOT, flags: [] }];
for (const spec of (values.ab ?? '').split(',').filter(Boolean)) {
  // REF@--flag@--flag: that build under extra node flags; `.` is this checkout.
  const [ref, ...flags] = spec.split('@');
  const other = ref === '.' ? { root: ROOT, commit: 'this checkout' } : checkout(ref);
  roots.push({ name: ref === '.' ? spec : `${spec} (${other.commit})`, root: other.root, flags });
}
const gateways: Gateway[] = [];
for (const { name, root, flags: extra } of roots) {
  const port = await freePort();
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-bench-rt-'));
  writeFileSync(
    join(appDir, 'config.json'),
    JSON.stringify({ providers: { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${mockPort}/openai` } } }, websocket: { max_connections_per_user: SESSIONS * 2 } }),
  );
  const gcFile = join(appDir, 'gc.log');
  if (values.heap !== undefined && values.heap !== 'allocated' && values.heap !== 'retained' && values.heap !== 'promoted') throw new Error('--heap is allocated, retained or promoted');
  const inspectPort = values.heap ? await freePort() : undefined;
  const flags = [...(values['image-flags'] ? imageFlags(root) : []), ...GATEWAY_FLAGS, ...extra, ...(values.gc ? ['--trace-gc'] : []), ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : [])];
  const probeFile = join(probeDir, `gateway-${gateways.length}.json`);
  const child = await start([join(root, 'proxy/src/main.ts'), '--app-dir', appDir, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn'], port, '/health', { cwd: root, flags, out: gcFile, ...(values.probe && { probe: probeFile }) });
  if (values.pin) pin(child.pid!, 0);
  gateways.push({ name, port, child, idleRss: rssMb(child.pid!), gcFile, probeFile, ...(inspectPort && { inspectPort }), phases: [] });
}

const DIRECT: ProbeLeg = { name: 'direct', url: `ws://127.0.0.1:${mockPort}/openai/v1/realtime?model=gpt-realtime`, headers: { authorization: 'Bearer sk-bench' } };
const relayed = (g: Gateway): ProbeLeg => ({ name: 'relayed', url: `ws://127.0.0.1:${g.port}/v1/realtime?model=openai/gpt-realtime`, headers: {} });

// One session held open on every build for the whole run (--hold, the default), an event each 30 s:
// a gateway serving without a break always has one. Without it each build idles between its phases,
// and its one trim after the first traffic (30 s with no request and no session open) ran between
// the warm-up and round 1, so round 1 grew the heap again (one run at load 15: 25 GCs, 2 of them
// mark-compacts, against 11 and none in rounds 2 and 3). --no-hold is the old way.
const held: WebSocket[] = [];
if (values.hold) {
  for (const g of gateways) {
    const ws = new WebSocket(relayed(g).url, { perMessageDeflate: false });
    ws.on('error', () => undefined);
    await new Promise((r) => ws.once('open', r));
    held.push(ws);
  }
  setInterval(() => {
    for (const ws of held) if (ws.readyState === 1) ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: 'held' } }));
  }, 30_000).unref();
}

// The warm-up: every build relays for WARMUP seconds before the first timed round (the JIT's
// tiers, the first connections' buffers, the young generation's first growth), so the rounds
// measure a gateway that has been serving, as a user meets one. It is reported apart, as the first
// seconds after start, and is in no median.
let warmDirect: Phase | undefined;
if (WARMUP > 0) {
  warmDirect = await run(DIRECT.url, DIRECT.headers, mock.pid!, undefined, undefined, WARMUP, [DIRECT]);
  for (const g of gateways) g.warm = await run(relayed(g).url, {}, mock.pid!, g.child.pid!, undefined, WARMUP, [DIRECT, relayed(g)]);
}

const directs: Phase[] = [];
for (let round = 0; round < ROUNDS; round++) {
  directs.push(await run(DIRECT.url, DIRECT.headers, mock.pid!, undefined, undefined, SECONDS, [DIRECT]));
  // Odd rounds take the gateways in the reverse order: the one right after the direct phase is not
  // always the same build (at load 20-30 the first relayed phase of a round was the slow one).
  for (const g of round % 2 ? [...gateways].reverse() : gateways) {
    // --heap: the allocations of the measured seconds only (the sessions are open by then).
    let stopSampling: (() => Promise<HeapNode>) | undefined;
    let sampled: HeapNode | undefined;
    const port = round === 0 ? g.inspectPort : undefined;
    const window = port ? { open: async () => void (stopSampling = await sampleAllocations(port, 16 * 1024, values.heap as SampleMode)), close: async () => void (sampled = await stopSampling?.()) } : undefined;
    const p = await run(relayed(g).url, {}, mock.pid!, g.child.pid!, window, SECONDS, [DIRECT, relayed(g)]);
    g.phases.push(p);
    if (sampled) g.heap = heapReport(sampled, p.rtt.length, HEAP_WHAT[values.heap as SampleMode]);
  }
}

for (const ws of held) ws.terminate();
const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null ? r(undefined) : c.once('exit', r)));
for (const g of gateways) g.child.kill('SIGTERM');
await Promise.all(gateways.map((g) => exited(g.child)));
// The probes write their records as their processes exit.
let probes: { mock: Pause[]; gateways: Map<Gateway, Pause[]>; gatewayMarks: Map<Gateway, Pause[]>; gatewayScavenges: Map<Gateway, Pause[]>; gatewayOther: Map<Gateway, Pause[]> } | undefined;
if (values.probe) {
  mock.kill('SIGTERM');
  await exited(mock);
  const read = (file: string): Pause[] => (JSON.parse(readFileSync(file, 'utf8')) as ProbeRecord).gc.map(([at, ms]) => [at, ms] as const);
  // Kind 4 (bench/lib/gc-probe.ts): the old generation's mark-compacts, the pauses a steady relay should not have.
  const marks = (file: string): Pause[] => (JSON.parse(readFileSync(file, 'utf8')) as ProbeRecord).gc.filter(([, , kind]) => kind & 4).map(([at, ms]) => [at, ms] as const);
  // Kinds 1 and 2: the young generation's collections (scavenges, minor mark-sweeps); the rest of
  // what is neither (8, 16: incremental marking's steps, weak callbacks) apart.
  const ofKind = (file: string, is: (kind: number) => boolean): Pause[] => (JSON.parse(readFileSync(file, 'utf8')) as ProbeRecord).gc.filter(([, , kind]) => is(kind)).map(([at, ms]) => [at, ms] as const);
  const perGateway = (is: (kind: number) => boolean) => new Map(gateways.map((g) => [g, ofKind(g.probeFile, is)]));
  probes = { mock: read(mockProbe), gateways: new Map(gateways.map((g) => [g, read(g.probeFile)])), gatewayMarks: new Map(gateways.map((g) => [g, marks(g.probeFile)])), gatewayScavenges: perGateway((k) => (k & 3) !== 0), gatewayOther: perGateway((k) => (k & 7) === 0) };
}

const expected = SECONDS;
const stalled = (p: Phase) => p.replies.filter((r) => r < expected - 2).length;
const f = (x: number, d = 2) => x.toFixed(d);
const perEvent = (cpu: number, p: Phase) => f((cpu / Math.max(1, p.rtt.length)) * 1e6, 0);
const lines = [`sessions ${SESSIONS}, ${SECONDS} s, one event a second each, ${ROUNDS} round(s)${values.pin ? ', gateway pinned to CPU 0, mock and clients to CPU 1' : ''}, ${SCHEDULE} schedule over ${WORKERS} client thread(s), gateway node flags ${values['image-flags'] ? imageFlags(ROOT).join(' ') || 'none' : 'none'} (+ ${GATEWAY_FLAGS.join(' ') || 'nothing'}), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  values.hold ? 'one session held open on every build for the whole run (an event each 30 s), as a gateway serving without a break has: its trim after the first traffic never runs' : 'no held session (--no-hold): a build idle 30 s between its phases runs its trim after the first traffic there',
  WARMUP > 0 ? `steady state: every build (and the mock) relayed ${WARMUP} s of the same load, untimed, before the first timed round; that warm-up's own figures are reported apart below ("first ${WARMUP} s after start"), in no median` : 'no warm-up (--warmup 0): round 1 is the first seconds after start'];
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
  const burst = (p: Phase) => {
    const b = bursts(p.sentAt);
    return `${b.largest} / ${f(b.share * 100, 1)} %`;
  };
  row('sends: most in one ms / share sent 4+ in one ms', burst(directs[round]), (_, p) => [burst(p), '']);
  if (PROBE_SESSIONS > 0) {
    const leg = (p: Phase, name: string) => p.probe?.legs.find((l) => l.name === name)?.rtt ?? [];
    const dp = summarize(leg(directs[round], 'direct'));
    row('probe: round trip p50 (ms; relayed leg, added over its direct leg in the same seconds)', f(dp.p50), (_, p) => {
      const r = summarize(leg(p, 'relayed'));
      return [f(r.p50), f(r.p50 - summarize(leg(p, 'direct')).p50)];
    });
    row('probe: round trip p99 (ms; same)', f(dp.p99), (_, p) => {
      const r = summarize(leg(p, 'relayed'));
      return [f(r.p99), f(r.p99 - summarize(leg(p, 'direct')).p99)];
    });
    row('probe: its direct leg in the same seconds, p50 / p99 (ms)', '', (_, p) => {
      const d = summarize(leg(p, 'direct'));
      return [`${f(d.p50)} / ${f(d.p99)}`, ''];
    });
    row('probe: events answered (direct leg / relayed leg), its loop delay p99 (ms)', `${leg(directs[round], 'direct').length}, ${f(directs[round].probe?.loopP99 ?? 0)}`, (_, p) => [`${leg(p, 'direct').length} / ${leg(p, 'relayed').length}, ${f(p.probe?.loopP99 ?? 0)}`, '']);
  }
  if (probes) {
    const pr = probes;
    const pauses = (list: readonly Pause[], p: Phase) => {
      const s = pausesIn(list, p.window[0], p.window[1]);
      return `${s.n}, ${f(s.sum, 1)} ms, ${f(s.max, 1)} ms`;
    };
    row('GC in the phase, count, sum, longest: mock', pauses(pr.mock, directs[round]), (_, p) => [pauses(pr.mock, p), '']);
    row('GC in the phase: gateway', '', (g, p) => [pauses(pr.gateways.get(g)!, p), '']);
    row('of which mark-compacts: gateway', '', (g, p) => [pauses(pr.gatewayMarks.get(g)!, p), '']);
    row('GC in the phase: client threads', pauses(directs[round].clientGc.flat(), directs[round]), (_, p) => [pauses(p.clientGc.flat(), p), '']);
    const causes = (p: Phase, g?: Gateway) => {
      const t = tailCauses(p, { gateway: () => (g ? pr.gateways.get(g)! : []), mock: () => pr.mock, client: (thread) => p.clientGc[thread] });
      return `${t.events}: ${Object.entries(t.share)
        .filter(([k]) => g || k !== 'gateway')
        .map(([k, v]) => `${k} ${f(v * 100, 0)} %`)
        .join(', ')}, none ${f(t.none * 100, 0)} %`;
    };
    row('slowest 1 %: events, share in flight over a GC of each', causes(directs[round]), (g, p) => [causes(p, g), '']);
    if (PROBE_SESSIONS > 0) {
      // The probe's slowest 1 % of each leg: the gateway's GC, the mock's, the probe's own, or none of them (the machine).
      const probeCauses = (p: Phase, name: string, g?: Gateway) => {
        const l = p.probe?.legs.find((x) => x.name === name);
        if (!l) return '';
        const gatewayKinds = g && { 'gateway scavenge': () => pr.gatewayScavenges.get(g)!, 'gateway mark-compact': () => pr.gatewayMarks.get(g)!, 'gateway other GC': () => pr.gatewayOther.get(g)! };
        const t = tailCauses({ sentAt: l.sentAt, rtt: l.rtt, thread: l.rtt.map(() => 0) }, { ...gatewayKinds, mock: () => pr.mock, probe: () => p.probe!.gc });
        return `${t.events}: ${Object.entries(t.share).map(([k, v]) => `${k} ${f(v * 100, 0)} %`).join(', ')}, none ${f(t.none * 100, 0)} %`;
      };
      row('probe slowest 1 % of the relayed leg (direct phase: of the direct leg): share over a GC of each', probeCauses(directs[round], 'direct'), (g, p) => [probeCauses(p, 'relayed', g), '']);
      row('probe slowest 1 % of its direct leg in the same seconds', '', (_, p) => [probeCauses(p, 'direct'), '']);
    }
  }
}
if (warmDirect) {
  const d = summarize(warmDirect.rtt);
  lines.push('', `first ${WARMUP} s after start (the warm-up, not in the medians): added p50 / p99 (ms), events answered; direct p99 ${f(d.p99)} ms`);
  for (const g of gateways) {
    const s = summarize(g.warm!.rtt);
    const gc = probes ? pausesIn(probes.gateways.get(g)!, g.warm!.window[0], g.warm!.window[1]) : undefined;
    const legP99 = (name: string) => summarize(g.warm!.probe?.legs.find((l) => l.name === name)?.rtt ?? []).p99;
    lines.push(`- ${g.name}: ${f(s.p50 - d.p50)} / ${f(s.p99 - d.p99)}, ${s.n}${PROBE_SESSIONS > 0 ? `; probe added p99 ${f(legP99('relayed') - legP99('direct'))}` : ''}${gc ? `; gateway GC ${gc.n}, ${f(gc.sum, 1)} ms, longest ${f(gc.max, 1)} ms` : ''}`);
  }
}
if (ROUNDS > 1) {
  lines.push('', 'medians over rounds: added p50 / p99 (ms)');
  for (const g of gateways) {
    const added = g.phases.map((p, r) => [summarize(p.rtt).p50 - summarize(directs[r].rtt).p50, summarize(p.rtt).p99 - summarize(directs[r].rtt).p99]);
    lines.push(`- ${g.name}: ${f(median(added.map((a) => a[0])))} / ${f(median(added.map((a) => a[1])))}; per round p99 ${added.map((a) => f(a[1])).join(', ')}`);
  }
  if (PROBE_SESSIONS > 0) {
    lines.push('', `the probe (its own process, ${PROBE_SESSIONS} sessions per leg, ${PROBE_RATE} events a second per leg): added p99 = relayed leg p99 less direct leg p99 in the same seconds (ms), and the direct leg's p99 (what is not the gateway)`);
    for (const g of gateways) {
      const legP99 = (p: Phase, name: string) => summarize(p.probe?.legs.find((l) => l.name === name)?.rtt ?? []).p99;
      const added = g.phases.map((p) => legP99(p, 'relayed') - legP99(p, 'direct'));
      lines.push(`- ${g.name}: median ${f(median(added))}; per round ${added.map((a) => f(a)).join(', ')}; direct leg p99 per round ${g.phases.map((p) => f(legP99(p, 'direct'))).join(', ')}`);
    }
  }
}
if (values.gc) {
  lines.push('', 'gateway GC pauses over the whole run (--trace-gc): count (scavenges / mark-compacts), sum, longest');
  for (const g of gateways) {
    const p = gcPauses(g.gcFile);
    lines.push(`- ${g.name}: ${p.n} (${p.scavenges} / ${p.marks}), ${f(p.sum, 1)} ms, ${f(p.max)} ms`);
  }
}
for (const g of gateways) if (g.heap) lines.push('', `${g.name}: allocations in the first relayed phase`, g.heap);
process.stdout.write(lines.join('\n') + '\n');
for (const c of children) c.kill('SIGTERM');
process.exit(0);
