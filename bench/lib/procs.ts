// Starting, watching and stopping the processes under test. Every process is a child of the
// harness, listens on 127.0.0.1 only, and is stopped by its own pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync, closeSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { freePort } from '../../test/helpers/ports.ts';
export { freePort };

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const BENCH = join(ROOT, 'bench');
export const PEERS = join(BENCH, '.peers');
const NODE = process.execPath;

/** Children still running; killed by pid if the harness exits early (time limit, error, Ctrl-C). */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  port: number;
  logFile: string;
  /** Every pid of the service (a cluster primary and its workers); used for RSS. */
  pids(): number[];
}


function descendants(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    let kids = '';
    try {
      kids = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const k of kids.split(/\s+/).filter(Boolean)) {
      const child = Number(k);
      out.push(child, ...descendants(child));
    }
  }
  return out;
}

/** VmRSS in MB of one pid (0 when it is gone). */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Summed RSS (MB) of a service: the process and all its descendants. */
export function serviceRssMb(p: Proc): number {
  return p.pids().reduce((s, pid) => s + rssMb(pid), 0);
}

/** CPU time (user + system, seconds) of a service so far, from /proc/<pid>/stat. */
export function serviceCpuSeconds(p: Proc): number {
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of p.pids()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / tick;
    } catch {
      // gone
    }
  }
  return total;
}

interface SpawnOpts {
  name: string;
  args: string[];
  port: number;
  logDir: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** GET this path until any HTTP answer arrives. */
  readyPath: string;
  nodeFlags?: string[];
  /** A program other than node (a Python peer); `nodeFlags` do not apply. */
  command?: string;
  /** A program node runs under, with its arguments (valgrind …). */
  wrap?: string[];
  readyTimeoutMs?: number;
}

async function spawnService(o: SpawnOpts): Promise<Proc> {
  mkdirSync(o.logDir, { recursive: true });
  const logFile = join(o.logDir, `${o.name}.log`);
  const fd = openSync(logFile, 'a');
  const argv = o.command ? o.args : [...(o.wrap ? [...o.wrap.slice(1), NODE] : []), ...(o.nodeFlags ?? []), ...o.args];
  const child = spawn(o.command ?? o.wrap?.[0] ?? NODE, argv, {
    cwd: o.cwd ?? ROOT,
    env: { ...process.env, ...o.env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`${o.name}: spawn failed`);
  live.add(child);
  child.once('exit', () => live.delete(child));
  const pid = child.pid;
  const proc: Proc = { name: o.name, pid, child, port: o.port, logFile, pids: () => [pid, ...descendants(pid)] };
  // Under a wrapper (valgrind) a start takes minutes.
  await waitReady(proc, o.readyPath, o.readyTimeoutMs ?? (o.wrap ? 300_000 : undefined));
  return proc;
}

/** A start slower than this is a failed start; a busy machine (a build beside the run) took over 20 s. */
async function waitReady(p: Proc, path: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.child.exitCode !== null) break;
    try {
      const res = await request(`http://127.0.0.1:${p.port}${path}`, { headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const tail = existsSync(p.logFile) ? readFileSync(p.logFile, 'utf8').slice(-2000) : '';
  await stop(p);
  throw new Error(`${p.name} did not become ready on port ${p.port} (exit ${p.child.exitCode})\n${tail}`);
}

/** SIGTERM, then SIGKILL after a grace period. Only ever signals this child's own pid. */
export async function stop(p: Proc, graceMs = 5000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') {
    p.child.kill('SIGKILL');
    await exited;
  }
}

// ---------------------------------------------------------------- the services

export interface MockProfile {
  latencyMs: number;
  chunkDelayMs: number;
}

export function startMock(profile: MockProfile, port: number, logDir: string, nodeFlags?: string[]): Promise<Proc> {
  return spawnService({
    nodeFlags,
    name: 'mock',
    args: [
      join(ROOT, 'test/mock-provider/main.ts'), '--port', String(port), '--host', '127.0.0.1',
      '--latency', String(profile.latencyMs), '--chunk-delay', String(profile.chunkDelayMs),
      // Keep one recorded request: the mock's history is a test aid, not something to benchmark.
      '--max-recorded', '1',
    ],
    port,
    logDir,
    readyPath: '/_mock/health',
  });
}

export function startFloor(upstream: string, port: number, logDir: string, nodeFlags?: string[], wrap?: string[]): Promise<Proc> {
  return spawnService({
    name: 'floor',
    args: [join(BENCH, 'floor.ts'), '--port', String(port), '--host', '127.0.0.1', '--upstream', upstream],
    port,
    logDir,
    readyPath: '/health',
    nodeFlags,
    wrap,
  });
}

export interface GatewayOptions {
  /** Worker processes. 1 = the plain single-process gateway (the only mode so far). */
  workers: number;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=...']. */
  nodeFlags?: string[];
  /** Extra top-level config (governance, redis) and the service name for logs. */
  config?: Record<string, unknown>;
  name?: 'gateway' | 'baseline' | 'logging' | 'logging-pg' | 'cache-hit' | 'cache-bypass' | 'governed' | 'governed-redis'
    | 'tracing-off-a' | 'tracing-off-b' | 'tracing-on';
  /** A checkout built by buildBaseline (default: this one). */
  root?: string;
  /** Extra environment, e.g. MALLOC_ARENA_MAX. */
  env?: NodeJS.ProcessEnv;
  /** A program node runs under, with its arguments (valgrind …). */
  wrap?: string[];
}

/** The virtual key the governed targets send. */
export const BENCH_VK = 'sk-bf-bench-0123456789';

/**
 * A fully governed request: a virtual key with provider configs, a budget and a rate limit on
 * the key and its team, and ten CEL routing rules in scope that all evaluate and none match, so
 * every request pays for the whole chain.
 */
export function governedConfig(): Record<string, unknown> {
  const rules = Array.from({ length: 10 }, (_, i) => ({
    name: `rule-${i}`,
    scope: i < 5 ? 'virtual_key' : 'global',
    ...(i < 5 && { scope_id: 'bench-vk' }),
    priority: i,
    cel_expression: [
      `headers["x-tier-${i}"] == "premium"`,
      `model.startsWith("claude-") && request > 90.0`,
      `params["region"] in ["eu", "uk"]`,
      `budget_used > 95.0 || tokens_used > 95.0`,
      `request_type == "embedding" && headers["x-batch"] == "1"`,
    ][i % 5],
    targets: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1 }],
  }));
  return {
    governance: {
      budgets: [{ id: 'vk-budget', max_limit: 1e9, reset_duration: '1d' }, { id: 'team-budget', max_limit: 1e9, reset_duration: '1M', calendar_aligned: true }],
      rate_limits: [{ id: 'vk-rl', request_max_limit: 1e9, request_reset_duration: '1m', token_max_limit: 1e12, token_reset_duration: '1m' }],
      teams: [{ id: 'bench-team', name: 'bench', budget_id: 'team-budget' }],
      virtual_keys: [{
        id: 'bench-vk', name: 'bench', value: BENCH_VK, team_id: 'bench-team', budget_id: 'vk-budget', rate_limit_id: 'vk-rl',
        provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'], weight: 1 }],
      }],
      routing_rules: rules,
    },
    client: { enforce_auth_on_inference: true },
  };
}

/**
 * The one place the gateway is started. Cluster mode (workers > 1) plugs in here: pass the
 * gateway's worker option once it has one; RSS and CPU already sum over the process tree.
 */
export function startGateway(upstream: string, port: number, logDir: string, opts: GatewayOptions): Promise<Proc> {
  const name = opts.name ?? 'gateway';
  const appDir = join(logDir, `${name}-app`);
  mkdirSync(appDir, { recursive: true });
  const config = {
    providers: {
      openai: {
        keys: [{ name: 'k', value: 'sk-bench', weight: 1 }],
        network_config: { base_url: upstream },
      },
    },
    ...opts.config,
    // Request logs are on by default since the first-run work; a target without them says so, so
    // the plain gateway stays the one-provider, no-logging configuration the figures compare.
    client: { enable_logging: false, ...(opts.config?.client as Record<string, unknown> | undefined) },
  };
  writeFileSync(join(appDir, 'config.json'), JSON.stringify(config, null, 2));
  // Measured as users run it: the compiled JavaScript with the node flags of `npm start`.
  if (!opts.root) buildGateway();
  const args = [join(opts.root ?? ROOT, 'dist/proxy/src/main.js'), '--app-dir', appDir, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', '--workers', String(opts.workers)];
  const start = startCommand(opts.root ?? ROOT);
  return spawnService({
    name, args, port, logDir, readyPath: '/health', nodeFlags: [...start.flags, ...(opts.nodeFlags ?? [])], env: { ...start.env, ...opts.env },
    wrap: opts.wrap,
  });
}

/** The node flags and environment (`K=V` before node) `npm start` passes (the build's package.json), read from there so the two cannot drift. */
function startCommand(root: string): { flags: string[]; env: Record<string, string> } {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.split('&&').at(-1)!.trim().split(/\s+/);
  const env = Object.fromEntries(words.filter((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
  return { flags: words.filter((w) => w.startsWith('--')), env };
}

let built = false;
/** `--no-build`: measure dist/ as it is (built by hand, e.g. while the tree does not typecheck). */
export function skipBuild(): void {
  built = true;
}
export function buildGateway(): void {
  if (built) return;
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
  built = true;
}

export const PORTKEY_VERSION = '1.15.2';
export const AUTOCANNON_VERSION = '8.0.0';
/**
 * Portkey 1.15.2 declares @hono/node-server ^1.3.3; from 1.14.2 on, its Response wrapper hands
 * back fetch's immutable headers and every Portkey streaming answer fails with
 * "TypeError: immutable" (Portkey-AI/gateway#1389). 1.14.1 is the newest version that works.
 */
const HONO_NODE_SERVER = '1.14.1';
const PEERS_PACKAGE = {
  name: 'skybridge-bench-peers',
  private: true,
  description: 'Benchmark peers and load tools, installed by bench/run.ts (node_modules is git-ignored).',
  overrides: { '@hono/node-server': HONO_NODE_SERVER },
  dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION, autocannon: AUTOCANNON_VERSION },
};

/** Install Portkey (and autocannon, the fallback load tool) into bench/.peers unless present. */
export async function ensurePeers(): Promise<void> {
  const ok = existsSync(join(PEERS, 'node_modules/@portkey-ai/gateway/build/start-server.js'))
    && peerVersion('@portkey-ai/gateway') === PORTKEY_VERSION
    && peerVersion('@hono/node-server') === HONO_NODE_SERVER
    && existsSync(join(PEERS, 'node_modules/autocannon/package.json'));
  if (ok) return;
  mkdirSync(PEERS, { recursive: true });
  const manifest = JSON.stringify(PEERS_PACKAGE, null, 2) + '\n';
  const path = join(PEERS, 'package.json');
  if (!existsSync(path) || readFileSync(path, 'utf8') !== manifest) writeFileSync(path, manifest);
  process.stderr.write(`installing @portkey-ai/gateway@${PORTKEY_VERSION} and autocannon@${AUTOCANNON_VERSION} into bench/.peers ...\n`);
  await new Promise<void>((done, fail) => {
    const npm = spawn('npm', ['install', '--no-audit', '--no-fund'], { cwd: PEERS, stdio: ['ignore', 'inherit', 'inherit'] });
    const timer = setTimeout(() => npm.kill('SIGTERM'), 300_000);
    npm.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) done();
      else fail(new Error(`npm install in bench/.peers failed (exit ${code})`));
    });
  });
}

export function peerVersion(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(PEERS, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Portkey's open-source gateway (Hono on @hono/node-server). It binds every interface by default;
 * the preload in loopback.ts pins it to 127.0.0.1. NODE_ENV=production and --headless: no UI.
 */
export function startPortkey(port: number, logDir: string): Promise<Proc> {
  return spawnService({
    name: 'portkey',
    args: [join(PEERS, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${port}`, '--headless'],
    nodeFlags: ['--import', join(BENCH, 'lib/loopback.ts')],
    cwd: PEERS,
    env: { NODE_ENV: 'production' },
    port,
    logDir,
    readyPath: '/',
  });
}

/**
 * An older commit of this repository, built beside it (a detached git worktree under bench/.peers
 * sharing this checkout's node_modules), so the old and the new gateway run in the same run.
 */
export function buildBaseline(ref: string): { root: string; commit: string } {
  const commit = spawnSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  if (!commit) throw new Error(`--baseline ${ref}: not a commit of this repository`);
  const root = join(PEERS, `baseline-${commit}`);
  if (!existsSync(join(root, 'package.json'))) {
    mkdirSync(PEERS, { recursive: true });
    const r = spawnSync('git', ['worktree', 'add', '--force', '--detach', root, commit], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`git worktree add ${root} ${commit} failed`);
  }
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  if (!existsSync(join(root, 'dist/proxy/src/main.js'))) {
    const r = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0 && !existsSync(join(root, 'dist/proxy/src/main.js'))) throw new Error(`building the baseline ${commit} failed`);
    // The bundling steps a build's `npm run build` has (vendored packages, then the gateway's own
    // modules), in that order: a baseline is measured as it ships.
    for (const script of ['scripts/vendor-bundle.ts', 'scripts/gateway-bundle.ts']) {
      if (!existsSync(join(root, script))) continue;
      const v = spawnSync(process.execPath, [script], { cwd: root, stdio: 'inherit' });
      if (v.status !== 0) throw new Error(`${script} of the baseline ${commit} failed`);
    }
  }
  return { root, commit };
}

/** LiteLLM from PyPI, pinned; installed into a virtualenv under bench/.peers by ensureLiteLLM. */
export const LITELLM_VERSION = '1.106.2';
export const LITELLM_MASTER_KEY = `sk-${'b3nch'.repeat(12)}`;
const LITELLM_VENV = join(PEERS, 'litellm');

/** Installs the LiteLLM proxy (pip, into its own virtualenv) unless that version is there. */
export function ensureLiteLLM(): void {
  if (litellmVersion() === LITELLM_VERSION) return;
  process.stderr.write(`installing litellm[proxy]==${LITELLM_VERSION} into bench/.peers/litellm ...\n`);
  const py = spawnSync('python3', ['-m', 'venv', LITELLM_VENV], { stdio: 'inherit' });
  if (py.status !== 0) throw new Error('python3 -m venv failed');
  const pip = spawnSync(join(LITELLM_VENV, 'bin/pip'), ['install', '-q', `litellm[proxy]==${LITELLM_VERSION}`], { stdio: 'inherit', timeout: 900_000 });
  if (pip.status !== 0) throw new Error(`pip install litellm[proxy]==${LITELLM_VERSION} failed`);
}

export function litellmVersion(): string {
  const r = spawnSync(join(LITELLM_VENV, 'bin/python'), ['-c', 'import importlib.metadata as m; print(m.version("litellm"))'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : 'unknown';
}

/**
 * LiteLLM's proxy server with one worker and no database: one model `gpt-4o` routed to the mock
 * as an OpenAI-compatible upstream.
 */
export function startLiteLLM(upstream: string, port: number, logDir: string): Promise<Proc> {
  const dir = join(logDir, 'litellm-app');
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'config.yaml');
  writeFileSync(config, [
    'model_list:',
    '  - model_name: gpt-4o',
    '    litellm_params:',
    '      model: openai/gpt-4o',
    `      api_base: ${upstream}/v1`,
    '      api_key: sk-bench',
    'litellm_settings:',
    '  telemetry: false',
    // It refuses to start without a master key; requests carry it, as a real deployment's would.
    'general_settings:',
    `  master_key: ${LITELLM_MASTER_KEY}`,
    '',
  ].join('\n'));
  return spawnService({
    name: 'litellm',
    command: join(LITELLM_VENV, 'bin/litellm'),
    args: ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    cwd: dir,
    env: { LITELLM_LOG: 'ERROR', LITELLM_TELEMETRY: 'False', DISABLE_ADMIN_UI: 'True', NO_DOCS: 'True' },
    port,
    logDir,
    readyPath: '/health/liveliness',
    readyTimeoutMs: 120_000,
  });
}
