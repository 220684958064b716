// Interleaved A/B of CPU per request: builds of the gateway (and the floor) measured in alternating
// rounds at a fixed rate against one mock, so drift in the machine's load hits every build alike.
// Ratios within a round are what count; the table gives medians over rounds and the load average.
//
//   node bench/ab.ts --save before                 # keep the current dist/ as build "before"
//   node bench/ab.ts --builds floor,before,current # current: this checkout's dist/ (built first)
//   node bench/ab.ts --builds before,current --config logging --rounds 5 --rate 1000 --seconds 5
//   node bench/ab.ts --builds floor,before,current --streams 2048   # held streams: CPU per stream, stalls, GC work (traced)
//   node bench/ab.ts --builds current,current@--max-semi-space-size=2   # one build under two node flags
//   node bench/ab.ts --builds current,current@SKYBRIDGE_MEMORY_TRIM=86400 --streams 4096   # one build with an environment variable (no trims)
//   node bench/ab.ts --builds current,current+cache-hit                # one build, two configs: a hit against a miss
//   node bench/ab.ts --builds floor,current --concurrency 128 --requests 20000   # closed loop: CPU per request and answers/s at saturation
//   node bench/ab.ts --builds floor,git-44b1b11,current                # a commit built beside this checkout (bench/.peers)
//
// --config: the gateway configuration every build runs (plain, logging, logging-pg, governed,
// governed-redis, cache-hit), as the targets of the same names in bench/run.ts; `build+config`
// gives one build its own (so a cache hit and a miss are measured in the same rounds).
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { closedLoop, fixedRate, heldStreams, type Target } from './lib/load.ts';
import { PEERS, ROOT, freePort, serviceCpuSeconds, serviceRssMb, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { median } from './lib/stats.ts';
import { CONFIGS, servicesFor, type ConfigName, type ConfigServices } from './lib/configs.ts';
import { buildExtras, buildRoot, savedBuildRoot } from './lib/builds.ts';
import { GC_TRACE_FLAGS, gcWork } from './lib/gc-trace.ts';

const { values } = parseArgs({
  options: {
    save: { type: 'string' },
    builds: { type: 'string', default: 'floor,current' },
    config: { type: 'string', default: 'plain' },
    rounds: { type: 'string', default: '5' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    'no-build': { type: 'boolean', default: false },
    /** Closed loop instead: this many requests in flight, --requests per build per round (a loaded machine cannot hold a fixed rate). */
    concurrency: { type: 'string' },
    requests: { type: 'string', default: '2000' },
    /** Held streams instead: this many streaming requests opened over 1 s, as bench/run.ts's streams phase (250 ms between events). */
    streams: { type: 'string' },
    /** Requests each process serves first, unmeasured (closed loop of 64): a fresh gateway's code settles after ~15,000-30,000. */
    'warm-requests': { type: 'string', default: '20000' },
  },
  strict: true,
});

/** The current dist/ kept as a named build, beside the checkout's node_modules (resolved from there). */
function save(name: string): void {
  if (!/^[\w.-]+$/.test(name) || name.startsWith('git-')) throw new Error('--save NAME: letters, digits, . _ - (not starting with git-, which names a commit)');
  const root = buildRoot(name);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  process.stderr.write(`saved dist/ as ${root}\n`);
}

async function main(): Promise<void> {
  if (values.save) {
    save(values.save);
    return;
  }
  const config = values.config as ConfigName;
  if (!CONFIGS.includes(config)) throw new Error(`--config: one of ${CONFIGS.join(', ')}`);
  const builds = values.builds.split(',').map((s) => s.trim()).filter(Boolean);
  // `name@--flag`: that build run with an extra node flag (after npm start's, so it wins);
  // `name@NAME=value`: with that environment variable instead (SKYBRIDGE_MEMORY_TRIM=86400: no trims).
  const buildOf = (b: string) => b.split('@')[0].split('+')[0];
  const flagOf = (b: string) => buildExtras(b).flags;
  const envOf = (b: string) => buildExtras(b).env;
  // `name+config`: that build under its own configuration (before any @flag).
  const configOf = (b: string): ConfigName => {
    const c = b.split('@')[0].split('+')[1] ?? config;
    if (!CONFIGS.includes(c as ConfigName)) throw new Error(`${b}: the configuration after + is one of ${CONFIGS.join(', ')}`);
    return c as ConfigName;
  };
  for (const b of builds.map(buildOf)) if (b !== 'floor' && b !== 'current') savedBuildRoot(b);
  if (builds.some((b) => buildOf(b) === 'floor' && (b.includes('+') || Object.keys(envOf(b)).length > 0))) throw new Error('floor takes node flags only (floor@--flag)');
  if (values['no-build']) skipBuild();
  const rounds = Number(values.rounds);
  const concurrency = values.concurrency ? Number(values.concurrency) : undefined;
  const requests = Number(values.requests);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(PEERS, 'ab-runs', stamp);
  mkdirSync(dir, { recursive: true });
  const streams = values.streams ? Number(values.streams) : undefined;
  // Held streams pace their events as bench/run.ts's streams phase does.
  const mock = await startMock(streams ? { latencyMs: 20, chunkDelayMs: 250 } : { latencyMs: 20, chunkDelayMs: 5 }, await freePort(), dir);
  const mockBase = `http://127.0.0.1:${mock.port}/openai`;
  const svcs = new Map<ConfigName, ConfigServices>();
  for (const c of new Set([config, ...builds.map(configOf)])) svcs.set(c, await servicesFor(c));
  const procs = new Map<string, Proc>();
  const targets = new Map<string, Target>();
  // Held streams: each process traces its collections, whose counts and bytes do not move with the load.
  const traced = streams ? GC_TRACE_FLAGS : [];
  try {
    for (const b of builds) {
      const port = await freePort();
      if (buildOf(b) === 'floor') {
        procs.set(b, await startFloor(mockBase, port, dir, [...traced, ...flagOf(b)]));
        targets.set(b, { name: 'floor', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, model: 'openai/gpt-4o' });
        continue;
      }
      // Each build its own app dir (its own SQLite logs or cache file); 'gateway' as the name keeps the config's shape.
      const sub = join(dir, b.replace(/[^\w.-]/g, '_'));
      const build = buildOf(b);
      const svc = svcs.get(configOf(b))!;
      procs.set(b, await startGateway(mockBase, port, sub, { workers: 1, nodeFlags: [...traced, ...flagOf(b)], env: envOf(b), ...(svc.config && { config: svc.config }), ...(build !== 'current' && { root: savedBuildRoot(build) }) }));
      targets.set(b, { name: 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: svc.headers, model: svc.model });
    }
    const cpu = new Map<string, number[]>(builds.map((b) => [b, []]));
    const p50 = new Map<string, number[]>(builds.map((b) => [b, []]));
    const p99 = new Map<string, number[]>(builds.map((b) => [b, []]));
    /** Closed loop: answers per second, the throughput at that concurrency. */
    const rps = new Map<string, number[]>(builds.map((b) => [b, []]));
    const loads: number[] = [];
    if (streams) {
      await streamRounds(builds, procs, targets, streams, rounds, dir);
      return;
    }
    // A first pass unmeasured: JIT warm-up (as bench/run.ts's), pools filled, lazy modules loaded.
    const warm = Number(values['warm-requests']);
    for (const b of builds) {
      if (warm > 0) await closedLoop(targets.get(b)!, 64, warm, { until: performance.now() + 60_000 });
      if (concurrency) await closedLoop(targets.get(b)!, concurrency, Math.ceil(requests / 2));
      else await fixedRate(targets.get(b)!, { rate, durationMs: 2000, warmupMs: 0, drainMs: 1000, maxInFlight: 5000 });
    }
    for (let r = 0; r < rounds; r++) {
      loads.push(loadavg()[0]);
      // Rotated each round, so no build always runs first (or right after the same neighbour).
      const order = builds.map((_, i) => builds[(i + r) % builds.length]);
      for (const b of order) {
        const proc = procs.get(b)!;
        if (concurrency) {
          const cpu0 = serviceCpuSeconds(proc);
          const t0 = performance.now();
          const res = await closedLoop(targets.get(b)!, concurrency, requests);
          rps.get(b)!.push((res.ok * 1000) / (performance.now() - t0));
          cpu.get(b)!.push(((serviceCpuSeconds(proc) - cpu0) * 1e6) / Math.max(1, res.ok));
          p50.get(b)!.push(res.p50);
          p99.get(b)!.push(res.p99);
          if (res.errors > 0) process.stderr.write(`round ${r + 1} ${b}: ${res.errors} errors\n`);
          continue;
        }
        const cpu0 = serviceCpuSeconds(proc);
        const res = await fixedRate(targets.get(b)!, { rate, durationMs: seconds * 1000, warmupMs: 500, drainMs: 1500, maxInFlight: 5000 });
        cpu.get(b)!.push(((serviceCpuSeconds(proc) - cpu0) * 1e6) / Math.max(1, res.sentAll));
        p50.get(b)!.push(res.latency.p50);
        p99.get(b)!.push(res.latency.p99);
        if (res.errors > 0) process.stderr.write(`round ${r + 1} ${b}: ${res.errors} errors\n`);
      }
      process.stderr.write(`round ${r + 1}: ${builds.map((b) => `${b} ${Math.round(cpu.get(b)!.at(-1)!)} µs`).join(', ')} (load ${loads.at(-1)!.toFixed(2)})\n`);
    }
    const ref = builds[0];
    const lines = [
      `config ${config}, ${concurrency ? `closed loop of ${concurrency}, ${requests} requests` : `${rate} req/s, ${seconds} s`} per build per round, ${rounds} rounds; load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`,
      '',
      `| build | CPU µs/request (median) | vs ${ref} (median of per-round ratios) | p50 ms | p99 ms | per round µs |`,
      '|---|---:|---:|---:|---:|---|',
    ];
    for (const b of builds) {
      const ratios = cpu.get(b)!.map((c, i) => c / cpu.get(ref)![i]);
      lines.push(`| ${b} | ${Math.round(median(cpu.get(b)!))} | ${median(ratios).toFixed(3)} | ${median(p50.get(b)!).toFixed(1)} | ${median(p99.get(b)!).toFixed(1)} | ${cpu.get(b)!.map(Math.round).join(', ')} |`);
    }
    // A build under its own configuration against the same build under the run's (a hit against a miss).
    for (const b of builds) {
      const base = b.replace(/\+[^@]*/, '');
      if (base === b || !cpu.has(base)) continue;
      const ratios = cpu.get(b)!.map((c, i) => c / cpu.get(base)![i]);
      lines.push('', `${b} vs ${base}: ${median(ratios).toFixed(3)} (median of per-round ratios; per round ${ratios.map((x) => x.toFixed(2)).join(', ')})`);
    }
    if (concurrency) {
      lines.push('', `| build | answers/s (median) | vs ${ref} (median of per-round ratios) | per round |`, '|---|---:|---:|---|');
      for (const b of builds) {
        const ratios = rps.get(b)!.map((x, i) => x / rps.get(ref)![i]);
        lines.push(`| ${b} | ${Math.round(median(rps.get(b)!))} | ${median(ratios).toFixed(3)} | ${rps.get(b)!.map(Math.round).join(', ')} |`);
      }
    }
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.allSettled([...procs.values()].map((p) => stop(p)));
    await stop(mock);
    for (const svc of svcs.values()) {
      await svc.redis?.stop();
      await svc.postgres?.stop();
    }
  }
}

/** Held streams per build per round: the proxy's CPU per stream, stalls, the last stream's first byte and peak RSS. */
async function streamRounds(builds: string[], procs: Map<string, Proc>, targets: Map<string, Target>, n: number, rounds: number, dir: string): Promise<void> {
  const cpu = new Map<string, number[]>(builds.map((b) => [b, []]));
  const stallFree = new Map<string, number[]>(builds.map((b) => [b, []]));
  const lastTtft = new Map<string, number[]>(builds.map((b) => [b, []]));
  const rss = new Map<string, number[]>(builds.map((b) => [b, []]));
  const client = new Map<string, number[]>(builds.map((b) => [b, []]));
  /** Per level: young and full collections, KB promoted per stream (the process's GC trace over the level). */
  const gc = new Map<string, { young: number; full: number; promotedKb: number; pauseMs: number }[]>(builds.map((b) => [b, []]));
  const loads: number[] = [];
  const opts = { n, rampMs: 1000, stallMs: 1000, firstByteStallMs: 5000, timeoutMs: 15_000 };
  // Unmeasured: warm-up and the upstream pools' connections opened.
  for (const b of builds) await heldStreams(targets.get(b)!, { ...opts, n: Math.min(n, 512) });
  for (let r = 0; r < rounds; r++) {
    loads.push(loadavg()[0]);
    const order = builds.map((_, i) => builds[(i + r) % builds.length]);
    for (const b of order) {
      const proc = procs.get(b)!;
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, serviceRssMb(proc))), 200);
      const cpu0 = serviceCpuSeconds(proc);
      const traceFrom = statSync(proc.logFile).size;
      const res = await heldStreams(targets.get(b)!, opts);
      clearInterval(sampler);
      cpu.get(b)!.push(((serviceCpuSeconds(proc) - cpu0) * 1000) / n);
      const work = gcWork(readFileSync(proc.logFile).subarray(traceFrom).toString('latin1'));
      gc.get(b)!.push({ young: work.young, full: work.full, promotedKb: work.promotedBytes / 1024 / n, pauseMs: work.pauseMs });
      stallFree.get(b)!.push(res.completed - res.stalled);
      lastTtft.get(b)!.push(res.lastTtftMs);
      rss.get(b)!.push(peak);
      client.get(b)!.push(res.clientCpuMsPerStream);
      // Connections close and the loop settles before the next build's level.
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    process.stderr.write(`round ${r + 1}: ${builds.map((b) => `${b} ${cpu.get(b)!.at(-1)!.toFixed(2)} ms/stream, ${stallFree.get(b)!.at(-1)} stall-free, last first byte ${Math.round(lastTtft.get(b)!.at(-1)!)} ms`).join('; ')} (load ${loads.at(-1)!.toFixed(2)})\n`);
  }
  const ref = builds[0];
  const lines = [
    `${n} held streams (15 events 250 ms apart) per build per round, ${rounds} rounds; load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}; logs in ${dir}`,
    '',
    `| build | CPU ms/stream (median) | vs ${ref} (median of per-round ratios) | stall-free of ${n} (median) | last stream's first byte ms (median) | peak RSS MB | per round ms/stream | client's CPU ms/stream | young / full GCs per round | KB promoted per stream | GC pauses ms per round (wall) |`,
    '|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|',
  ];
  for (const b of builds) {
    const ratios = cpu.get(b)!.map((c, i) => c / cpu.get(ref)![i]);
    lines.push(`| ${b} | ${median(cpu.get(b)!).toFixed(2)} | ${median(ratios).toFixed(3)} | ${median(stallFree.get(b)!)} | ${Math.round(median(lastTtft.get(b)!))} | ${Math.round(median(rss.get(b)!))} | ${cpu.get(b)!.map((c) => c.toFixed(2)).join(', ')} | ${median(client.get(b)!).toFixed(2)} | ${gc.get(b)!.map((g) => `${g.young}/${g.full}`).join(', ')} | ${median(gc.get(b)!.map((g) => g.promotedKb)).toFixed(1)} | ${gc.get(b)!.map((g) => Math.round(g.pauseMs)).join(', ')} |`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`ab failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
