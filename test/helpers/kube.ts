// A real Kubernetes API server for end-to-end tests: the genuine kube-apiserver with embedded etcd,
// built from test/kube (see test/kube/README.md), on 127.0.0.1 with its own CA and kubeconfig;
// optionally the genuine kube-controller-manager next to it (garbage collection, namespace deletion).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { patience } from './patience.ts';

const BUILD_SCRIPT = new URL('../kube/build.sh', import.meta.url).pathname;
const READY_PREFIX = 'KUBE-APISERVER READY ';
const TAIL_BYTES = 64 * 1024;

export interface KubeUser {
  name: string;
  groups?: string[];
}

export interface KubeApiServerOptions {
  /** Extra static-token users (no permissions until RBAC grants them); their tokens are in `tokens`. */
  users?: KubeUser[];
  /** Extra kube-apiserver flags, e.g. `--feature-gates=...`. */
  apiserverArgs?: string[];
  /**
   * Also run kube-controller-manager (same release) with the garbage collector, the namespace
   * controller and the service-account controller, so ownerReferences are collected, foreground and
   * orphan deletion work, deleted namespaces empty and go, and new namespaces get a `default`
   * ServiceAccount. Started once its garbage collector has synced; stopped with the server.
   */
  controllerManager?: boolean;
  /** Extra kube-controller-manager flags (with `controllerManager`). */
  controllerManagerArgs?: string[];
  startTimeoutMs?: number;
}

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number | null;
}

export interface KubeApiServer {
  url: string;
  /** Admin kubeconfig (user "admin", group system:masters). */
  kubeconfig: string;
  /** Admin bearer token. */
  token: string;
  /** Bearer tokens of the `users` option, by name. */
  tokens: Record<string, string>;
  /** PEM of the CA that signed the serving certificate. */
  ca: string;
  stateDir: string;
  binDir: string;
  /** Runs the bundled kubectl against this server as admin; add `--token=...` or `--as=...` to act as someone else. */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /**
   * Stops and starts the API server process on the same etcd data, URL, CA and tokens; `downMs`
   * keeps it stopped that long before starting it again (an outage, not just a restart).
   */
  restart(opts?: { downMs?: number }): Promise<void>;
  stop(): Promise<void>;
  /** The API server's recent output (the full log is `${stateDir}/apiserver.log`). */
  logs(): string;
  /** kube-controller-manager's recent output (full log `${stateDir}/controller-manager.log`); '' without it. */
  controllerManagerLogs(): string;
}

/** The controllers started by `controllerManager: true` (kube-controller-manager's names). */
export const KUBE_CONTROLLERS = ['garbagecollector', 'namespace', 'serviceaccount'] as const;
/** Logged once the garbage collector's informers have synced: from then on it collects. */
const GC_READY = 'Proceeding to collect garbage';

let built: Promise<string> | undefined;

/** Runs test/kube/build.sh once per process (a cache hit when nothing changed) and returns its bin dir. */
export function kubeBinDir(): Promise<string> {
  built ??= new Promise<string>((resolve, reject) => {
    // The build's progress goes straight to our stderr: a cold build takes minutes and should say so.
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const dir = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && dir) resolve(dir);
      else reject(new Error(`test/kube/build.sh failed with ${code}:\n${stdout}`));
    });
  });
  return built;
}

export async function startKubeApiServer(opts: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const binDir = await kubeBinDir();
  const stateDir = mkdtempSync(join(tmpdir(), 'skybridge-kube-'));
  const tokens = Object.fromEntries((opts.users ?? []).map((u) => [u.name, randomBytes(16).toString('hex')]));
  const args = ['--state-dir', stateDir];
  for (const u of opts.users ?? []) args.push('--user', [tokens[u.name], u.name, ...(u.groups ?? [])].join(','));
  if (opts.apiserverArgs?.length) args.push('--', ...opts.apiserverArgs);
  const log = createWriteStream(join(stateDir, 'apiserver.log'), { flags: 'a' });
  const timeoutMs = opts.startTimeoutMs ?? 120_000;

  let proc = await launch(join(binDir, 'kube-apiserver'), args, stateDir, log, timeoutMs);
  const ready = proc.ready;
  if (!ready) throw new Error('kube-apiserver announced no URL');
  let controllers: Launched | undefined;
  const killOnExit = () => {
    controllers?.child.kill('SIGKILL');
    proc.child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  if (opts.controllerManager) {
    try {
      controllers = await launchControllerManager(binDir, ready.kubeconfig, stateDir, opts.controllerManagerArgs ?? [], timeoutMs);
    } catch (err) {
      process.removeListener('exit', killOnExit);
      await proc.stop();
      throw err;
    }
  }

  const env = { PATH: process.env.PATH, HOME: stateDir, KUBECONFIG: ready.kubeconfig };
  const server: KubeApiServer = {
    url: ready.url,
    kubeconfig: ready.kubeconfig,
    token: ready.token,
    tokens,
    ca: readFileSync(ready.caFile, 'utf8'),
    stateDir,
    binDir,
    kubectl: (kargs, stdin) => run(join(binDir, 'kubectl'), kargs, env, stdin),
    // The controller manager keeps running across an API server restart and reconnects, as in a cluster.
    restart: async (restartOpts = {}) => {
      await proc.stop();
      if (restartOpts.downMs) await new Promise((r) => setTimeout(r, restartOpts.downMs));
      proc = await launch(join(binDir, 'kube-apiserver'), args, stateDir, log, timeoutMs);
    },
    stop: async () => {
      process.removeListener('exit', killOnExit);
      await controllers?.stop();
      await proc.stop();
      log.end();
      rmSync(stateDir, { recursive: true, force: true });
    },
    logs: () => proc.tail(),
    controllerManagerLogs: () => controllers?.tail() ?? '',
  };
  return server;
}

/**
 * kube-controller-manager as a cluster runs it, minus what needs nodes or cloud: only KUBE_CONTROLLERS,
 * one instance (no leader election), its own (admin) credentials rather than per-controller service
 * accounts, and no serving port (nothing scrapes it).
 */
function launchControllerManager(binDir: string, kubeconfig: string, stateDir: string, extra: string[], timeoutMs: number): Promise<Launched> {
  const args = [
    `--kubeconfig=${kubeconfig}`,
    `--controllers=${KUBE_CONTROLLERS.join(',')}`,
    '--leader-elect=false',
    '--use-service-account-credentials=false',
    '--secure-port=0',
    ...extra,
  ];
  const log = createWriteStream(join(stateDir, 'controller-manager.log'), { flags: 'a' });
  return launch(join(binDir, 'kube-controller-manager'), args, stateDir, log, timeoutMs, {
    name: 'kube-controller-manager',
    isReady: (output) => output.includes(GC_READY),
  }).then((l) => ({ ...l, stop: () => l.stop().finally(() => log.end()) }));
}

interface Ready {
  url: string;
  kubeconfig: string;
  token: string;
  caFile: string;
}

interface Launched {
  child: ChildProcess;
  /** What the API server announced (undefined for the controller manager). */
  ready: Ready | undefined;
  tail(): string;
  stop(): Promise<void>;
}

interface ReadyCheck {
  name: string;
  /** Whether the output so far (stdout and stderr) says the process is ready. */
  isReady(output: string): boolean;
}

async function launch(bin: string, args: string[], stateDir: string, log: WriteStream, timeoutMs: number, check?: ReadyCheck): Promise<Launched> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
  let tail = '';
  let stdout = '';
  const record = (d: Buffer) => {
    log.write(d);
    tail = (tail + d.toString()).slice(-TAIL_BYTES);
  };
  child.stdout!.on('data', (d: Buffer) => {
    record(d);
    stdout += d.toString();
  });
  child.stderr!.on('data', record);

  // The API server announces itself with a line on stdout; anything else (check) is watched for in its output.
  const ready = await new Promise<Ready | undefined>((resolve, reject) => {
    const what = check?.name ?? 'kube-apiserver';
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${what} ${why} (state and full log in ${stateDir}); last output:\n${tail}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs} ms`), timeoutMs);
    const done = (r: Ready | undefined) => {
      clearTimeout(timer);
      child.removeListener('exit', onExit);
      resolve(r);
    };
    if (check) {
      let seen = '';
      const watch = (d: Buffer) => {
        seen = (seen + d.toString()).slice(-TAIL_BYTES);
        if (!check.isReady(seen)) return;
        child.stdout!.removeListener('data', watch);
        child.stderr!.removeListener('data', watch);
        done(undefined);
      };
      child.stdout!.on('data', watch);
      child.stderr!.on('data', watch);
    } else {
      child.stdout!.on('data', () => {
        const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
        if (line) done(JSON.parse(line.slice(READY_PREFIX.length)) as Ready);
      });
    }
    const onExit = (code: number | null) => fail(`exited with ${code} before it was ready`);
    child.once('exit', onExit);
    child.once('error', (err) => fail(`failed to start: ${err.message}`));
  });

  return {
    child,
    ready,
    tail: () => tail,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      // Graceful shutdown drains requests and closes etcd; a hang here is a bug worth a clear error.
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// A bulk apply of thousands of objects on a loaded machine can take minutes: the bound only stops a hang.
function run(bin: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string, timeoutMs = 300_000): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `(killed after ${timeoutMs / 1000} s)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
    child.stdin.end(stdin ?? '');
  });
}

/** GET an API path as admin over `dispatcher` (an undici Agent trusting the server's CA); undefined for 404. */
/** A metav1.Condition as the operator writes it on a resource's status. */
export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The condition of that type on a resource's status, if any. */
export const condition = (o: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined =>
  o?.status?.conditions?.find((c) => c.type === type);

export async function kubeGet<T>(kube: KubeApiServer, dispatcher: Dispatcher, path: string): Promise<T | undefined> {
  // undici's own fetch: Node's global one cannot use a dispatcher from the undici package.
  const res = await undiciFetch(`${kube.url}${path}`, { headers: { authorization: `Bearer ${kube.token}` }, dispatcher });
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${(await res.text()).slice(0, 2000)}`);
  return (await res.json()) as T;
}

/** kubectl as admin; a failure throws with its stderr. */
export async function kubectlOk(kube: KubeApiServer, args: string[], stdin?: string): Promise<string> {
  const r = await kube.kubectl(args, stdin);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr.slice(0, 2000)}`);
  return r.stdout;
}

/**
 * Polls `fn` (every `everyMs`) until it returns a value other than undefined or false. On timeout it
 * throws naming `what`, the last error `fn` threw, and `context()` (the processes' last log lines).
 */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, opts: { timeoutMs?: number; everyMs?: number; context?: () => string } = {}): Promise<T> {
  const deadline = Date.now() + patience(opts.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}\n${opts.context?.() ?? ''}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 100));
  }
}

/** The admin kubeconfig with `user`'s static token instead, written beside the server's state. */
export function kubeconfigFor(kube: KubeApiServer, user: string): string {
  const config = parseYaml(readFileSync(kube.kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
  config.users[0].user.token = kube.tokens[user];
  const file = join(kube.stateDir, `${user}-kubeconfig`);
  writeFileSync(file, stringifyYaml(config));
  return file;
}
