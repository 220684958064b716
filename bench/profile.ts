// Where does the gateway's time go? Runs the mock (20 ms) and the gateway (or the floor) under
// node --cpu-prof, drives fixed-rate load, stops it, and summarises the .cpuprofile: top functions
// by self time, time per source file / library, and inclusive time of the gateway's own functions.
// --heap adds an allocation profile of the measured load (bytes allocated per function, freed
// objects included); --gc adds V8's --trace-gc and summarises the pauses of the measured load.
//
//   node bench/profile.ts [--target gateway|floor] [--config plain|logging|governed-redis|…] [--rate 1000] [--seconds 10] [--warmup-seconds 20]
//                         [--stream] [--heap [--sample-bytes 16384] [--heap-mode allocated|retained|promoted]] [--gc] [--top 25]
//   node bench/profile.ts --held 4096 [--heap]   # the held-streams phase instead (as bench/ab.ts --streams: 15 events 250 ms apart), allocations per stream,
//                                                # and the phase's time step by step: the streams' starts against the relay of those open
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { fixedRate, heldStreams, type Target } from './lib/load.ts';
import { BENCH, ROOT, buildGateway, freePort, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { CONFIGS, servicesFor, type ConfigName } from './lib/configs.ts';
import { allocationsBySelf, sampleAllocations, type HeapNode, type SampleMode } from './lib/heap-sampling.ts';
import { heldSplitTable } from './lib/held-split.ts';

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'gateway' },
    config: { type: 'string', default: 'plain' },
    heap: { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    /** Unprofiled load first: a fresh gateway's code settles (TurboFan) after ~15,000 requests. */
    'warmup-seconds': { type: 'string', default: '20' },
    stream: { type: 'boolean', default: false },
    /** Profile N held streams (opened over 1 s) instead of fixed-rate load. */
    held: { type: 'string' },
    /** --heap: the sampling interval in bytes (V8's default 16 KB; smaller resolves small allocations, at more cost). */
    'sample-bytes': { type: 'string', default: '16384' },
    /** --heap: what the profile keeps (lib/heap-sampling.ts): allocated, retained or promoted. */
    'heap-mode': { type: 'string', default: 'allocated' },
    top: { type: 'string', default: '25' },
    file: { type: 'string' },
    'skip-ms': { type: 'string', default: '0' },
    'until-ms': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});

function where(url: string): string {
  if (!url) return '';
  const path = url.replace(/^file:\/\//, '');
  if (path.includes('/node_modules/')) return 'node_modules/' + path.split('/node_modules/').pop()!.split('/').slice(0, path.includes('/node_modules/@') ? 2 : 1).join('/');
  if (path.startsWith('node:')) return path;
  return relative(ROOT, path);
}

function bucket(cf: CallFrame): string {
  const fn = cf.functionName;
  if (fn === '(garbage collector)' || fn === '(idle)' || fn === '(program)' || fn === '(root)') return fn;
  if (!cf.url) return '(native / builtins)';
  const w = where(cf.url);
  if (w.startsWith('node:')) return 'node: internals';
  if (w.startsWith('node_modules/')) return w;
  return w;
}

/** skipMs: ignore samples from the first skipMs of the profile (start-up and warm-up); untilMs: and from untilMs on (shutdown). */
export function summarise(profile: CpuProfile, top: number, skipMs = 0, untilMs = Number.POSITIVE_INFINITY): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    elapsed += profile.timeDeltas[i] ?? 0;
    if (elapsed < skipMs * 1000 || elapsed > untilMs * 1000) continue;
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  for (const [id, t] of self) {
    total += t;
    if (byId.get(id)?.callFrame.functionName === '(idle)') idle += t;
  }
  const busy = total - idle;
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1)}%`;
  const key = (cf: CallFrame) => `${cf.functionName || '(anonymous)'}  ${where(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;

  const selfByFn = new Map<string, number>();
  const selfByBucket = new Map<string, number>();
  for (const [id, t] of self) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    selfByFn.set(key(cf), (selfByFn.get(key(cf)) ?? 0) + t);
    selfByBucket.set(bucket(cf), (selfByBucket.get(bucket(cf)) ?? 0) + t);
  }
  // Inclusive time of the project's own functions (each function counted once per sample).
  const incl = new Map<string, number>();
  for (const [id, t] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (!cf.url || cf.url.includes('/node_modules/') || cf.url.startsWith('node:')) continue;
      const k = key(cf);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + t);
    }
  }
  const table = (m: Map<string, number>, n: number) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, t]) => `  ${pct(t).padStart(6)}  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`).join('\n');
  const wall = Math.min((profile.endTime - profile.startTime) / 1000, untilMs) - skipMs;
  return [
    `profile: ${(wall / 1000).toFixed(1)} s wall (first ${(skipMs / 1000).toFixed(1)} s skipped), busy ${(busy / 1000).toFixed(0)} ms (${((100 * busy) / total).toFixed(0)}% of samples), idle ${(idle / 1000).toFixed(0)} ms`,
    '',
    'Self time by source (share of busy time):',
    table(selfByBucket, 20),
    '',
    `Top ${top} functions by self time:`,
    table(selfByFn, top),
    '',
    `Top ${top} project functions by inclusive time:`,
    table(incl, top),
  ].join('\n');
}

/** Writes the allocation profile beside the CPU profile (DevTools opens it; its frames carry columns, so a bundle's source map resolves them). */
function keep(head: HeapNode, dir: string): HeapNode {
  writeFileSync(join(dir, 'allocations.heapprofile'), JSON.stringify({ head }));
  return head;
}

/** The sampled allocations of the measured load, per request (or per held stream). */
function allocationReport(profile: HeapNode, count: number, unit: 'request' | 'stream', top: number): string {
  const byFn = allocationsBySelf(profile, where);
  const total = byFn.reduce((s, [, b]) => s + b, 0);
  const per = Math.max(1, count);
  const short = unit === 'request' ? 'req' : 'stream';
  return [
    `${values['heap-mode'] === 'allocated' ? 'Allocated' : values['heap-mode'] === 'retained' ? 'Still alive at the end' : 'Promoted (or about to be)'} during the measured load: ${(total / 2 ** 20).toFixed(0)} MB (sampled), ${(total / per / 1024).toFixed(1)} KB per ${unit}`,
    '',
    `Top ${top} functions by bytes allocated (self, freed objects included):`,
    ...byFn.slice(0, top).map(([k, b]) => `  ${((100 * b) / total).toFixed(1).padStart(5)}%  ${(b / per).toFixed(0).padStart(6)} B/${short}  ${k}`),
  ].join('\n');
}

async function main(): Promise<void> {
  const top = Number(values.top);
  if (values.file) {
    process.stdout.write(summarise(JSON.parse(readFileSync(values.file, 'utf8')) as CpuProfile, top, Number(values['skip-ms']), values['until-ms'] === undefined ? undefined : Number(values['until-ms'])) + '\n');
    return;
  }
  // `--target governed` as before: the gateway with the governed configuration.
  const which = values.target === 'governed' ? 'gateway' : values.target;
  const configName = (values.target === 'governed' ? 'governed' : values.config) as ConfigName;
  if (which !== 'gateway' && which !== 'floor') throw new Error('--target must be gateway or floor');
  if (!CONFIGS.includes(configName)) throw new Error(`--config: one of ${CONFIGS.join(', ')}`);
  if (values['no-build']) skipBuild();
  const label = which === 'floor' ? 'floor' : configName;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(BENCH, 'results', `profile-${label}-${stamp}`);
  mkdirSync(dir, { recursive: true });
  const held = values.held ? Number(values.held) : undefined;
  const mock = await startMock(held ? { latencyMs: 20, chunkDelayMs: 250 } : { latencyMs: 20, chunkDelayMs: 5 }, await freePort(), dir);
  const mockBase = `http://127.0.0.1:${mock.port}/openai`;
  const svc = await servicesFor(which === 'floor' ? 'plain' : configName);
  const port = await freePort();
  const inspectPort = values.heap ? await freePort() : undefined;
  const flags = ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(values.gc ? ['--trace-gc'] : []), ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : [])];
  // Built first, so the profile's clock (from the spawn) is not offset by the build.
  if (which !== 'floor') buildGateway();
  const spawnedAt = performance.now();
  let measuredFrom = spawnedAt;
  let measuredTo = spawnedAt;
  let proc: Proc;
  try {
    proc = which !== 'floor'
      ? await startGateway(mockBase, port, dir, { workers: 1, nodeFlags: flags, ...(svc.config && { config: svc.config }) })
      : await startFloor(mockBase, port, dir, flags);
  } catch (err) {
    await stop(mock);
    throw err;
  }
  const target: Target = { name: which === 'floor' ? 'floor' : 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: svc.headers, model: svc.model };
  let heap: string | undefined;
  try {
    if (held) {
      const opts = { n: held, rampMs: 1000, stallMs: 1000, firstByteStallMs: 5000, timeoutMs: 15_000 };
      await heldStreams(target, { ...opts, n: Math.min(held, 512) });
      const stopSampling = inspectPort ? await sampleAllocations(inspectPort, Number(values['sample-bytes']), values['heap-mode'] as SampleMode) : undefined;
      measuredFrom = performance.now();
      const r = await heldStreams(target, opts);
      measuredTo = performance.now();
      process.stderr.write(`${label}, ${held} held streams: ${r.completed} completed, ${r.stalled} stalled, ${r.failed} failed, last first byte ${r.lastTtftMs.toFixed(0)} ms\n`);
      if (stopSampling) heap = allocationReport(keep(await stopSampling(), dir), held, 'stream', top);
    } else {
      const rate = Number(values.rate);
      const load = { rate, drainMs: 2000, maxInFlight: 5000, stream: values.stream };
      await fixedRate(target, { ...load, durationMs: Number(values['warmup-seconds']) * 1000, warmupMs: 0 });
      const stopSampling = inspectPort ? await sampleAllocations(inspectPort, Number(values['sample-bytes']), values['heap-mode'] as SampleMode) : undefined;
      measuredFrom = performance.now();
      const r = await fixedRate(target, { ...load, durationMs: Number(values.seconds) * 1000, warmupMs: 0 });
      measuredTo = performance.now();
      process.stderr.write(`${label} @ ${rate} req/s${values.stream ? ' (stream)' : ''}: achieved ${r.achievedRps.toFixed(0)}, errors ${r.errors}, p50 ${r.latency.p50.toFixed(1)} ms, p99 ${r.latency.p99.toFixed(1)} ms\n`);
      if (stopSampling) heap = allocationReport(keep(await stopSampling(), dir), r.sentAll, 'request', top);
    }
  } finally {
    await stop(proc, 15_000);
    await stop(mock);
    await svc.redis?.stop();
    await svc.postgres?.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  // Skip start-up (module loading, type stripping) and warm-up: only the measured load counts.
  // The profile's clock starts with the process, within a few ms of the spawn.
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const parts = [summarise(profile, top, measuredFrom - spawnedAt, measuredTo - spawnedAt)];
  // The streams open over the first second and the first of them end after about 4 s: until then,
  // how their starts and the relay of those already open share the thread.
  if (held) parts.push(heldSplitTable(profile, measuredFrom - spawnedAt, Math.min(measuredTo, measuredFrom + 4000) - spawnedAt));
  if (heap) parts.push(heap);
  if (values.gc) parts.push(gcPauses(readFileSync(proc.logFile, 'utf8'), measuredFrom - spawnedAt, measuredTo - spawnedAt));
  const summary = parts.join('\n\n');
  writeFileSync(join(dir, 'summary.txt'), summary + '\n');
  process.stdout.write(summary + `\n\nprofile: ${join(dir, file)}\n`);
}

/**
 * The pauses --trace-gc reported inside [fromMs, toMs] of the process's life (its lines carry the
 * time since the isolate started, which is within a few ms of the spawn).
 */
export function gcPauses(log: string, fromMs: number, toMs: number): string {
  const by = new Map<string, number[]>();
  for (const m of log.matchAll(/\s(\d+) ms: (Scavenge|Minor Mark-Sweep|Mark-Compact|Mark-sweep)\b[^\n]*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/g)) {
    const at = Number(m[1]);
    if (at < fromMs || at > toMs) continue;
    const list = by.get(m[2]) ?? [];
    list.push(Number(m[3]));
    by.set(m[2], list);
  }
  const seconds = (toMs - fromMs) / 1000;
  const lines = [`GC pauses during the measured load (${seconds.toFixed(1)} s, --trace-gc):`];
  for (const [kind, pauses] of by) {
    const sorted = [...pauses].sort((a, b) => a - b);
    const sum = sorted.reduce((s, x) => s + x, 0);
    lines.push(`  ${kind}: ${sorted.length} (${(sorted.length / seconds).toFixed(1)}/s), total ${sum.toFixed(0)} ms (${((100 * sum) / (toMs - fromMs)).toFixed(1)}% of wall), p50 ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms`);
  }
  if (by.size === 0) lines.push('  none reported');
  return lines.join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`profile failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
