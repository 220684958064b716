// Issue 26, target 4: the cost of a governed request must not grow with the configuration. Gateways
// with 10 and 10,000 virtual keys, and with 10 and 1,000 routing rules, are measured side by side in
// alternating rounds (CPU per request at a fixed rate, the governed request of bench/run.ts); then a
// live reload of the 10,000-key configuration is made while traffic flows, and the p99 of that
// traffic is compared with the same traffic without a reload.
//
//   node bench/config-scale.ts [--rounds 5] [--concurrency 8] [--requests 3000] [--rate 500] [--seconds 5] [--reload-rounds 3]
//
// CPU per request is measured in a closed loop (`--concurrency` requests at a time, `--requests` per
// gateway per round; `--concurrency 0` for the old fixed rate): on a loaded machine an open loop at a
// fixed rate starves the niced processes and every request fails, while a closed loop still gives CPU
// per answered request. A round with more than 1% of its requests failed is not counted.
//
// The extra keys each have their own budget and rate limit and belong to one of 100 teams; the extra
// routing rules are scoped to those other keys (the bench key keeps its 5 own rules and the 5 global
// ones), so a request evaluates the same rules in every configuration: what may grow is lookup and
// bookkeeping, never the work a request asks for.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { body, closedLoop, fixedRate, type Target } from './lib/load.ts';
import { BENCH_VK, PEERS, freePort, serviceCpuSeconds, skipBuild, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { median, percentile } from './lib/stats.ts';
import { scaledConfig } from './lib/scaled-config.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    rate: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '8' },
    requests: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '5' },
    'reload-rounds': { type: 'string', default: '3' },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});

const VARIANTS = [
  { name: '10 keys, 10 rules', keys: 10, rules: 10 },
  { name: '10,000 keys, 10 rules', keys: 10_000, rules: 10 },
  { name: '10 keys, 1,000 rules', keys: 10, rules: 1000 },
  { name: '10,000 keys, 1,000 rules', keys: 10_000, rules: 1000 },
];

async function main(): Promise<void> {
  if (values['no-build']) skipBuild();
  const rounds = Number(values.rounds);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const dir = join(PEERS, 'config-scale', new Date().toISOString().replace(/[:.]/g, '-'));
  const mock = await startMock({ latencyMs: 20, chunkDelayMs: 5 }, await freePort(), dir);
  const mockBase = `http://127.0.0.1:${mock.port}/openai`;
  const procs: Proc[] = [];
  const out: string[] = [];
  try {
    const gateways: { v: (typeof VARIANTS)[number]; proc: Proc; target: Target }[] = [];
    for (const v of VARIANTS) {
      const port = await freePort();
      const proc = await startGateway(mockBase, port, join(dir, `${v.keys}-${v.rules}`), { workers: 1, config: scaledConfig(v.keys, v.rules), name: 'governed' });
      procs.push(proc);
      gateways.push({ v, proc, target: { name: 'governed', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { 'content-type': 'application/json', 'x-bf-vk': BENCH_VK }, model: 'gpt-4o' } });
    }
    // Each gateway must answer the measured request before it is measured: a refusal would be measured as a cheap error.
    for (const g of gateways) {
      const res = await fetch(`${g.target.origin}${g.target.path}`, { method: 'POST', headers: g.target.headers, body: body(g.target, false) });
      if (res.status !== 200) throw new Error(`${g.v.name}: the measured request is answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    }
    const load = { rate, durationMs: seconds * 1000, warmupMs: 500, drainMs: 1500, maxInFlight: 5000 };
    for (const g of gateways) await (Number(values.concurrency) ? closedLoop(g.target, Number(values.concurrency), 500) : fixedRate(g.target, { ...load, durationMs: 2000, warmupMs: 0 }));
    const cpu = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
    const invalid = new Map<string, number>();
    const concurrency = Number(values.concurrency);
    const requests = Number(values.requests);
    const loads: number[] = [];
    for (let r = 0; r < rounds; r++) {
      loads.push(loadavg()[0]);
      const order = gateways.map((_, i) => gateways[(i + r) % gateways.length]);
      for (const g of order) {
        const cpu0 = serviceCpuSeconds(g.proc);
        const res = concurrency ? await closedLoop(g.target, concurrency, requests) : await fixedRate(g.target, load);
        const spent = serviceCpuSeconds(g.proc) - cpu0;
        const answered = res.ok;
        if (res.errors) process.stderr.write(`${g.v.name}: ${res.errors} errors\n`);
        // A failed request costs less than an answered one: a round with failures is no figure.
        if (res.errors > 0.01 * (answered + res.errors)) {
          invalid.set(g.v.name, (invalid.get(g.v.name) ?? 0) + 1);
          cpu.get(g.v.name)!.push(Number.NaN);
        } else cpu.get(g.v.name)!.push((spent * 1e6) / Math.max(1, answered));
      }
      process.stderr.write(`round ${r + 1}: ${VARIANTS.map((v) => `${v.name} ${Math.round(cpu.get(v.name)!.at(-1)!)} µs`).join('; ')}\n`);
    }
    const ref = cpu.get(VARIANTS[0].name)!;
    const how = concurrency ? `in a closed loop of ${concurrency}, ${requests} requests per gateway per round` : `at ${rate} req/s, rounds of ${seconds} s`;
    out.push(`CPU per answered governed request ${how}, ${rounds} rounds, load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`, '');
    out.push('| configuration | CPU µs/request (median) | vs 10 keys, 10 rules (median of per-round ratios) | per round µs | rounds not counted (>1% failed) |', '|---|---:|---:|---|---:|');
    const valid = (xs: number[]) => xs.filter((x) => Number.isFinite(x));
    for (const v of VARIANTS) {
      const c = cpu.get(v.name)!;
      out.push(`| ${v.name} | ${Math.round(median(valid(c)))} | ${median(valid(c.map((x, i) => x / ref[i]))).toFixed(3)} | ${c.map(Math.round).join(', ')} | ${invalid.get(v.name) ?? 0} |`);
    }

    // Live reload of the 10,000-key configuration under traffic: the file is replaced (every
    // budget changed) 1/3 into the window; the same window without a reload is the reference.
    const big = gateways.find((g) => g.v.keys === 10_000 && g.v.rules === 10)!;
    const configFile = join(dir, '10000-10', 'governed-app', 'config.json');
    const reloadRounds = Number(values['reload-rounds']);
    const quiet: number[] = [];
    const reloading: number[] = [];
    const worst: number[] = [];
    const failed: number[] = [];
    for (let r = 0; r < reloadRounds; r++) {
      for (const withReload of [false, true]) {
        const samples: number[] = [];
        // The next file is written before the window and renamed over config.json in it (as editors
        // save): made in the window, its text (megabytes of JSON; 1.4-1.7 s of this process at load
        // 21) stalled this process's own load loop, counted in the latency of every request due meanwhile.
        if (withReload) writeFileSync(`${configFile}.next`, reloaded(configFile, r + 1));
        const timer = withReload
          ? setTimeout(() => renameSync(`${configFile}.next`, configFile), (seconds * 1000) / 3)
          : undefined;
        const res = await fixedRate(big.target, { ...load, warmupMs: 0, onSample: (_due, ms) => samples.push(ms) });
        clearTimeout(timer);
        if (res.errors) process.stderr.write(`reload round ${r + 1}${withReload ? ' (reload)' : ''}: ${res.errors} of ${res.sentAll} failed\n`);
        failed.push(res.errors / Math.max(1, res.sentAll));
        (withReload ? reloading : quiet).push(percentile(samples, 0.99));
        if (withReload) worst.push(Math.max(...samples));
        // The watcher's debounce and the swap are over before the next window.
        await new Promise((res) => setTimeout(res, 1500));
      }
    }
    out.push('', `Live reload of the 10,000-key configuration at ${rate} req/s (${reloadRounds} rounds; p99 of a ${seconds} s window, the reload 1/3 into it):`, '');
    out.push('| | p99 ms (median) | per round |', '|---|---:|---|');
    out.push(`| no reload | ${median(quiet).toFixed(1)} | ${quiet.map((x) => x.toFixed(1)).join(', ')} |`);
    out.push(`| reload during the window | ${median(reloading).toFixed(1)} | ${reloading.map((x) => x.toFixed(1)).join(', ')} (slowest request ${worst.map((x) => x.toFixed(0)).join(', ')} ms) |`);
    out.push(`| added to p99 by the reload | ${(median(reloading) - median(quiet)).toFixed(1)} | |`);
    out.push('', `Failed requests per window: ${failed.map((f) => `${(f * 100).toFixed(1)}%`).join(', ')} (a window with failures does not give a valid p99).`);
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    await Promise.allSettled(procs.map((p) => stop(p)));
    await stop(mock);
  }
}

/** The configuration file with its governance section of generation `generation` (everything else as startGateway wrote it). */
function reloaded(file: string, generation: number): string {
  const current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return JSON.stringify({ ...current, governance: scaledConfig(10_000, 10, generation).governance }, null, 2);
}

main().catch((err: unknown) => {
  process.stderr.write(`config-scale failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
