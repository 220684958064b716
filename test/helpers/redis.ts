// A real redis-server for tests: its own process on a free loopback port, no persistence, gone
// when stopped. Talks RESP over a raw socket so the helper depends on no client library.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './ports.ts';
import { patience } from './patience.ts';

export interface RunningRedis {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** 127.0.0.1:<port>, as RedisConfig.addr takes it. */
  addr: string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** FLUSHALL. */
  flush(): Promise<void>;
  /** Stops the server and starts a fresh one (empty, script cache gone) on the same port. */
  restart(): Promise<void>;
  /** The server's process id (SIGSTOP it to simulate a hung Redis). */
  readonly pid: number;
}

function redisBinary(): string {
  if (process.env.REDIS_SERVER) return process.env.REDIS_SERVER;
  for (const p of ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/opt/homebrew/bin/redis-server']) if (existsSync(p)) return p;
  return 'redis-server';
}


/** Sends one inline command and resolves with the first reply line. */
export function redisCommand(port: number, command: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`redis ${command}: no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(command + '\r\n'));
    sock.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\r\n');
      if (nl >= 0) {
        clearTimeout(timer);
        sock.end();
        resolve(buf.slice(0, nl));
      }
    });
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function launch(port: number): { child: ChildProcess; exited: Promise<void>; output: () => string } {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning'];
  const child = spawn(redisBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
    if (dead) throw new Error(`redis-server exited before answering PING (is it installed? apt-get install redis-server):\n${output()}`);
    try {
      if ((await redisCommand(port, 'PING', 500)) === '+PONG') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server did not answer PING within ${limit / 1000} s:\n${output()}`);
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

export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  let proc = launch(port);
  await waitForPing(port, proc.exited, proc.output);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    addr: `127.0.0.1:${port}`,
    stop: () => stopChild(proc.child, proc.exited),
    flush: async () => {
      const r = await redisCommand(port, 'FLUSHALL');
      if (r !== '+OK') throw new Error(`FLUSHALL answered ${r}`);
    },
    restart: async () => {
      await stopChild(proc.child, proc.exited);
      proc = launch(port);
      await waitForPing(port, proc.exited, proc.output);
    },
    get pid() {
      return proc.child.pid ?? 0;
    },
  };
}
