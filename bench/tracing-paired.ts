// Tracing's CPU cost per request, measured so that a busy or drifting machine cannot fake it.
//
// Three gateways of the same build run side by side, started alike (the compiled dist/ with the
// node flags of `npm start`, `--log-level warn`, the same config.json but for the otel plugin):
//   off-a, off-b  tracing off (no otel plugin);
//   on            the otel plugin exporting every span (always_on) over OTLP HTTP/protobuf to a
//                 real OpenTelemetry Collector (test/helpers/otel-collector.ts).
// One open-loop client sends a non-streaming chat call to each of the three in the same tick, at
// the same fixed rate for all (100 calls/s each by default), without pause for the whole run; the
// order of the three within a tick rotates each round, so none is always served first. A round is a
// window of that steady load: each process's CPU (user + system of all its threads, in ns from
// /proc/<pid>/task/*/schedstat) over the window, divided by the calls it answered in the window. All
// three are measured over the same window, so whatever the machine does in it hits all three. A
// round in which a gateway fell behind (failures, or answers short of calls sent by over 10%) is
// left out and counted: a gateway that cannot keep the rate is not measured at it.
// Per round two ratios: A/A = off-b / off-a (the method's own error: 1.00 if it resolves), and
// on/off = on / mean(off-a, off-b). The result is the median of each over the rounds with its
// interquartile range. A method whose A/A median is not within ±3% of 1.00 cannot resolve a 10% cost.
//   node bench/tracing-paired.ts [--rate 100] [--seconds 10] [--rounds 21] [--warmup 15]
//                                [--logging] [--no-build] [--cpu-prof DIR] [--check]
// --logging turns request logs on in all three (off by default, as the plain gateway of
// docs/benchmarks.md); --cpu-prof writes a V8 CPU profile of each gateway into DIR (stopped at the end);
// --check exits 1 unless the A/A median is within ±3% of 1.00 and the on/off median at most 1.10
// (issue 24's target), so the target can be re-checked after a change.
// About 5 minutes with the defaults (after `npm run build`, which it runs unless --no-build).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { body, type Target } from './lib/load.ts';
import { freePort, skipBuild, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { startCollector } from '../test/helpers/otel-collector.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '21' },
    warmup: { type: 'string', default: '15' },
    logging: { type: 'boolean', default: false },
    build: { type: 'boolean', default: true },
    'cpu-prof': { type: 'string' },
    check: { type: 'boolean', default: false },
  },
  allowNegative: true,
});
const RATE = Number(values.rate), SECONDS = Number(values.seconds), ROUNDS = Number(values.rounds), WARMUP = Number(values.warmup);
for (const [k, v] of Object.entries({ rate: RATE, seconds: SECONDS, rounds: ROUNDS, warmup: WARMUP })) {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${k} must be a positive number, got '${values[k as keyof typeof values]}'`);
}
if (!values.build) skipBuild();

/**
 * CPU seconds (user + system) of a process so far: the sum over its threads of the scheduler's
 * time on a CPU (/proc/<pid>/task/<tid>/schedstat, in ns). /proc/<pid>/stat counts 10 ms ticks,
 * ±2% of a 10 s round at 500 µs per call; Node's threads live as long as the process.
 */
function cpuSeconds(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e9;
}

/** Median and quartiles (linear interpolation between order statistics). */
function quartiles(xs: number[]): { q1: number; med: number; q3: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => {
    const i = q * (s.length - 1);
    const lo = Math.floor(i);
    return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (i - lo);
  };
  return { q1: at(0.25), med: at(0.5), q3: at(0.75) };
}

const dir = mkdtempSync(`${tmpdir()}/skybridge-bench-tracing-paired-`);
const collector = await startCollector();
// Ctrl-C: procs.ts kills the gateways and the mock on exit; the collector is stopped here.
process.once('SIGINT', () => void collector.stop().finally(() => process.exit(130)));
const mockPort = await freePort();
const mock = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, dir);
const upstream = `http://127.0.0.1:${mockPort}/openai`;
const otel = { name: 'otel', enabled: true, config: { collector_url: collector.httpUrl, protocol: 'http', trace_type: 'otel', sampler: 'always_on' } };
// The shared part of the three configs; startGateway adds the provider and the client section.
const common = { client: { enable_logging: values.logging } };
const nodeFlags = (name: string) => (values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}/${name}`] : []);

interface Gw {
  name: 'tracing-off-a' | 'tracing-off-b' | 'tracing-on';
  proc: Proc;
  pool: Pool;
  target: Target;
  payload: string;
  sent: number;
  /** Answers received (200 or not). */
  done: number;
  errors: number;
  /** Failures by status code or error code. */
  why: Record<string, number>;
}

async function gateway(name: Gw['name'], config: Record<string, unknown>): Promise<Gw> {
  const port = await freePort();
  const proc = await startGateway(upstream, port, dir, { workers: 1, name, config, nodeFlags: nodeFlags(name) });
  const target: Target = { name: 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: {}, model: 'openai/gpt-4o' };
  const pool = new Pool(target.origin, { connections: 256, headersTimeout: 10_000, bodyTimeout: 10_000, keepAliveTimeout: 60_000 });
  return { name, proc, pool, target, payload: body(target, false), sent: 0, done: 0, errors: 0, why: {} };
}

const gws: Gw[] = [];
let stopLoad = () => {};
try {
  // Started one after the other (the build runs once, before the first); the order has no effect
  // on the rounds, which all three share.
  gws.push(await gateway('tracing-off-a', common), await gateway('tracing-off-b', common), await gateway('tracing-on', { ...common, plugins: [otel] }));
  const [offA, offB, on] = gws as [Gw, Gw, Gw];
  console.log(
    `3 gateways (dist/, same node flags and config but the otel plugin on the third), ${RATE} calls/s each, ` +
      `${ROUNDS} rounds of ${SECONDS} s after ${WARMUP} s of warm-up, request logs ${values.logging ? 'on' : 'off'}, ` +
      `load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );

  let order: Gw[] = [offA, offB, on];
  const failed = (g: Gw, why: string) => {
    g.errors++;
    g.why[why] = (g.why[why] ?? 0) + 1;
  };
  const fire = (g: Gw) => {
    g.sent++;
    g.pool
      .request({ method: 'POST', path: g.target.path, headers: { 'content-type': 'application/json' }, body: g.payload })
      .then(async (res) => {
        await res.body.dump();
        g.done++;
        if (res.statusCode !== 200) failed(g, String(res.statusCode));
      })
      .catch((e: Error & { code?: string }) => failed(g, e.code ?? e.message));
  };
  // Open loop: tick i is due at start + i/rate whatever came back; a late timer fires what is due.
  {
    const interval = 1000 / RATE;
    const start = performance.now();
    let i = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      while (start + i * interval <= now) {
        for (const g of order) fire(g);
        i++;
      }
    }, 1);
    stopLoad = () => clearInterval(timer);
  }

  await new Promise((r) => setTimeout(r, WARMUP * 1000));
  const rows: { us: number[]; aa: number; onOff: number }[] = [];
  let dropped = 0;
  for (let r = 0; r < ROUNDS; r++) {
    order = [...gws.slice(r % 3), ...gws.slice(0, r % 3)];
    const [sent0, done0, err0] = [gws.map((g) => g.sent), gws.map((g) => g.done), gws.map((g) => g.errors)];
    const cpu0 = gws.map((g) => cpuSeconds(g.proc.pid));
    await new Promise((res) => setTimeout(res, SECONDS * 1000));
    const cpu1 = gws.map((g) => cpuSeconds(g.proc.pid));
    // Per call answered in the window: the work done in it (what is queued at either end of the
    // window moves with the machine's load, the same calls sent to each).
    const answered = gws.map((g, i) => g.done - done0[i]!);
    const us = gws.map((_, i) => ((cpu1[i]! - cpu0[i]!) * 1e6) / Math.max(1, answered[i]!));
    const [a, b, o] = us as [number, number, number];
    const line = `round ${String(r + 1).padStart(2)} (first: ${order[0]!.name}): off-a ${a.toFixed(0)} us, off-b ${b.toFixed(0)} us, on ${o.toFixed(0)} us per call`;
    // A gateway that fell behind (failures, or its queue grew by a tenth of the window's calls) is
    // not running at the rate asked: the round is left out.
    const behind = gws
      .map((g, i) => ({ g, answered: answered[i]!, sent: g.sent - sent0[i]!, failed: g.errors - err0[i]! }))
      .filter((x) => x.answered < 0.9 * x.sent || x.failed > 0);
    if (behind.length) {
      dropped++;
      console.log(`${line}; left out: ${behind.map((x) => `${x.g.name} answered ${x.answered} of ${x.sent}, ${x.failed} failed`).join('; ')}`);
      continue;
    }
    rows.push({ us, aa: b / a, onOff: o / ((a + b) / 2) });
    console.log(`${line}; A/A ${rows.at(-1)!.aa.toFixed(3)}, on/off ${rows.at(-1)!.onOff.toFixed(3)}`);
  }
  if (rows.length === 0) {
    console.log(`failed: ${gws.map((g) => `${g.name} ${JSON.stringify(g.why)}`).join(', ')}`);
    throw new Error(`every round was left out: the machine could not serve 3 x ${RATE} calls/s`);
  }
  stopLoad();
  await new Promise((r) => setTimeout(r, 1500)); // the last answers and the last span batch

  const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`;
  const show = (label: string, xs: number[]) => {
    const q = quartiles(xs);
    console.log(`${label}: median ${q.med.toFixed(3)} (${pct(q.med)}), interquartile range ${q.q1.toFixed(3)}–${q.q3.toFixed(3)}`);
    return q;
  };
  const medUs = gws.map((_, i) => quartiles(rows.map((x) => x.us[i]!)).med);
  console.log(`median CPU per call: off-a ${medUs[0]!.toFixed(0)} us, off-b ${medUs[1]!.toFixed(0)} us, on ${medUs[2]!.toFixed(0)} us`);
  const aa = show('A/A   (off-b / off-a)      ', rows.map((x) => x.aa));
  const onOff = show('on/off (on / mean of offs) ', rows.map((x) => x.onOff));
  const resolves = Math.abs(aa.med - 1) <= 0.03;
  if (!resolves) console.log('A/A median is off 1.00 by more than 3%: this run cannot resolve a 10% cost');
  console.log(`rounds counted ${rows.length} of ${ROUNDS}${dropped ? ` (${dropped} left out)` : ''}; calls sent per gateway ${on.sent}; failed: ${gws.map((g) => `${g.name} ${g.errors}${g.errors ? ` ${JSON.stringify(g.why)}` : ''}`).join(', ')}`);
  console.log(`spans the collector received: ${(collector.raw().match(/"spanId":/g) ?? []).length}`);
  if (values.check && !(resolves && onOff.med <= 1.1)) {
    console.log(resolves ? `check failed: tracing costs ${pct(onOff.med)} CPU per call, more than 10%` : 'check failed: the run did not resolve 10% (A/A)');
    process.exitCode = 1;
  }
} finally {
  stopLoad();
  await Promise.all(gws.map(async (g) => (await g.pool.destroy().catch(() => {}), await stop(g.proc))));
  await stop(mock);
  await collector.stop();
}
