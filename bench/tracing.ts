// CPU per request with tracing off and on: two gateway processes (the compiled JavaScript, as
// `npm start` runs it) in front of one mock provider, one with the otel plugin exporting every span
// (always_on) over OTLP HTTP/protobuf to a real OpenTelemetry Collector, the other without it. Each
// round drives each gateway at a fixed rate of non-streaming chat calls and reads its CPU time from
// /proc; rounds alternate so a change in the machine's load hits both alike.
//   node bench/tracing.ts [rate=300] [seconds=8] [rounds=3]
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedRate, type Target } from './lib/load.ts';
import { freePort, serviceCpuSeconds, startGateway, startMock, stop, type Proc } from './lib/procs.ts';
import { startCollector } from '../test/helpers/otel-collector.ts';

const RATE = Number(process.argv[2] ?? 300);
const SECONDS = Number(process.argv[3] ?? 8);
const ROUNDS = Number(process.argv[4] ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'skybridge-bench-tracing-'));
const collector = await startCollector();
const mockPort = await freePort();
const mock = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, dir);
const upstream = `http://127.0.0.1:${mockPort}/openai`;

async function gateway(name: string, config: Record<string, unknown>): Promise<{ proc: Proc; target: Target }> {
  const logDir = join(dir, name);
  mkdirSync(logDir);
  const port = await freePort();
  const proc = await startGateway(upstream, port, logDir, { workers: 1, config });
  return { proc, target: { name: 'gateway', origin: `http://127.0.0.1:${port}`, path: '/v1/chat/completions', headers: {}, model: 'openai/gpt-4o' } };
}

const off = await gateway('off', {});
const on = await gateway('on', { plugins: [{ name: 'otel', enabled: true, config: { collector_url: collector.httpUrl, protocol: 'http', trace_type: 'otel', sampler: 'always_on' } }] });

async function round(g: { proc: Proc; target: Target }): Promise<number> {
  const cpu0 = serviceCpuSeconds(g.proc);
  const r = await fixedRate(g.target, { rate: RATE, durationMs: SECONDS * 1000, warmupMs: 1000, drainMs: 1500, maxInFlight: 256 });
  if (r.errors > 0) throw new Error(`${r.errors} failed requests`);
  return ((serviceCpuSeconds(g.proc) - cpu0) * 1e6) / Math.max(1, r.sentAll);
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
  await Promise.all([stop(off.proc), stop(on.proc), stop(mock)]);
  await collector.stop();
}
