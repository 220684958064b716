// Starts the real gateway as a child process (as users run it) with a config.json in a temp app dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { patience } from './patience.ts';

const MAIN = new URL('../../proxy/src/main.ts', import.meta.url).pathname;

export interface RunningGateway {
  url: string;
  port: number;
  appDir: string;
  process: ChildProcess;
  /** Everything the gateway logged so far (stdout and stderr). */
  logs(): string;
  writeConfig(config: unknown): void;
  stop(): Promise<void>;
}

export async function startGateway(config: unknown, opts: { env?: NodeJS.ProcessEnv; args?: string[]; /** Reuse an app dir (a restart). */ appDir?: string } = {}): Promise<RunningGateway> {
  const appDir = opts.appDir ?? mkdtempSync(join(tmpdir(), 'skybridge-'));
  const writeConfig = (c: unknown) => writeFileSync(join(appDir, 'config.json'), JSON.stringify(c, null, 2));
  if (config !== undefined) writeConfig(config);
  // A short drain on stop: tests that leave a stream open should not wait out the default grace period.
  const child = spawn(process.execPath, [MAIN, '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1', '--log-level', 'debug', '--shutdown-grace', '3', ...(opts.args ?? [])], {
    env: { PATH: process.env.PATH, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A test process ended by the runner (test/helpers/exit-when-done.ts, after a failed hook) takes its gateway with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    // A gateway that did not start in time is killed: left running, it would keep the test process alive.
    // The bound is generous, and stretched by the load, because a busy machine can take many seconds to start a child Node.
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`gateway did not start:\n${output}`))), patience(60_000));
    const check = () => {
      const m = /"address":"http:\/\/[^:]+:(\d+)"/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    appDir,
    process: child,
    logs: () => output,
    writeConfig,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Runs the gateway expecting it to refuse to start; resolves with its exit code and output. */
export async function runGatewayExpectingExit(config: unknown, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const appDir = mkdtempSync(join(tmpdir(), 'skybridge-'));
  writeFileSync(join(appDir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  const child = spawn(process.execPath, [MAIN, '--app-dir', appDir, '--port', '0', '--host', '127.0.0.1'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), patience(10_000));
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

