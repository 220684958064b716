// CPU per request with tracing off and on: two gateway processes (run from the TypeScript sources,
// as the tests run them: no build step, so the ratio, not the absolute figure, is the result) in
// front of one mock provider, one with the otel plugin exporting every span
// (always_on) over OTLP HTTP/protobuf to a real OpenTelemetry Collector, the other without it. Each
// round drives each gateway at a fixed rate of non-streaming chat calls and reads its CPU time from
// /proc; rounds alternate so a change in the machine's load hits both alike.
//   node bench/tracing.ts [rate=300] [seconds=8] [rounds=3]
import { mkdtempSync, readFileSync } from 'node:fs';
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

async function round(g: Measured): Promise<number> {
  const pid = g.gw.process.pid!;
  const cpu0 = cpuSeconds(pid);
  const r = await fixedRate(g.target, { rate: RATE, durationMs: SECONDS * 1000, warmupMs: 1000, drainMs: 1500, maxInFlight: 256 });
  // A loaded machine times some requests out: counted and shown, the CPU is per request sent.
  if (r.errors > 0) console.log(`  ${r.errors} of ${r.sentAll} requests failed`);
  return ((cpuSeconds(pid) - cpu0) * 1e6) / Math.max(1, r.sentAll);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results = { off: [] as number[], on: [] as number[] };
try {
  // One warm-up round each (JIT, connection pools), not counted.
  await round(off);
  await round(on);
  for (let i = 0; i < ROUNDS; i++) {
    results.off.push(await round(off));
    results.on.push(await round(on));
    console.log(`round ${i + 1}: off ${results.off.at(-1)!.toFixed(0)} us/request, on ${results.on.at(-1)!.toFixed(0)} us/request`);
  }
  const [a, b] = [median(results.off), median(results.on)];
  console.log(`median CPU per request at ${RATE}/s: tracing off ${a.toFixed(0)} us, on ${b.toFixed(0)} us: +${(((b - a) / a) * 100).toFixed(1)}%`);
  const spans = collector.spans().length;
  console.log(`spans the collector received: ${spans}`);
} finally {
  await Promise.all([off.gw.stop(), on.gw.stop(), stop(mock)]);
  await collector.stop();
}
