// Where the gateway's memory goes, for docs/benchmarks.md:
//
//   node bench/memory.ts imports            RSS after importing each group of modules, cumulatively
//                                           (fresh process per step, full GC before reading)
//   node bench/memory.ts run [options]      the built gateway (dist/, as `npm start` runs it) under
//                                           configurations and node flags: idle RSS (1 s and 33 s
//                                           after 20 requests), RSS at and after saturation, the
//                                           throughput reached
//     --configs plain,logging,...           see CONFIGS (default plain)
//     --flags "A|B"                         node flag sets to compare, `|`-separated ("" = npm start's)
//     --env "MALLOC_ARENA_MAX=2|"           environment sets to compare, `|`-separated
//     --seconds 10  --connections 128       saturation (closed loop, 20 ms upstream)
//     --root DIR                            another checkout's build (e.g. bench/.peers/baseline-<commit>)
//     --no-build                            measure dist/ as it is
//
// Saturation here is this process's own undici clients (no wrk or autocannon needed); its figures
// compare configurations within one run, not with the main table's.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { body } from './lib/load.ts';
import { freePort, ROOT, rssMb, skipBuild, startGateway, startMock, stop, type Proc } from './lib/procs.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- imports

const DIST = join(ROOT, 'dist/proxy/src');
/** Cumulative: each step imports its modules on top of every earlier step's. */
const STEPS: { name: string; modules: string[] }[] = [
  { name: 'node, an HTTP server', modules: ['node:http'] },
  { name: 'node builtins the gateway uses (crypto, zlib, http2, worker_threads, cluster)', modules: ['node:crypto', 'node:zlib', 'node:http2', 'node:worker_threads', 'node:cluster'] },
  { name: 'undici', modules: ['undici'] },
  { name: 'ajv, ajv-formats, TypeBox', modules: ['ajv', 'ajv-formats', '@sinclair/typebox'] },
  { name: 'prom-client', modules: ['prom-client'] },
  { name: 'schemas and the config check', modules: [`${DIST}/config/check.js`] },
  { name: 'the snapshot compiler (providers, routing, governance runtime)', modules: [`${DIST}/config/snapshot.js`] },
  { name: 'services and stages', modules: [`${DIST}/services.js`] },
  { name: 'the route table (operations, endpoints)', modules: [`${DIST}/routes.js`] },
  { name: 'gateway.ts: everything else loaded at start', modules: [`${DIST}/gateway.js`] },
];
/** Each on top of all the steps: what a subsystem costs once it is used. */
const OPTIONAL: { name: string; modules: string[] }[] = [
  { name: 'management API (express; first /api request)', modules: [`${DIST}/api/app.js`] },
  { name: 'Kubernetes client (--kube-namespace)', modules: ['@kubernetes/client-node'] },
  { name: 'MCP SDK (an MCP client configured)', modules: ['@modelcontextprotocol/sdk/client/index.js', '@modelcontextprotocol/sdk/client/streamableHttp.js'] },
  { name: 'Redis client', modules: ['redis'] },
  { name: 'PostgreSQL client', modules: ['pg'] },
  { name: 'CEL and RE2 (routing rules)', modules: ['@marcbachmann/cel-js', 're2js'] },
  { name: 'YAML (skills)', modules: ['yaml'] },
];

function measureImports(modules: string[]): { rssMb: number; heapMb: number } {
  const code = `${modules.map((m) => `await import(${JSON.stringify(m)});`).join('')}
globalThis.gc(); globalThis.gc();
await new Promise((r) => setTimeout(r, 200));
globalThis.gc();
const v8 = await import('node:v8');
const h = v8.getHeapStatistics();
const status = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');
process.stdout.write(JSON.stringify({ rssMb: Number(/VmRSS:\\s+(\\d+)/.exec(status)[1]) / 1024, heapMb: h.used_heap_size / 2 ** 20 }));`;
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=8', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`importing ${modules.join(', ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { rssMb: number; heapMb: number };
}

function imports(): void {
  const median3 = (modules: string[]) => {
    const xs = [measureImports(modules), measureImports(modules), measureImports(modules)].sort((a, b) => a.rssMb - b.rssMb);
    return xs[1];
  };
  const rows: string[] = ['| step (cumulative) | RSS MB | + MB | V8 heap used MB |', '|---|---:|---:|---:|'];
  let all: string[] = [];
  let prev = 0;
  for (const step of STEPS) {
    all = [...all, ...step.modules];
    const m = median3(all);
    rows.push(`| ${step.name} | ${m.rssMb.toFixed(1)} | ${prev ? `+${(m.rssMb - prev).toFixed(1)}` : ''} | ${m.heapMb.toFixed(1)} |`);
    prev = m.rssMb;
  }
  rows.push('', '| used only when configured (on top of the above) | RSS MB | + MB | V8 heap used MB |', '|---|---:|---:|---:|');
  for (const opt of OPTIONAL) {
    const m = median3([...all, ...opt.modules]);
    rows.push(`| ${opt.name} | ${m.rssMb.toFixed(1)} | +${(m.rssMb - prev).toFixed(1)} | ${m.heapMb.toFixed(1)} |`);
  }
  process.stdout.write(rows.join('\n') + '\n');
}

// ---------------------------------------------------------------- gateway runs

const CONFIGS: Record<string, Record<string, unknown>> = {
  // One provider, no logging, no cache, no governance.
  plain: { client: { enable_logging: false } },
  logging: { client: { enable_logging: true, disable_content_logging: true } },
  'logging-content': { client: { enable_logging: true } },
};

/** Resident memory by kind, from /proc/<pid>/smaps_rollup (MB). */
function smaps(pid: number): { anon: number; file: number } {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t)?.[1] ?? 0) / 1024;
    return { anon: kb('Anonymous'), file: kb('Rss') - kb('Anonymous') };
  } catch {
    return { anon: 0, file: 0 };
  }
}

async function saturate(origin: string, connections: number, seconds: number, pid: number): Promise<{ rps: number; peakMb: number }> {
  const pool = new Pool(origin, { connections, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const payload = body({ name: 'gateway', origin, path: '/v1/chat/completions', headers: {}, model: 'openai/gpt-4o' }, false);
  let done = 0;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      try {
        const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: payload });
        await res.body.dump();
        if (res.statusCode === 200) done++;
      } catch {
        // counted as not done
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  clearInterval(sampler);
  await pool.destroy();
  return { rps: done / seconds, peakMb: Math.max(peak, rssMb(pid)) };
}

async function run(values: { configs: string; flags: string; env: string; seconds: string; connections: string; root?: string }): Promise<void> {
  const configs = values.configs.split(',');
  const flagSets = values.flags.split('|');
  const envSets = values.env.split('|');
  const logDir = mkdtempSync(join(tmpdir(), 'skybridge-memory-'));
  const mockPort = await freePort();
  const mock = await startMock({ latencyMs: 20, chunkDelayMs: 5 }, mockPort, logDir);
  const rows = ['| config | node flags | env | idle MB (1 s) | idle MB (33 s quiet) | saturation peak MB | 2 s after MB | 10 s after MB | anon / file MB after | req/s |', '|---|---|---|---:|---:|---:|---:|---:|---|---:|'];
  try {
    for (const config of configs) {
      for (const flags of flagSets) {
        for (const envSet of envSets) {
          const env = Object.fromEntries(envSet.split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string]));
          const port = await freePort();
          const dir = join(logDir, `${config}-${port}`);
          mkdirSync(dir, { recursive: true });
          const g: Proc = await startGateway(`http://127.0.0.1:${mockPort}/openai`, port, dir, {
            workers: 1, config: CONFIGS[config] ?? {}, nodeFlags: flags.split(/\s+/).filter(Boolean), env, ...(values.root && { root: values.root }),
          });
          try {
            const origin = `http://127.0.0.1:${port}`;
            for (let i = 0; i < 20; i++) {
              const res = await request(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body({ name: 'gateway', origin, path: '', headers: {}, model: 'openai/gpt-4o' }, i % 2 === 0) });
              await res.body.dump();
            }
            await sleep(1000);
            const idle = rssMb(g.pid);
            // Idle as a gateway between uses sits: past V8's memory reducer delay (8 s) and the
            // gateway's one trim after its first traffic (30 s quiet). The 1 s reading is the
            // first requests' transient (what they loaded and compiled grew the young generation).
            await sleep(32_000);
            const idleQuiet = rssMb(g.pid);
            const sat = await saturate(origin, Number(values.connections), Number(values.seconds), g.pid);
            await sleep(2000);
            const after2 = rssMb(g.pid);
            await sleep(8000);
            const after10 = rssMb(g.pid);
            const k = smaps(g.pid);
            rows.push(`| ${config} | ${flags || '(npm start)'} | ${envSet || '-'} | ${idle.toFixed(1)} | ${idleQuiet.toFixed(1)} | ${sat.peakMb.toFixed(1)} | ${after2.toFixed(1)} | ${after10.toFixed(1)} | ${k.anon.toFixed(0)} / ${k.file.toFixed(0)} | ${Math.round(sat.rps)} |`);
            process.stderr.write(rows.at(-1) + '\n');
          } finally {
            await stop(g);
          }
        }
      }
    }
  } finally {
    await stop(mock);
  }
  process.stdout.write(rows.join('\n') + '\n');
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    configs: { type: 'string', default: 'plain' },
    flags: { type: 'string', default: '' },
    env: { type: 'string', default: '' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '128' },
    root: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});
if (values['no-build']) skipBuild();
if (positionals[0] === 'imports') imports();
else if (positionals[0] === 'run') await run(values);
else {
  process.stderr.write('usage: node bench/memory.ts imports | run [--configs plain,logging] [--flags "A|B"] [--env "K=V|"] [--seconds 10] [--connections 128] [--no-build]\n');
  process.exit(2);
}
