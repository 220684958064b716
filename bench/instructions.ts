// Instructions per request, counted: each build runs under callgrind (instrumentation off while it
// warms up), then serves windows of requests between `callgrind_control --zero` and `--dump`. The
// counts do not move with the machine's load, so two builds compare on a busy machine where CPU
// time cannot (the mock runs outside valgrind, with no latency). What the counts leave out: the
// kernel's time (syscalls, loopback TCP, wakeups) and the cost of cache misses.
//
//   node bench/instructions.ts                                   # floor against this checkout's dist/
//   node bench/instructions.ts --builds base,current             # a build kept with `node bench/ab.ts --save base`
//   node bench/instructions.ts --builds current,current@--max-semi-space-size=16 --concurrency 16
//   node bench/instructions.ts --builds floor,git-cb05528,current --windows 3 --requests 500
//
// Per window and build: the main thread's instructions per request with and without V8's
// collector (`Heap::CollectGarbage`, inclusive: a window with a collection jumps), and all threads'.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, type Target } from './lib/load.ts';
import { PEERS, freePort, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { buildExtras, savedBuildRoot } from './lib/builds.ts';
import { median } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    builds: { type: 'string', default: 'floor,current' },
    /** Requests each build serves first, uninstrumented (a fresh gateway's code settles after ~15,000-30,000). */
    warm: { type: 'string', default: '20000' },
    windows: { type: 'string', default: '5' },
    requests: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '1' },
    stream: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});
if (values['no-build']) skipBuild();

const builds = values.builds.split(',').map((s) => s.trim()).filter(Boolean);
const concurrency = Number(values.concurrency);
const requests = Number(values.requests);
if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('valgrind is not installed (apt-get install valgrind)');

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const dir = join(PEERS, 'instructions', stamp);
mkdirSync(dir, { recursive: true });

/** The `totals:` of each thread's file of one dump: main thread (file -01) and the sum of all. */
function readDump(prefix: string, dump: number): { main: number; all: number; gc: number } {
  const files = readdirSync(dir).filter((f) => f.startsWith(`${prefix}.${dump}-`));
  let main = 0;
  let all = 0;
  let gc = 0;
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const m = /^(?:totals|summary): (\d+)/m.exec(text);
    const n = m ? Number(m[1]) : 0;
    all += n;
    if (f.endsWith('-01')) {
      main = n;
      gc = collectorInclusive(text);
    }
  }
  return { main, all, gc };
}

/**
 * Instructions under `Heap::CollectGarbage` in a callgrind file: the inclusive cost of its calls
 * (`calls=` lines followed by their cost line), summed over its callers.
 */
function collectorInclusive(text: string): number {
  const names = new Map<string, string>();
  let total = 0;
  let pending = false;
  for (const line of text.split('\n')) {
    const cfn = /^cfn=\((\d+)\)(?: (.*))?$/.exec(line);
    if (cfn) {
      if (cfn[2] !== undefined) names.set(cfn[1], cfn[2]);
      pending = /Heap::CollectGarbage\(/.test(names.get(cfn[1]) ?? '');
      continue;
    }
    const fn = /^fn=\((\d+)\)(?: (.*))?$/.exec(line);
    if (fn && fn[2] !== undefined) names.set(fn[1], fn[2]);
    if (line.startsWith('calls=')) continue;
    if (pending && /^[+-]?\d/.test(line)) {
      total += Number(line.split(' ')[1] ?? 0);
      pending = false;
    }
  }
  return total;
}

const mock = await startMock({ latencyMs: 0, chunkDelayMs: 2 }, await freePort(), dir);
const upstream = `http://127.0.0.1:${mock.port}/openai`;
const procs = new Map<string, Proc>();
const targets = new Map<string, Target>();
try {
  for (const b of builds) {
    const build = b.split('@')[0];
    const { flags, env } = buildExtras(b);
    const root = build === 'current' || build === 'floor' ? undefined : savedBuildRoot(build);
    const out = join(dir, `cg-${procs.size}`);
    const wrap = ['valgrind', '--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`];
    const port = await freePort();
    const proc = build === 'floor'
      ? await startFloor(upstream, port, dir, flags, wrap)
      // The trims off (as the bench's c=1 counts were taken): a pause for callgrind_control between
      // windows would let one run, and its collection is not a request's cost.
      : await startGateway(upstream, port, dir, { workers: 1, nodeFlags: flags, env: { SKYBRIDGE_MEMORY_TRIM: '86400', ...env }, wrap, name: 'gateway', ...(root && { root }) });
    procs.set(b, proc);
    targets.set(b, { name: build === 'floor' ? 'floor' : 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { authorization: 'Bearer sk-bench' }, model: 'openai/gpt-4o' });
    process.stderr.write(`${b}: started under callgrind (pid ${proc.pid})\n`);
  }
  // All builds at once, so none sits idle while another is measured: an idle process's V8 runs its
  // memory reducer, whose collections throw compiled code away, and the next window pays to compile
  // it again (counts that rose window by window with the machine's load, when builds took turns).
  const rows = new Map<string, { main: number[]; noGc: number[]; all: number[] }>(builds.map((b) => [b, { main: [], noGc: [], all: [] }]));
  await Promise.all(builds.map(async (b, i) => {
    const t = targets.get(b)!;
    const pid = String(procs.get(b)!.pid);
    const t0 = performance.now();
    // Warm-up uninstrumented, then one window thrown away (code and caches as the windows find them).
    await closedLoop(t, Math.max(concurrency, 16), Number(values.warm), { stream: values.stream, until: performance.now() + 30 * 60_000 });
    execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
    await closedLoop(t, concurrency, requests, { stream: values.stream });
    process.stderr.write(`${b}: warm (${values.warm} requests in ${Math.round((performance.now() - t0) / 1000)} s)\n`);
    for (let w = 0; w < Number(values.windows); w++) {
      execFileSync('callgrind_control', ['--zero', pid], { stdio: 'ignore' });
      const res = await closedLoop(t, concurrency, requests, { stream: values.stream });
      execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
      const d = readDump(`cg-${i}.${pid}`, w + 1);
      const ok = Math.max(1, res.ok);
      const r = rows.get(b)!;
      r.main.push(d.main / ok);
      r.noGc.push((d.main - d.gc) / ok);
      r.all.push(d.all / ok);
      process.stderr.write(`${b}: window ${w + 1} ${(r.noGc.at(-1)! / 1000).toFixed(1)}k${res.errors ? ` (${res.errors} errors)` : ''} (load ${loadavg()[0].toFixed(1)})\n`);
    }
  }));
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  const ref = builds[0];
  const lines = [
    `${values.stream ? 'streamed' : 'JSON'} chat requests at concurrency ${concurrency}, ${values.windows} windows of ${requests} after ${values.warm} uninstrumented; instructions per request (callgrind)`,
    '',
    `| build | main thread, collector out (median) | vs ${ref} | per window | main thread, collector in | all threads |`,
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const b of builds) {
    const r = rows.get(b)!;
    // Windows ran at the same time in every build: the i-th of each compare.
    const ratios = r.noGc.map((x, i) => x / rows.get(ref)!.noGc[i]);
    lines.push(`| ${b} | ${k(median(r.noGc))} | ${median(ratios).toFixed(3)} | ${r.noGc.map(k).join(', ')} | ${k(median(r.main))} | ${k(median(r.all))} |`);
  }
  process.stdout.write(lines.join('\n') + '\n');
} finally {
  for (const p of procs.values()) await stop(p, 30_000);
  await stop(mock);
}
