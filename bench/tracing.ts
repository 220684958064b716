// CPU per request with tracing off and on: two gateway processes (run from the TypeScript sources,
// as the tests run them: no build step, so the ratio, not the absolute figure, is the result) in
// front of one mock provider, one with the otel plugin exporting every span
// (always_on) over OTLP HTTP/protobuf to a real OpenTelemetry Collector, the other without it. Each
// round drives each gateway at a fixed rate of non-streaming chat calls and reads its CPU time from
// /proc; rounds alternate so a change in the machine's load hits both alike. Each round's on/off
// ratio is shown, and their median is the result (the ratio of the medians beside it), with the
// CPU split into the main thread's user and system time and the other threads' (V8's workers, the
// logs store's SQLite thread). /proc counts CPU in 10 ms ticks: rounds of 20 s or more at 100/s.
//   node bench/tracing.ts [rate=300] [seconds=8] [rounds=3]
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fixedRate, type Target } from './lib/load.ts';
import { freePort, startMock, stop } from './lib/procs.ts';
import { startGateway, type RunningGateway } from '../test/helpers/gateway.ts';
import { startCollector } from '../test/helpers/otel-collector.ts';

const RATE = Number(process.argv[2] ?? 300);
const SECONDS = Number(process.argv[3] ?? 8);
const ROUNDS = Number(process.argv[4] ?? 3);

const dir = mkdtempSync(`${tmpdir()}/skybridge-bench-tracing-`);
const collector = await startCollector();
const mockPort = await freePort();
const mock = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, dir);
const upstream = `http://127.0.0.1:${mockPort}/openai`;

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, USER_HZ 100). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds so far: the main thread's user and system time, and every other thread's user + system. */
function threadSplit(pid: number): { user: number; system: number; others: number } {
  const out = { user: 0, system: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [u, s] = [Number(f[11]) / 100, Number(f[12]) / 100];
    if (Number(tid) === pid) {
      out.user += u;
      out.system += s;
    } else out.others += u + s;
  }
  return out;
}

interface Measured {
  gw: RunningGateway;
  target: Target;
}

async function gateway(config: Record<string, unknown>): Promise<Measured> {
  const gw = await startGateway({ providers: { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: upstream } } }, ...config });
  return { gw, target: { name: 'gateway', origin: gw.url, path: '/v1/chat/completions', headers: {}, model: 'openai/gpt-4o' } };
}

const off = await gateway({});
const on = await gateway({ plugins: [{ name: 'otel', enabled: true, config: { collector_url: collector.httpUrl, protocol: 'http', trace_type: 'otel', sampler: 'always_on' } }] });

interface Round {
  /** CPU per request sent, µs: all of it, and the main thread's user and system, the other threads'. */
  total: number;
  user: number;
  system: number;
  others: number;
}

async function round(g: Measured): Promise<Round> {
  const pid = g.gw.process.pid!;
  const cpu0 = cpuSeconds(pid);
  const split0 = threadSplit(pid);
  const r = await fixedRate(g.target, { rate: RATE, durationMs: SECONDS * 1000, warmupMs: 1000, drainMs: 1500, maxInFlight: 256 });
  const split1 = threadSplit(pid);
  // A loaded machine times some requests out: counted and shown, the CPU is per request sent.
  if (r.errors > 0) console.log(`  ${r.errors} of ${r.sentAll} requests failed`);
  const per = (s: number) => (s * 1e6) / Math.max(1, r.sentAll);
  return {
    total: per(cpuSeconds(pid) - cpu0),
    user: per(split1.user - split0.user),
    system: per(split1.system - split0.system),
    others: per(split1.others - split0.others),
  };
}

const show = (r: Round) => `${r.total.toFixed(0)} us (main user ${r.user.toFixed(0)}, system ${r.system.toFixed(0)}, other threads ${r.others.toFixed(0)})`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results = { off: [] as number[], on: [] as number[] };
const ratios: number[] = [];
try {
  // One warm-up round each (JIT, connection pools), not counted.
  await round(off);
  await round(on);
  for (let i = 0; i < ROUNDS; i++) {
    // Alternating which goes first, so neither always runs right after the other's load.
    let x: Round, y: Round;
    if (i % 2) {
      y = await round(on);
      x = await round(off);
    } else {
      x = await round(off);
      y = await round(on);
    }
    results.off.push(x.total);
    results.on.push(y.total);
    ratios.push(y.total / x.total);
    console.log(`round ${i + 1}: off ${show(x)}; on ${show(y)}; on/off ${ratios.at(-1)!.toFixed(3)}`);
  }
  const [a, b] = [median(results.off), median(results.on)];
  const pct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`;
  console.log(`median CPU per request at ${RATE}/s: tracing off ${a.toFixed(0)} us, on ${b.toFixed(0)} us: ${pct(b / a)}`);
  console.log(`median of the per-round on/off ratios: ${median(ratios).toFixed(3)} (${pct(median(ratios))}); rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}`);
  const spans = collector.spans().length;
  console.log(`spans the collector received: ${spans}`);
} finally {
  await Promise.all([off.gw.stop(), on.gw.stop(), stop(mock)]);
  await collector.stop();
}
