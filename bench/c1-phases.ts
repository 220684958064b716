// Where one request at c=1 spends its time in the floor and in the gateway, in figures a loaded
// machine moves little or not at all: process CPU time per phase (bench/lib/phase-probe.ts,
// preloaded; not wall time, though contention still moves it ±30 % between runs) and, with strace,
// event-loop turns (epoll_wait calls) and syscalls of the main thread per request. Wall
// clock at c=1 is the sum of CPU on the path and waits; a turn or syscall the gateway adds is a
// wait, CPU it adds before the answer leaves is latency, CPU after it overlaps the client's turn.
//
//   node bench/c1-phases.ts                         # JSON answers, 10 rounds of 200 per target
//   node bench/c1-phases.ts --stream --rounds 5     # streaming: the phases to the first event
//   node bench/c1-phases.ts --no-build --strace 0   # dist/ as it is; no syscall counts
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sequential, type Target } from './lib/load.ts';
import { BENCH, freePort, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { median } from './lib/stats.ts';
import type { PhaseSample } from './lib/phase-probe.ts';

const { values } = parseArgs({
  options: {
    stream: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '10' },
    requests: { type: 'string', default: '200' },
    /** Requests per target traced with strace (0: none). */
    strace: { type: 'string', default: '200' },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});
const stream = values.stream;
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const traced = Number(values.strace);
if (values['no-build']) skipBuild();

const dir = mkdtempSync(join(tmpdir(), 'c1-phases-'));
const probe = ['--import', join(BENCH, 'lib/phase-probe.ts')];
// The proxies inherit this environment: the probe writes its readings there.
process.env.PHASE_PROBE_DIR = dir;
const procs: Proc[] = [];
const log = (s: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${s}\n`);

/** The phases, as differences of the probe's CPU readings (µs); `next`: the request after this one. */
const PHASES: [string, (s: PhaseSample, next: PhaseSample | undefined) => number | undefined][] = [
  ['request read → upstream head sent', (s) => diff(s.read, s.sent)],
  ['upstream sent → its head read', (s) => diff(s.sent, s.head)],
  ...(stream ? [] : ([['upstream head → its body read', (s: PhaseSample) => diff(s.head, s.body)]] as typeof PHASES)),
  [stream ? 'upstream head → first event written' : 'upstream body → answer written', (s) => diff(stream ? s.head : s.body, s.answerStart)],
  ['the write itself', (s) => diff(s.answerStart, s.answerEnd)],
  ...(stream ? [] : ([['answer written → check phase (after-answer work)', (s: PhaseSample) => diff(s.answerEnd, s.check)]] as typeof PHASES)),
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
  const mock = await startMock({ latencyMs: 0, chunkDelayMs: 2 }, mockPort, dir);
  procs.push(mock);
  const upstream = `http://127.0.0.1:${mockPort}/openai`;
  const floorPort = await freePort();
  const floor = await startFloor(upstream, floorPort, dir, probe);
  procs.push(floor);
  const gatewayPort = await freePort();
  const gateway = await startGateway(upstream, gatewayPort, dir, { workers: 1, nodeFlags: probe });
  procs.push(gateway);
  const json = { 'content-type': 'application/json' };
  const targets: [Proc, Target][] = [
    [floor, { name: 'floor', origin: `http://127.0.0.1:${floorPort}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' }],
    [gateway, { name: 'gateway', origin: `http://127.0.0.1:${gatewayPort}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' }],
  ];
  const all = new Map<string, PhaseSample[][]>(targets.map(([, t]) => [t.name, []]));
  await sequential(targets.map(([, t]) => t), { warmup: 300, requests: 0, blocks: 1, stream, deadline: performance.now() + 120_000 });
  for (let r = 0; r < rounds; r++) {
    // Blocks alternate, so drift in the machine's load reaches both alike; only the probes' readings count.
    for (const [p, t] of targets) {
      process.kill(p.pid, 'SIGUSR2');
      await sequential([t], { warmup: 0, requests, blocks: 1, stream, deadline: performance.now() + 120_000 });
      process.kill(p.pid, 'SIGUSR2');
      await new Promise((res) => setTimeout(res, 200));
      all.get(t.name)!.push(JSON.parse(readFileSync(join(dir, `${p.pid}.json`), 'utf8')) as PhaseSample[]);
    }
    log(`round ${r + 1}/${rounds}, load ${loadavg()[0].toFixed(1)}`);
  }
  const counts = new Map<string, Syscalls | undefined>();
  for (const [p, t] of targets) counts.set(t.name, await syscallsPerRequest(p, t));

  const figure = (name: string, phase: (typeof PHASES)[number][1]) =>
    median(all.get(name)!.map((round) => median(round.flatMap((s, i) => (i + 1 < round.length ? [phase(s, round[i + 1])] : [])).filter((v): v is number => v !== undefined))));
  const rows = PHASES.map(([label, phase]) => {
    const f = figure('floor', phase);
    const g = figure('gateway', phase);
    return `| ${label} | ${f.toFixed(0)} | ${g.toFixed(0)} | ${(g - f).toFixed(0)} |`;
  });
  const c = (name: string, f: (s: Syscalls) => number) => {
    const s = counts.get(name);
    return s ? f(s).toFixed(2) : '–';
  };
  const names = [...new Set([...counts.values()].flatMap((s) => (s ? [...s.byName.keys()] : [])))].sort();
  const total = (s: Syscalls) => [...s.byName.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    [
      `c=1 ${stream ? 'streaming (to the first event)' : 'JSON'}: process CPU µs per phase, median of ${rounds} rounds' medians (${requests} requests per target per round; load ${loadavg()[0].toFixed(1)})`,
      '',
      '| Phase | floor | gateway | gateway − floor |',
      '|---|---:|---:|---:|',
      ...rows,
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
