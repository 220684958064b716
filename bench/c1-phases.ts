// Where one request at c=1 spends its time in the floor and in the gateway: process CPU time and
// wall time per phase (bench/lib/phase-probe.ts, preloaded into both proxies and the mock; CPU
// moves ±30 % between runs under contention, wall far more) and, with strace, event-loop turns
// (epoll_wait calls) and syscalls of the main thread per request. Wall clock at c=1 is the sum of
// CPU on the path and waits; a turn or syscall the gateway adds is a wait, CPU it adds before the
// answer leaves is latency, CPU after it overlaps the client's turn. Also the other legs: the
// mock's own time per request as each proxy calls it, the bytes each leg carries, the client's
// wall and CPU per request, and collections (and with --trace-opt/--trace-deopt, compiles) in the
// measured blocks.
//
//   node bench/c1-phases.ts                         # JSON answers, 10 rounds of 200 per target
//   node bench/c1-phases.ts --stream --rounds 5     # streaming: the phases to the first event
//   node bench/c1-phases.ts --no-build --strace 0   # dist/ as it is; no syscall counts
//   node bench/c1-phases.ts --warmup 5000 --proxy-flags="--trace-opt --trace-deopt"   # longer warm-up; count (de)opts
//   node bench/c1-phases.ts --idle 3000             # each block after 3 s idle, as in the headline run
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sequential, type Target } from './lib/load.ts';
import { BENCH, freePort, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { median } from './lib/stats.ts';
import type { PhaseDump, PhasePoints, PhaseSample } from './lib/phase-probe.ts';

const { values } = parseArgs({
  options: {
    stream: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '10' },
    requests: { type: 'string', default: '200' },
    /** Requests per target traced with strace (0: none). */
    strace: { type: 'string', default: '200' },
    /** Requests per target before the measured rounds (bench/run.ts's c1 phase: 300). */
    warmup: { type: 'string', default: '300' },
    /** Idle ms before each block: the headline run's other targets' blocks leave each proxy idle for seconds. */
    idle: { type: 'string', default: '0' },
    /** Extra node flags for both proxies; with --trace-deopt (--trace-opt), the deoptimizations (optimized compiles) they log in the measured rounds count. */
    'proxy-flags': { type: 'string', default: '' },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});
const stream = values.stream;
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const traced = Number(values.strace);
const warmup = Number(values.warmup);
const idleMs = Number(values.idle);
const extraFlags = values['proxy-flags'].split(/\s+/).filter(Boolean);
const traceDeopt = extraFlags.includes('--trace-deopt');
if (values['no-build']) skipBuild();

const dir = mkdtempSync(join(tmpdir(), 'c1-phases-'));
const probe = ['--import', join(BENCH, 'lib/phase-probe.ts')];
const proxyFlags = [...probe, ...extraFlags];
// The proxies inherit this environment: the probe writes its readings there.
process.env.PHASE_PROBE_DIR = dir;
const procs: Proc[] = [];
const log = (s: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** The phases, as differences of the probe's readings (µs); `next`: the request after this one. */
const PHASES: [string, (s: PhasePoints, next: PhasePoints | undefined) => number | undefined][] = [
  ['request read → upstream head sent', (s) => diff(s.read, s.sent)],
  ['upstream sent → its head read', (s) => diff(s.sent, s.head)],
  ...(stream ? [] : ([['upstream head → its body read', (s: PhasePoints) => diff(s.head, s.body)]] as typeof PHASES)),
  [stream ? 'upstream head → first event written' : 'upstream body → answer written', (s) => diff(stream ? s.head : s.body, s.answerStart)],
  ['the write itself', (s) => diff(s.answerStart, s.answerEnd)],
  ...(stream ? [] : ([['answer written → check phase (after-answer work)', (s: PhasePoints) => diff(s.answerEnd, s.check)]] as typeof PHASES)),
  ['request read → first bytes written', (s) => diff(s.read, s.answerStart)],
  ['whole request (read to next read)', (s, next) => diff(s.read, next?.read)],
];

function diff(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : b - a;
}

/** Per request of the traced window, from one request's read to the next (the probe's getrusage left out). */
interface Syscalls {
  /** epoll_wait calls: the event loop's turns. */
  turns: number;
  /** Of those, the ones a timer ended (no socket ready): nothing the request waited for. */
  timerTurns: number;
  /** Syscalls of the main thread, by name. */
  byName: Map<string, number>;
}

async function syscallsPerRequest(p: Proc, t: Target): Promise<Syscalls | undefined> {
  if (traced <= 0 || spawnSync('strace', ['-V']).status !== 0) return undefined;
  const out = join(dir, `strace-${p.pid}.txt`);
  const tracer = spawn('strace', ['-q', '-p', String(p.pid), '-o', out], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1000));
  await sequential([t], { warmup: 0, requests: traced, blocks: 1, stream, deadline: performance.now() + 120_000 });
  tracer.kill('SIGINT');
  await new Promise((r) => tracer.once('exit', r));
  const lines = readFileSync(out, 'utf8').split('\n');
  const starts = lines.flatMap((l, i) => (/^read\(\d+, "POST /.test(l) ? [i] : []));
  if (starts.length < 3) return undefined;
  const n = starts.length - 2;
  const byName = new Map<string, number>();
  let turns = 0;
  let timerTurns = 0;
  for (const l of lines.slice(starts[1], starts.at(-1))) {
    const name = /^(\w+)\(/.exec(l)?.[1];
    if (!name || name === 'getrusage') continue;
    byName.set(name, (byName.get(name) ?? 0) + 1 / n);
    if (!name.startsWith('epoll_') || name === 'epoll_ctl') continue;
    turns++;
    // `epoll_pwait(fd, [], max, timeout, ...) = 0` with a timeout: woken by a timer, not a socket.
    if (/\(\d+, \[\], \d+, [1-9]/.test(l)) timerTurns++;
  }
  return { turns: turns / n, timerTurns: timerTurns / n, byName };
}

try {
  const mockPort = await freePort();
  const mock = await startMock({ latencyMs: 0, chunkDelayMs: 2 }, mockPort, dir, probe);
  procs.push(mock);
  const upstream = `http://127.0.0.1:${mockPort}/openai`;
  const floorPort = await freePort();
  const floor = await startFloor(upstream, floorPort, dir, proxyFlags);
  procs.push(floor);
  const gatewayPort = await freePort();
  const gateway = await startGateway(upstream, gatewayPort, dir, { workers: 1, nodeFlags: proxyFlags });
  procs.push(gateway);
  const json = { 'content-type': 'application/json' };
  const targets: [Proc, Target][] = [
    [floor, { name: 'floor', origin: `http://127.0.0.1:${floorPort}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' }],
    [gateway, { name: 'gateway', origin: `http://127.0.0.1:${gatewayPort}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' }],
  ];
  const all = new Map<string, PhaseSample[][]>(targets.map(([, t]) => [t.name, []]));
  /** The mock's samples while it served each proxy's block. */
  const atMock = new Map<string, PhaseSample[][]>(targets.map(([, t]) => [t.name, []]));
  const client = new Map<string, { wall: number[]; cpuPerRequest: number[] }>(targets.map(([, t]) => [t.name, { wall: [], cpuPerRequest: [] }]));
  const gc = new Map<string, { kinds: PhaseDump['gc']; n: number }>(targets.map(([, t]) => [t.name, { kinds: {}, n: 0 }]));
  const deopts = new Map<string, number>(targets.map(([, t]) => [t.name, 0]));
  const traceOpt = extraFlags.includes('--trace-opt');
  const logLines = (p: Proc, what: string, on: boolean) => (on ? readFileSync(p.logFile, 'utf8').split('\n').filter((l) => l.includes(what)).length : 0);
  const deoptLines = (p: Proc) => logLines(p, 'bailout (kind:', traceDeopt);
  const optLines = (p: Proc) => logLines(p, 'completed compiling', traceOpt);
  const opts = new Map<string, number>(targets.map(([, t]) => [t.name, 0]));
  const dump = async (pid: number): Promise<PhaseDump> => {
    await new Promise((res) => setTimeout(res, 200));
    return JSON.parse(readFileSync(join(dir, `${pid}.json`), 'utf8')) as PhaseDump;
  };
  log(`warm-up: ${warmup} requests per target`);
  await sequential(targets.map(([, t]) => t), { warmup, requests: 0, blocks: 1, stream, deadline: performance.now() + 600_000 });
  for (let r = 0; r < rounds; r++) {
    // Blocks alternate, so drift in the machine's load reaches both alike; only the probes' readings count.
    for (const [p, t] of targets) {
      process.kill(p.pid, 'SIGUSR2');
      process.kill(mock.pid, 'SIGUSR2');
      // In the window, so a collection the idle gap sets off (a memory trim) counts.
      if (idleMs > 0) await new Promise((res) => setTimeout(res, idleMs));
      const deopt0 = deoptLines(p);
      const opt0 = optLines(p);
      const c0 = process.cpuUsage();
      const res = (await sequential([t], { warmup: 0, requests, blocks: 1, stream, deadline: performance.now() + 120_000 })).get(t.name)!;
      const c = process.cpuUsage(c0);
      process.kill(p.pid, 'SIGUSR2');
      process.kill(mock.pid, 'SIGUSR2');
      const d = await dump(p.pid);
      // The first sample of a window may be the previous block's last request (at the mock: the other proxy's).
      all.get(t.name)!.push(d.samples.slice(1));
      atMock.get(t.name)!.push((await dump(mock.pid)).samples.slice(1));
      const g = gc.get(t.name)!;
      for (const [kind, k] of Object.entries(d.gc)) {
        const sum = (g.kinds[kind] ??= { n: 0, ms: 0 });
        sum.n += k.n;
        sum.ms += k.ms;
      }
      g.n += res.samples.length;
      deopts.set(t.name, deopts.get(t.name)! + deoptLines(p) - deopt0);
      opts.set(t.name, opts.get(t.name)! + optLines(p) - opt0);
      const cl = client.get(t.name)!;
      // A stream's wall to its first event, as the proxy's phases end there.
      cl.wall.push(median(stream ? res.ttft : res.samples) * 1000);
      cl.cpuPerRequest.push((c.user + c.system) / Math.max(1, res.samples.length));
    }
    log(`round ${r + 1}/${rounds}, load ${loadavg()[0].toFixed(1)}`);
  }
  const counts = new Map<string, Syscalls | undefined>();
  for (const [p, t] of targets) counts.set(t.name, await syscallsPerRequest(p, t));

  /** Median of the rounds' medians of a per-request figure. */
  const perRequest = (rounds: PhaseSample[][], f: (s: PhaseSample, next: PhaseSample | undefined) => number | undefined) =>
    median(rounds.map((round) => median(round.flatMap((s, i) => (i + 1 < round.length ? [f(s, round[i + 1])] : [])).filter((v): v is number => v !== undefined))));
  const figure = (name: string, phase: (typeof PHASES)[number][1], clock: 'cpu' | 'wall') =>
    perRequest(all.get(name)!, (s, next) => (clock === 'cpu' ? phase(s, next) : phase(s.wall, next?.wall)));
  const rows = PHASES.map(([label, phase]) => {
    const f = figure('floor', phase, 'cpu');
    const g = figure('gateway', phase, 'cpu');
    const fw = figure('floor', phase, 'wall');
    const gw = figure('gateway', phase, 'wall');
    return `| ${label} | ${f.toFixed(0)} | ${g.toFixed(0)} | ${(g - f).toFixed(0)} | ${fw.toFixed(0)} | ${gw.toFixed(0)} | ${(gw - fw).toFixed(0)} |`;
  });
  const both = (label: string, f: (name: string) => number, digits = 0) => {
    const a = f('floor');
    const b = f('gateway');
    return `| ${label} | ${a.toFixed(digits)} | ${b.toFixed(digits)} | ${(b - a).toFixed(digits)} |`;
  };
  const mockFigure = (name: string, f: (s: PhaseSample, next: PhaseSample | undefined) => number | undefined) => perRequest(atMock.get(name)!, f);
  const proxyWall = (n: string) => figure(n, (s) => diff(s.read, s.answerStart), 'wall');
  const legs = [
    both(`client: wall per request${stream ? ' to the first event' : ''} (median of the blocks' medians)`, (n) => median(client.get(n)!.wall)),
    both('client: CPU per request', (n) => median(client.get(n)!.cpuPerRequest)),
    both('proxy: wall from the request read to its answer\'s first bytes', proxyWall),
    // Within a block: a cold start after an idle gap shows as its first requests costing more than its last.
    both('proxy: CPU per request (read to next read), a block\'s first 50', (n) => perRequest(all.get(n)!.map((r) => r.slice(0, 51)), (s, next) => diff(s.read, next?.read))),
    both('proxy: CPU per request (read to next read), a block\'s last 50', (n) => perRequest(all.get(n)!.map((r) => r.slice(-51)), (s, next) => diff(s.read, next?.read))),
    both('client wall − that (client legs, scheduling)', (n) => median(client.get(n)!.wall) - proxyWall(n)),
    both('mock: wall from the request read to the answer written', (n) => mockFigure(n, (s) => diff(s.wall.read, s.wall.answerStart))),
    both('mock: CPU from the request read to the answer written', (n) => mockFigure(n, (s) => diff(s.read, s.answerStart))),
    both('mock: CPU per request (read to next read)', (n) => mockFigure(n, (s, next) => diff(s.read, next?.read))),
    both('bytes client → proxy (header names and values + body)', (n) => perRequest(all.get(n)!, (s) => s.requestHeadBytes + s.requestBodyBytes)),
    both('bytes proxy → mock (header names and values + body)', (n) => mockFigure(n, (s) => s.requestHeadBytes + s.requestBodyBytes)),
    both('bytes mock → proxy (the answer\'s first write)', (n) => mockFigure(n, (s) => s.answerBytes)),
    both('bytes proxy → client (the answer\'s first write)', (n) => perRequest(all.get(n)!, (s) => s.answerBytes)),
    // Only the kinds that ran in either.
    ...[...new Set([...gc.values()].flatMap((g) => Object.keys(g.kinds)))].sort().flatMap((kind) => {
      const k = (n: string) => gc.get(n)!.kinds[kind] ?? { n: 0, ms: 0 };
      const per = (n: string) => Math.max(1, gc.get(n)!.n);
      return [
        both(`proxy ${kind} collections per 1,000 requests`, (n) => (k(n).n * 1000) / per(n), 1),
        both(`proxy ${kind} collections' pause per request`, (n) => (k(n).ms * 1000) / per(n), 1),
      ];
    }),
    ...(traceDeopt ? [both('proxy deoptimizations in the measured blocks', (n) => deopts.get(n)!)] : []),
    ...(traceOpt ? [both('proxy optimized compiles (Maglev, TurboFan) in the measured blocks', (n) => opts.get(n)!)] : []),
  ];
  const c = (name: string, f: (s: Syscalls) => number) => {
    const s = counts.get(name);
    return s ? f(s).toFixed(2) : '–';
  };
  const names = [...new Set([...counts.values()].flatMap((s) => (s ? [...s.byName.keys()] : [])))].sort();
  const total = (s: Syscalls) => [...s.byName.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    [
      `c=1 ${stream ? 'streaming (to the first event)' : 'JSON'}: process CPU and wall µs per phase, median of ${rounds} rounds' medians (${requests} requests per target per round after ${warmup} warm-up${idleMs > 0 ? `, each after ${idleMs} ms idle` : ''}${extraFlags.length ? `; proxies with ${extraFlags.join(' ')}` : ''}; load ${loadavg()[0].toFixed(1)})`,
      '',
      '| Phase | CPU floor | CPU gateway | CPU + | wall floor | wall gateway | wall + |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      '| Legs (µs unless named) | floor | gateway | gateway − floor |',
      '|---|---:|---:|---:|',
      ...legs,
      '',
      '| Turns and syscalls | floor | gateway | |',
      '|---|---:|---:|---:|',
      `| event-loop turns (epoll_wait) per request | ${c('floor', (s) => s.turns)} | ${c('gateway', (s) => s.turns)} | |`,
      `| of which a timer ended (no socket ready) | ${c('floor', (s) => s.timerTurns)} | ${c('gateway', (s) => s.timerTurns)} | |`,
      `| syscalls of the main thread per request (the probe's own left out) | ${c('floor', total)} | ${c('gateway', total)} | |`,
      ...names.map((n) => `| · ${n} | ${c('floor', (s) => s.byName.get(n) ?? 0)} | ${c('gateway', (s) => s.byName.get(n) ?? 0)} | |`),
      '',
    ].join('\n'),
  );
} finally {
  for (const p of procs.reverse()) await stop(p);
  rmSync(dir, { recursive: true, force: true });
}
