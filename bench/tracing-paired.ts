// Tracing's CPU cost measured in pairs, for a loaded machine: the gateway without tracing and the
// one exporting every span (always_on, OTLP HTTP/protobuf to a real collector) are driven at the
// same time, at the same rate, so a change of the machine's load hits both in the same window; each
// round gives the ratio of their CPU per request (from /proc), and the result is the median ratio.
// bench/tracing.ts alternates the two instead (fine on a quiet machine).
//   node bench/tracing-paired.ts [rate=15] [seconds=6] [rounds=7]
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fixedRate } from './lib/load.ts';
import { freePort, startMock, stop } from './lib/procs.ts';
import { startGateway } from '../test/helpers/gateway.ts';
import { startCollector } from '../test/helpers/otel-collector.ts';

const [rateArg, secArg, roundsArg] = process.argv.slice(2);
const RATE = Number(rateArg ?? 15), SECONDS = Number(secArg ?? 6), ROUNDS = Number(roundsArg ?? 7);
const dir = mkdtempSync(`${tmpdir()}/obs-pair-`);
const collector = await startCollector();
const mockPort = await freePort();
const mock = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, dir);
const providers = { openai: { keys: [{ name: 'k', value: 'sk-bench', weight: 1 }], network_config: { base_url: `http://127.0.0.1:${mockPort}/openai` } } };
const off = await startGateway({ providers });
const on = await startGateway({ providers, plugins: [{ name: 'otel', enabled: true, config: { collector_url: collector.httpUrl, protocol: 'http', trace_type: 'otel', sampler: 'always_on' } }] });
/** User + system CPU seconds of a process so far (/proc/<pid>/stat, USER_HZ 100). */
function cpu(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const target = (url: string) => ({ name: 'gateway' as const, origin: url, path: '/v1/chat/completions', headers: {}, model: 'openai/gpt-4o' });
async function round() {
  const c0 = [cpu(off.process.pid), cpu(on.process.pid)];
  const opts = { rate: RATE, durationMs: SECONDS * 1000, warmupMs: 500, drainMs: 1500, maxInFlight: 256 };
  const [a, b] = await Promise.all([fixedRate(target(off.url), opts), fixedRate(target(on.url), opts)]);
  const offUs = ((cpu(off.process.pid) - c0[0]) * 1e6) / Math.max(1, a.sentAll);
  const onUs = ((cpu(on.process.pid) - c0[1]) * 1e6) / Math.max(1, b.sentAll);
  return { offUs, onUs, ratio: onUs / offUs, errors: a.errors + b.errors };
}
// One round each way first, not counted (JIT, connection pools).
await round();
const ratios: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const r = await round();
  ratios.push(r.ratio);
  console.log(`round ${i + 1}: off ${r.offUs.toFixed(0)} us, on ${r.onUs.toFixed(0)} us, ratio ${r.ratio.toFixed(3)}${r.errors ? `, ${r.errors} errors` : ''}`);
}
const med = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)];
console.log(`median on/off ratio: ${med.toFixed(3)} (+${((med - 1) * 100).toFixed(1)}%)`);
await Promise.all([off.stop(), on.stop(), stop(mock)]);
await collector.stop();
