// The operator as its own process against a test kube-apiserver, run from the TypeScript sources as
// the e2e tests need it: its output kept for failure context and for tests that read its log lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { KubeApiServer } from './kube.ts';

const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../operator/src/main.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;
/** The output kept: enough for every line a test reads back. */
const KEPT_CHARS = 200_000;

export interface OperatorProcess {
  readonly process: ChildProcess;
  /** What it wrote to stdout and stderr, the last KEPT_CHARS of it. */
  output(): string;
  /** Kills it (SIGKILL: the tests need no orderly step-down) and waits for the exit. */
  stop(): Promise<void>;
}

export function startOperator(kube: KubeApiServer, opts: { namespace: string; identity: string; kubeconfig?: string; args?: string[] }): OperatorProcess {
  const child = spawn(NODE, [MAIN, '--namespace', opts.namespace, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--identity', opts.identity, ...(opts.args ?? [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, KUBECONFIG: opts.kubeconfig ?? kube.kubeconfig, HOME: kube.stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-KEPT_CHARS));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    process: child,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
