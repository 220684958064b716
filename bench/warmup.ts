// How a fresh process's CPU per request falls as its code gets optimized: fresh proxies served in
// alternating rounds at a fixed rate (20 ms mock), each round's CPU per request split by thread
// (/proc/<pid>/task/*/stat), so V8's background compiles and collections show apart from the main
// thread's work. The bench's phases warm every proxy first (bench/run.ts --warm-requests); this
// shows why, and what a new pod pays before it is warm.
//
//   node bench/warmup.ts                                        # floor and gateway, 10 rounds of 5 s at 1,000 req/s
//   node bench/warmup.ts --variants gateway,gateway@--invocation-count-for-turbofan=1000 --rounds 8
//   node bench/warmup.ts --variants gateway,gateway:SKYBRIDGE_MEMORY_TRIM=86400   # one build with an environment variable
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fixedRate, type Target } from './lib/load.ts';
import { freePort, skipBuild, startFloor, startGateway, startMock, stop, type Proc } from './lib/procs.ts';

const { values } = parseArgs({
  options: {
    variants: { type: 'string', default: 'floor,gateway' },
    rounds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '5' },
    'no-build': { type: 'boolean', default: false },
  },
  strict: true,
});
if (values['no-build']) skipBuild();

/** CPU µs so far per thread name (numbered threads such as V8Worker summed), from /proc/<pid>/task. */
function cpuByThread(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000); // USER_HZ ticks
  }
  return out;
}

/** `gateway`, `gateway@--flag …` (node flags), `gateway:NAME=value` (environment), or `floor`. */
async function start(variant: string, upstream: string, dir: string): Promise<Proc> {
  // The floor runs with the gateway's young generation (npm start's --max-semi-space-size=8), so the two differ in code only.
  if (variant === 'floor') return startFloor(upstream, await freePort(), dir, ['--max-semi-space-size=8']);
  const m = /^gateway(?::([A-Z_][A-Z0-9_]*)=([^@]*))?(?:@(.+))?$/.exec(variant);
  if (!m) throw new Error(`--variants: floor, gateway, gateway@--flag or gateway:NAME=value (not ${variant})`);
  return startGateway(upstream, await freePort(), dir, { workers: 1, env: m[1] ? { [m[1]]: m[2] } : {}, nodeFlags: m[3] ? m[3].split(' ') : [] });
}

const dir = mkdtempSync(join(tmpdir(), 'skybridge-warmup-'));
const variants = values.variants.split(',').map((s) => s.trim()).filter(Boolean);
const mock = await startMock({ latencyMs: 20, chunkDelayMs: 5 }, await freePort(), dir);
const upstream = `http://127.0.0.1:${mock.port}/openai`;
const procs: Proc[] = [];
try {
  for (const v of variants) procs.push(await start(v, upstream, dir));
  const target = (p: Proc, v: string): Target => ({
    name: v === 'floor' ? 'floor' : 'gateway', origin: `http://127.0.0.1:${p.port}`, path: '/v1/chat/completions', headers: { authorization: 'Bearer sk-bench' }, model: 'openai/gpt-4o',
  });
  process.stdout.write(`fresh processes, alternating rounds of ${values.seconds} s at ${values.rate} req/s; µs per request, all threads (V8's background threads)\n\n`);
  process.stdout.write(`| round | ${variants.join(' | ')} | load |\n|---|${variants.map(() => '---:|').join('')}---:|\n`);
  for (let r = 0; r < Number(values.rounds); r++) {
    const cells: string[] = [];
    for (const [i, p] of procs.entries()) {
      const before = cpuByThread(p.pid);
      const res = await fixedRate(target(p, variants[i]), { rate: Number(values.rate), durationMs: Number(values.seconds) * 1000, warmupMs: 0, drainMs: 1500, maxInFlight: 5000 });
      let all = 0;
      let background = 0;
      for (const [name, us] of cpuByThread(p.pid)) {
        const d = us - (before.get(name) ?? 0);
        all += d;
        if (name === 'V8Worker') background += d;
      }
      const n = Math.max(1, res.sentAll);
      cells.push(`${Math.round(all / n)} (${Math.round(background / n)})`);
    }
    process.stdout.write(`| ${r + 1} | ${cells.join(' | ')} | ${loadavg()[0].toFixed(2)} |\n`);
  }
} finally {
  for (const p of procs) await stop(p);
  await stop(mock);
}
