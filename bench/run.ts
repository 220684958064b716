// Benchmark harness: direct (mock upstream), floor (minimal passthrough), gateway (Skybridge) and
// Portkey, measured side by side in one run. See docs/benchmarks.md for the method.
//
//   npm run bench                      # full: 3 runs, medians, writes docs/benchmarks.md
//   npm run bench -- --quick           # smoke run (1 short run, < 3 min), docs untouched
//   npm run bench -- --runs 5 --targets floor,gateway
//   npm run bench -- --render bench/results/<stamp>.json   # docs from saved results
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import {
  body, closedLoop, fixedRate, hasWrk, heldStreams, saturation, sequential, type Target, type TargetName,
} from './lib/load.ts';
import {
  BENCH, BENCH_VK, ROOT, buildBaseline, skipBuild, ensureLiteLLM, ensurePeers, freePort, governedConfig, litellmVersion, peerVersion, serviceCpuSeconds,
  serviceRssMb, startFloor, startGateway, startLiteLLM, LITELLM_MASTER_KEY, startMock, startPortkey, stop, type MockProfile, type Proc, PORTKEY_VERSION,
} from './lib/procs.ts';
import { startPostgres, type RunningPostgres } from '../test/helpers/postgres.ts';
import { startRedis, type RunningRedis } from '../test/helpers/redis.ts';
import { renderDocs, renderTable, type Machine, type Plan, type RunResult, type TargetRun } from './lib/report.ts';
import { round } from './lib/stats.ts';

const ALL_TARGETS: TargetName[] = [
  'direct', 'floor', 'baseline', 'gateway', 'logging', 'logging-pg', 'cache-hit', 'cache-bypass', 'governed', 'governed-redis', 'portkey', 'litellm',
];
/** Measured unless --targets says otherwise (the others are opt-in; baseline is added unless --no-baseline). */
const DEFAULT_TARGETS: TargetName[] = ['direct', 'floor', 'gateway', 'governed', 'governed-redis', 'portkey', 'litellm'];
/**
 * The build every run compares against unless `--baseline REF` names another or `--no-baseline`
 * skips it: the last commit before the hardening, the stage pipeline and the features of issues
 * 15-25 (issue 26 sets the plain gateway's CPU per request at ≤ 0.8× this build's), so a
 * regression against it shows in every run.
 */
const DEFAULT_BASELINE = 'cb05528';
const PHASES = ['c1', 'load', 'streams'] as const;
type Phase = (typeof PHASES)[number];

const FULL: Plan = {
  warm: { requests: 20_000, streams: 10_000, concurrency: 64, maxSeconds: 30 },
  seq: { warmup: 300, requests: 2000, blocks: 10 },
  ttft: { warmup: 30, requests: 300, blocks: 5 },
  satConnections: 128,
  satWarmupS: 2,
  satDurationS: 10,
  rates: [500, 1000, 2000],
  rateWarmupMs: 1000,
  rateDurationMs: 6000,
  drainMs: 2000,
  streamLevels: [1024, 2048, 4096],
  streamRampMs: 1000,
  stallMs: 1000,
  firstByteStallMs: 5000,
  streamTimeoutMs: 15_000,
  runLimitMs: 10 * 60_000,
};

const QUICK: Plan = {
  warm: { requests: 5_000, streams: 2_000, concurrency: 64, maxSeconds: 10 },
  seq: { warmup: 100, requests: 500, blocks: 5 },
  ttft: { warmup: 10, requests: 100, blocks: 2 },
  satConnections: 128,
  satWarmupS: 1,
  satDurationS: 4,
  rates: [500, 1000, 2000],
  rateWarmupMs: 500,
  rateDurationMs: 3000,
  drainMs: 1500,
  streamLevels: [1024, 4096],
  streamRampMs: 1000,
  stallMs: 1000,
  firstByteStallMs: 5000,
  streamTimeoutMs: 12_000,
  runLimitMs: 3.5 * 60_000,
};

/** Upstream behaviour per group of phases. */
const PROFILES: Record<'c1' | 'load' | 'streams', MockProfile> = {
  // Concurrency-1 overhead and TTFT: no upstream latency, so the proxy's own time is not lost in
  // timer noise; 2 ms between SSE events keeps the (fully read) streams short.
  c1: { latencyMs: 0, chunkDelayMs: 2 },
  // Throughput and fixed-rate: 20 ms to first byte, like a fast real provider.
  load: { latencyMs: 20, chunkDelayMs: 5 },
  // Held streams: slow token pacing (250 ms between events, ~4 s per stream).
  streams: { latencyMs: 20, chunkDelayMs: 250 },
};

function parseOptions() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      quick: { type: 'boolean', default: false },
      targets: { type: 'string', default: DEFAULT_TARGETS.join(',') },
      baseline: { type: 'string' },
      'no-baseline': { type: 'boolean', default: false },
      phases: { type: 'string', default: PHASES.join(',') },
      'no-build': { type: 'boolean', default: false },
      'gateway-workers': { type: 'string', default: '1' },
      'gateway-node-flags': { type: 'string', default: '' },
      'warm-requests': { type: 'string' },
      docs: { type: 'boolean' },
      'no-docs': { type: 'boolean', default: false },
      render: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`Usage: node bench/run.ts [--quick] [--runs N] [--targets LIST] [--baseline REF | --no-baseline] [--phases c1,load,streams]
                         [--gateway-workers N] [--gateway-node-flags "..."] [--docs | --no-docs]
  --quick            one short smoke run (< 3 min); does not touch docs/benchmarks.md unless --docs
  --runs N           full runs to take medians over (default 3; quick: 1)
  --targets LIST     subset of ${ALL_TARGETS.join(',')}
                     (default ${DEFAULT_TARGETS.join(',')}; "direct" is always measured;
                     governed: virtual key + 10 CEL rules + budgets and rate limits, in process / in Redis;
                     logging / logging-pg: request logs on (content off) into SQLite / a PostgreSQL server;
                     cache-hit / cache-bypass: the response cache answering hits / running without a cache key)
  --baseline REF     the older commit the gateway is also measured as built from (target "baseline";
                     default ${DEFAULT_BASELINE}, measured in every run unless --no-baseline)
  --no-baseline      skip the baseline build
  --phases LIST      which phase groups to run (default all: c1 latency+TTFT, load, held streams)
  --no-build         measure dist/ as it is instead of building it first
  --gateway-workers  gateway worker processes (cluster mode; 1 = single process)
  --gateway-node-flags  extra node flags for the gateway, e.g. "--max-semi-space-size=8"
  --warm-requests N  requests each fresh process serves before the c=1 and load phases measure
                     (default 20000, quick 5000; 0: measure cold, as runs before 2026-11-28 did)
  --render FILE      no measuring: rebuild the table and docs/benchmarks.md from a results JSON
Results: bench/results/<stamp>.json; the table goes to stdout and docs/benchmarks.md.\n`);
    process.exit(0);
  }
  const targets = values.targets.split(',').map((s) => s.trim()).filter(Boolean) as TargetName[];
  for (const t of targets) if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t}`);
  if (!targets.includes('direct')) targets.unshift('direct');
  if (values.baseline && values['no-baseline']) throw new Error('--baseline and --no-baseline exclude each other');
  const baselineRef = values['no-baseline'] ? undefined : (values.baseline ?? DEFAULT_BASELINE);
  if (baselineRef && !targets.includes('baseline')) targets.push('baseline');
  if (!baselineRef && targets.includes('baseline')) throw new Error('target baseline and --no-baseline exclude each other');
  if (values['no-build']) skipBuild();
  const phases = values.phases.split(',').map((s) => s.trim()).filter(Boolean) as Phase[];
  for (const p of phases) if (!PHASES.includes(p)) throw new Error(`unknown phase ${p}`);
  const quick = values.quick;
  const runs = Number(values.runs ?? (quick ? 1 : 3));
  if (!Number.isInteger(runs) || runs < 1 || runs > 10) throw new Error('--runs must be 1..10');
  const workers = Number(values['gateway-workers']);
  if (!Number.isInteger(workers) || workers < 1) throw new Error('--gateway-workers must be >= 1');
  const docs = values['no-docs'] ? false : (values.docs ?? !quick);
  const gatewayNodeFlags = values['gateway-node-flags'].split(/\s+/).filter(Boolean);
  const warmRequests = values['warm-requests'] === undefined ? undefined : Number(values['warm-requests']);
  if (warmRequests !== undefined && (!Number.isInteger(warmRequests) || warmRequests < 0)) throw new Error('--warm-requests must be an integer >= 0');
  return {
    quick, runs, warmRequests, targets: ALL_TARGETS.filter((t) => targets.includes(t)), workers, gatewayNodeFlags, docs, render: values.render,
    baselineRef, phases, baseline: undefined as { root: string; commit: string } | undefined,
  };
}

type Options = ReturnType<typeof parseOptions>;

function log(msg: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

function machineInfo(opts: Options): Machine {
  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  let wrk = 'none';
  if (hasWrk()) {
    try {
      execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      // wrk --version exits 1 and prints its version banner
      wrk = /wrk (\S+)/.exec(String((err as { stdout?: string }).stdout ?? ''))?.[1] ?? 'wrk';
    }
  }
  return {
    date: new Date().toISOString(),
    nproc: cpus().length,
    cpuModel,
    memGiB: round(totalmem() / 2 ** 30, 1),
    kernel: release(),
    node: process.version,
    commit,
    loadTool: hasWrk() ? `wrk ${wrk}` : `autocannon ${peerVersion('autocannon')}`,
    portkey: `@portkey-ai/gateway ${peerVersion('@portkey-ai/gateway') || PORTKEY_VERSION} (@hono/node-server ${peerVersion('@hono/node-server')})`,
    ...(opts.targets.includes('litellm') && { litellm: `litellm[proxy] ${litellmVersion()} (PyPI; one worker, no database)` }),
    ...(opts.baseline && { baseline: opts.baseline.commit }),
    runs: opts.runs,
    quick: opts.quick,
    gatewayWorkers: opts.workers,
    gatewayNodeFlags: opts.gatewayNodeFlags.join(' '),
  };
}

// ---------------------------------------------------------------- services

interface Services {
  mock: Proc;
  proxies: Map<TargetName, Proc>;
  targets: Target[];
  redis?: RunningRedis;
  postgres?: RunningPostgres;
}

async function startServices(profile: MockProfile, opts: Options, logDir: string): Promise<Services> {
  const mockPort = await freePort();
  const mock = await startMock(profile, mockPort, logDir);
  const mockBase = `http://127.0.0.1:${mockPort}/openai`;
  const json = { 'content-type': 'application/json' };
  const targets: Target[] = [{
    name: 'direct', origin: `http://127.0.0.1:${mockPort}`, path: '/openai/v1/chat/completions',
    headers: { ...json, authorization: 'Bearer sk-bench' }, model: 'gpt-4o',
  }];
  const proxies = new Map<TargetName, Proc>();
  const starts: Promise<void>[] = [];
  const want = (t: TargetName) => opts.targets.includes(t);
  if (want('floor')) {
    starts.push((async () => {
      const port = await freePort();
      proxies.set('floor', await startFloor(mockBase, port, logDir));
      targets.push({ name: 'floor', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' });
    })());
  }
  if (want('gateway')) {
    starts.push((async () => {
      const port = await freePort();
      proxies.set('gateway', await startGateway(mockBase, port, logDir, { workers: opts.workers, nodeFlags: opts.gatewayNodeFlags }));
      targets.push({ name: 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' });
    })());
  }
  let redis: RunningRedis | undefined;
  for (const name of ['governed', 'governed-redis'] as const) {
    if (!want(name)) continue;
    starts.push((async () => {
      const port = await freePort();
      const config = governedConfig();
      if (name === 'governed-redis') {
        redis = await startRedis();
        config.redis = { addr: redis.addr };
      }
      proxies.set(name, await startGateway(mockBase, port, logDir, { workers: opts.workers, nodeFlags: opts.gatewayNodeFlags, config, name }));
      targets.push({ name, origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { ...json, 'x-bf-vk': BENCH_VK }, model: 'gpt-4o' });
    })());
  }
  if (want('baseline') && opts.baseline) {
    const root = opts.baseline.root;
    starts.push((async () => {
      const port = await freePort();
      proxies.set('baseline', await startGateway(mockBase, port, logDir, { workers: opts.workers, nodeFlags: opts.gatewayNodeFlags, name: 'baseline', root }));
      targets.push({ name: 'baseline', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' });
    })());
  }
  let postgres: RunningPostgres | undefined;
  for (const name of ['logging', 'logging-pg'] as const) {
    if (!want(name)) continue;
    starts.push((async () => {
      const port = await freePort();
      // Request logs as most deployments would run them: records without content.
      const config: Record<string, unknown> = { client: { enable_logging: true, disable_content_logging: true } };
      if (name === 'logging-pg') {
        postgres = await startPostgres();
        config.logs_store = { enabled: true, type: 'postgres', config: { host: postgres.host, port: String(postgres.port), user: postgres.user, password: '', db_name: postgres.database, ssl_mode: 'disable' } };
      }
      proxies.set(name, await startGateway(mockBase, port, logDir, { workers: opts.workers, nodeFlags: opts.gatewayNodeFlags, config, name }));
      targets.push({ name, origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: json, model: 'openai/gpt-4o' });
    })());
  }
  for (const name of ['cache-hit', 'cache-bypass'] as const) {
    if (!want(name)) continue;
    starts.push((async () => {
      const port = await freePort();
      // The response cache, direct-only on the embedded store: every request after the first is a
      // hit (cache-hit sends a cache key), or the cache runs but is bypassed (no key).
      const config = {
        vector_store: { enabled: true, type: 'sqlite', config: { path: 'cache.db' } },
        plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '1h' } }],
      };
      proxies.set(name, await startGateway(mockBase, port, logDir, { workers: opts.workers, nodeFlags: opts.gatewayNodeFlags, config, name }));
      const headers = name === 'cache-hit' ? { ...json, 'x-bf-cache-key': 'bench' } : json;
      targets.push({ name, origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers, model: 'openai/gpt-4o' });
    })());
  }
  if (want('litellm')) {
    starts.push((async () => {
      const port = await freePort();
      proxies.set('litellm', await startLiteLLM(mockBase, port, logDir));
      targets.push({ name: 'litellm', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: { ...json, authorization: `Bearer ${LITELLM_MASTER_KEY}` }, model: 'gpt-4o' });
    })());
  }
  if (want('portkey')) {
    starts.push((async () => {
      const port = await freePort();
      proxies.set('portkey', await startPortkey(port, logDir));
      targets.push({
        name: 'portkey', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', model: 'gpt-4o',
        headers: {
          ...json, authorization: 'Bearer sk-bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mockBase}/v1`,
        },
      });
    })());
  }
  const settled = await Promise.allSettled(starts);
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) {
    await stopServices({ mock, proxies, targets, redis, postgres });
    throw (failure as PromiseRejectedResult).reason;
  }
  targets.sort((a, b) => ALL_TARGETS.indexOf(a.name) - ALL_TARGETS.indexOf(b.name));
  const services = { mock, proxies, targets, redis, postgres };
  try {
    await probe(targets);
  } catch (err) {
    await stopServices(services);
    throw err;
  }
  return services;
}

/** One JSON and one streaming request per target must succeed before anything is measured. */
async function probe(targets: Target[]): Promise<void> {
  await Promise.all(targets.map(async (t) => {
    for (const stream of [false, true]) {
      const res = await request(t.origin + t.path, {
        method: 'POST', headers: t.headers, body: body(t, stream), headersTimeout: 10_000, bodyTimeout: 10_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200 || (stream && !text.includes('[DONE]'))) {
        throw new Error(`probe of ${t.name} (${stream ? 'stream' : 'json'}) failed: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
      }
    }
  }));
}

async function stopServices(s: Services): Promise<void> {
  await Promise.allSettled([...s.proxies.values()].map((p) => stop(p)));
  await stop(s.mock);
  await s.redis?.stop();
  await s.postgres?.stop();
}

/** Samples the RSS of every proxy every 200 ms; peak() gives the maximum since start(). */
class RssSampler {
  #peaks = new Map<TargetName, number>();
  #timer: NodeJS.Timeout | undefined;
  start(proxies: Map<TargetName, Proc>): void {
    this.#peaks.clear();
    const sample = () => {
      for (const [name, p] of proxies) this.#peaks.set(name, Math.max(this.#peaks.get(name) ?? 0, serviceRssMb(p)));
    };
    sample();
    this.#timer = setInterval(sample, 200);
  }
  stop(): Map<TargetName, number> {
    clearInterval(this.#timer);
    return new Map(this.#peaks);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- one run

async function oneRun(index: number, plan: Plan, opts: Options, logDir: string): Promise<RunResult> {
  const deadline = performance.now() + plan.runLimitMs;
  const left = () => deadline - performance.now();
  const result: RunResult = { index, targets: {}, partial: false, notes: [] };
  const tr = (name: TargetName): TargetRun => (result.targets[name] ??= {});
  const tmpDir = join(logDir, 'tmp');
  mkdirSync(tmpDir, { recursive: true });

  // ---- c=1 latency and TTFT (0 ms upstream)
  if (opts.phases.includes('c1')) {
    log(`run ${index}: c=1 latency + TTFT (upstream ${PROFILES.c1.latencyMs} ms)`);
    const s = await startServices(PROFILES.c1, opts, join(logDir, 'c1'));
    try {
      if (plan.warm) {
        for (const t of s.targets) {
          const until = performance.now() + plan.warm.maxSeconds * 1000;
          await closedLoop(t, plan.warm.concurrency, plan.warm.requests, { until });
          await closedLoop(t, plan.warm.concurrency, plan.warm.streams, { stream: true, until: until + 10_000 });
        }
      }
      const lat = await sequential(s.targets, { ...plan.seq, stream: false, deadline: performance.now() + Math.min(left(), 90_000) });
      for (const [name, r] of lat) {
        const sum = summarizeSamples(r.samples);
        tr(name).c1 = { n: r.samples.length, errors: r.errors, p50: sum.p50, p99: sum.p99, mean: sum.mean };
      }
      const tt = await sequential(s.targets, { ...plan.ttft, stream: true, deadline: performance.now() + Math.min(left(), 90_000) });
      for (const [name, r] of tt) {
        const sum = summarizeSamples(r.ttft);
        tr(name).ttft = { n: r.ttft.length, errors: r.errors, p50: sum.p50, p99: sum.p99, mean: sum.mean };
      }
    } finally {
      await stopServices(s);
    }
  }

  // ---- throughput and fixed rates (20 ms upstream)
  if (!opts.phases.includes('load')) {
    // not asked for
  } else if (left() > 30_000) {
    log(`run ${index}: throughput + fixed rates (upstream ${PROFILES.load.latencyMs} ms)`);
    const s = await startServices(PROFILES.load, opts, join(logDir, 'load'));
    try {
      // Idle RSS: after a few requests (lazy initialisation done) and a short settle.
      await sequential(s.targets, { warmup: 20, requests: 0, blocks: 1, stream: false, deadline: performance.now() + 10_000 });
      await sleep(1000);
      for (const [name, p] of s.proxies) tr(name).rss = { idleMb: serviceRssMb(p) };
      const sampler = new RssSampler();
      for (const t of s.targets) {
        if (left() < 20_000) {
          result.partial = true;
          result.notes.push(`throughput/rates for ${t.name} skipped: run time limit`);
          continue;
        }
        const proc = s.proxies.get(t.name) ?? s.mock;
        // The first requests of a fresh process run unoptimized code and pay for its compiles (the
        // gateway's background compiles settle after ~15,000 requests): a figure of their own, not
        // mixed into the rates'. Direct's warms the mock, whose latencies every target's are read against.
        if (plan.warm) {
          log(`  ${t.name}: warm-up`);
          const cpu0 = serviceCpuSeconds(proc);
          const t0 = performance.now();
          const w = await closedLoop(t, plan.warm.concurrency, plan.warm.requests, { until: t0 + plan.warm.maxSeconds * 1000 });
          const sent = w.ok + w.errors;
          tr(t.name).warmup = { requests: sent, seconds: round((performance.now() - t0) / 1000, 1), cpuUsPerReq: ((serviceCpuSeconds(proc) - cpu0) * 1e6) / Math.max(1, sent) };
          await sleep(500);
        }
        // Fixed rates first (ascending) so they see a process not yet bloated by saturation.
        const rates = [];
        sampler.start(s.proxies);
        for (const rate of plan.rates) {
          log(`  ${t.name}: ${rate} req/s`);
          const cpu0 = serviceCpuSeconds(proc);
          const r = await fixedRate(t, {
            rate, durationMs: plan.rateDurationMs, warmupMs: plan.rateWarmupMs, drainMs: plan.drainMs, maxInFlight: 5000,
          });
          const cpuUsPerReq = ((serviceCpuSeconds(proc) - cpu0) * 1e6) / Math.max(1, r.sentAll);
          rates.push({ ...r, cpuUsPerReq });
          await sleep(500);
        }
        const ratesPeak = sampler.stop().get(t.name);
        log(`  ${t.name}: saturation`);
        sampler.start(s.proxies);
        await saturation(t, { connections: plan.satConnections, durationS: plan.satWarmupS, tmpDir });
        tr(t.name).throughput = await saturation(t, { connections: plan.satConnections, durationS: plan.satDurationS, tmpDir });
        const satPeak = sampler.stop().get(t.name);
        await sleep(500);
        tr(t.name).rates = rates;
        const p = s.proxies.get(t.name);
        if (p) {
          await sleep(1500);
          const rss = tr(t.name).rss ?? (tr(t.name).rss = {});
          rss.ratesPeakMb = ratesPeak;
          rss.saturationPeakMb = satPeak;
          rss.afterLoadMb = serviceRssMb(p);
        }
      }
    } finally {
      await stopServices(s);
    }
  } else {
    result.partial = true;
    result.notes.push('throughput/rates skipped: run time limit');
  }

  // ---- held streams (slow chunks)
  if (!opts.phases.includes('streams')) {
    // not asked for
  } else if (left() > 20_000) {
    log(`run ${index}: held streams (upstream ${PROFILES.streams.latencyMs} ms, ${PROFILES.streams.chunkDelayMs} ms between events)`);
    const s = await startServices(PROFILES.streams, opts, join(logDir, 'streams'));
    try {
      const sampler = new RssSampler();
      sampler.start(s.proxies);
      for (const t of s.targets) {
        const levels = [];
        for (const n of plan.streamLevels) {
          if (left() < plan.streamTimeoutMs + 2000) {
            result.partial = true;
            result.notes.push(`streams ${t.name} n=${n} skipped: run time limit`);
            break;
          }
          log(`  ${t.name}: ${n} concurrent streams`);
          const proc = s.proxies.get(t.name);
          const cpu0 = proc && serviceCpuSeconds(proc);
          const r = await heldStreams(t, { n, rampMs: plan.streamRampMs, stallMs: plan.stallMs, firstByteStallMs: plan.firstByteStallMs ?? plan.stallMs, timeoutMs: plan.streamTimeoutMs });
          // The proxy's CPU for the whole level (opening, relaying and closing every stream), per stream.
          if (proc && cpu0 !== undefined) r.cpuMsPerStream = ((serviceCpuSeconds(proc) - cpu0) * 1000) / n;
          levels.push(r);
          await sleep(500);
          // Past the first level that fails badly, higher levels only burn time.
          if (r.completed < n * 0.5) break;
        }
        tr(t.name).streams = levels;
      }
      const peaks = sampler.stop();
      for (const name of s.proxies.keys()) (tr(name).rss ??= {}).streamsPeakMb = peaks.get(name);
    } finally {
      await stopServices(s);
    }
  } else {
    result.partial = true;
    result.notes.push('streams skipped: run time limit');
  }
  return result;
}

function summarizeSamples(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1] : Number.NaN);
  return { p50: at(0.5), p99: at(0.99), mean: sorted.length ? sorted.reduce((s, x) => s + x, 0) / sorted.length : Number.NaN };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const opts = parseOptions();
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) throw new Error(`node >= 24 required (this is ${process.version}); use npm run bench or npx node bench/run.ts`);
  if (opts.render) {
    const saved = JSON.parse(readFileSync(opts.render, 'utf8')) as { machine: Machine; plan: Plan; profiles: typeof PROFILES; runs: RunResult[] };
    const targets = ALL_TARGETS.filter((t) => saved.runs.some((r) => r.targets[t]));
    process.stdout.write('\n' + renderTable(saved.runs, targets) + '\n');
    const docsPath = join(ROOT, 'docs', 'benchmarks.md');
    const jsonName = relative(ROOT, resolve(opts.render));
    writeFileSync(docsPath, renderDocs({ machine: saved.machine, runs: saved.runs, targets, plan: saved.plan, profiles: saved.profiles, jsonName }));
    log(`wrote ${docsPath}`);
    return;
  }
  const base = opts.quick ? QUICK : FULL;
  // The per-run limit was sized for four targets; each extra one needs its share.
  const warm = opts.warmRequests === undefined ? base.warm : opts.warmRequests > 0 ? { ...base.warm!, requests: opts.warmRequests } : undefined;
  const plan: Plan = { ...base, warm, runLimitMs: base.runLimitMs * Math.max(1, opts.targets.length / 4) };
  // Portkey, and autocannon for saturation where wrk is missing: a streams-only run needs neither.
  if (opts.targets.includes('portkey') || (opts.phases.includes('load') && !hasWrk())) await ensurePeers();
  if (opts.targets.includes('litellm')) ensureLiteLLM();
  if (opts.baselineRef) opts.baseline = buildBaseline(opts.baselineRef);
  const machine = machineInfo(opts);
  const stamp = machine.date.replace(/[:.]/g, '-');
  const resultsDir = join(BENCH, 'results');
  const logDir = join(resultsDir, `${stamp}-logs`);
  mkdirSync(logDir, { recursive: true });
  log(`skybridge bench: ${opts.runs} run(s)${opts.quick ? ' (quick)' : ''}, targets ${opts.targets.join(', ')}; ${machine.nproc} cpu, ${machine.node}, load tool ${machine.loadTool}`);
  const hardLimit = setTimeout(() => {
    log('hard time limit reached; exiting');
    process.exit(3);
  }, opts.runs * plan.runLimitMs + 60_000);
  hardLimit.unref();

  const runs: RunResult[] = [];
  for (let i = 1; i <= opts.runs; i++) {
    const r = await oneRun(i, plan, opts, join(logDir, `run${i}`));
    runs.push(r);
    writeFileSync(join(resultsDir, `${stamp}.json`), JSON.stringify({ machine, plan, profiles: PROFILES, runs }, null, 2));
  }
  const table = renderTable(runs, opts.targets);
  process.stdout.write('\n' + table + '\n');
  const jsonPath = join(resultsDir, `${stamp}.json`);
  writeFileSync(jsonPath, JSON.stringify({ machine, plan, profiles: PROFILES, runs }, null, 2));
  log(`results: ${jsonPath}`);
  if (opts.docs) {
    const docsPath = join(ROOT, 'docs', 'benchmarks.md');
    writeFileSync(docsPath, renderDocs({ machine, runs, targets: opts.targets, plan, profiles: PROFILES, jsonName: `bench/results/${stamp}.json` }));
    log(`wrote ${docsPath}`);
  }
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping`);
    process.exit(130); // the 'exit' hook in lib/procs.ts kills the services
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
