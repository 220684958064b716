// Starts the gateway in this process (gateway.ts, as main.ts does) with a config.json in a temp app
// dir and the child-process helper's defaults: an ephemeral port on 127.0.0.1 and a 3 s shutdown
// grace. No child Node to boot, so a loaded machine starts it in a fraction of the time. Tests of
// the process itself (signals, exit codes, its output, env parsing, workers, Kubernetes) use
// gateway.ts. The gateway reads this process's environment; `env` is set for its lifetime.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCli } from '../../proxy/src/cli.ts';
import { configureLog } from '../../proxy/src/log.ts';
import { configFromEnv, loadConfigWithSecrets } from '../../proxy/src/config/load.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { configFile, createGateway, type Gateway } from '../../proxy/src/gateway.ts';
import { closeAtEnd } from './cleanup.ts';
import { stackWith, type StackConfig, type StackOf } from './stack.ts';

export interface InProcessGateway {
  url: string;
  port: number;
  /** With --admin-port: where /api, /metrics and the dashboard are served. */
  adminUrl: string | undefined;
  appDir: string;
  /** Everything the gateway built: services, stores, holder, servers. */
  gateway: Gateway;
  writeConfig(config: unknown): void;
  /** Drains (3 s grace) and closes everything the gateway opened; also run at the end of the file. */
  stop(): Promise<void>;
}

// Warnings and errors still show in the test's output; the rest would drown it.
configureLog({ level: 'warn' });

export async function startGateway(config: unknown, opts: { env?: NodeJS.ProcessEnv; args?: string[]; /** Reuse an app dir (a restart). */ appDir?: string } = {}): Promise<InProcessGateway> {
  const appDir = opts.appDir ?? mkdtempSync(join(tmpdir(), 'skybridge-'));
  const writeConfig = (c: unknown) => writeFileSync(join(appDir, 'config.json'), JSON.stringify(c, null, 2));
  if (config !== undefined) writeConfig(config);
  const restoreEnv = setEnv(opts.env ?? {});
  const cli = parseCli(['--app-dir', appDir, '--port', '0', '--host', '127.0.0.1', '--shutdown-grace', '3', ...(opts.args ?? [])], { ...opts.env });
  if (cli === 'help') throw new Error('--help starts no gateway');
  const file = configFile(cli);
  let gateway: Gateway;
  try {
    const loaded = file && existsSync(file) ? await loadConfigWithSecrets(file) : checkConfig(configFromEnv(), 'environment');
    gateway = await createGateway(loaded, cli);
  } catch (err) {
    restoreEnv();
    throw err;
  }
  const scheme = cli.tls ? 'https' : 'http';
  const stop = closeAtEnd(async () => {
    await gateway.close();
    restoreEnv();
  });
  return {
    url: `${scheme}://127.0.0.1:${gateway.port}`,
    port: gateway.port,
    adminUrl: gateway.adminPort === undefined ? undefined : `${scheme}://127.0.0.1:${gateway.adminPort}`,
    appDir,
    gateway,
    writeConfig,
    stop,
  };
}

/** Sets `env` in process.env; answers a function that puts the previous values back. */
function setEnv(env: NodeJS.ProcessEnv): () => void {
  const previous = Object.entries(env).map(([k]) => [k, process.env[k]] as const);
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  return () => {
    for (const [k, v] of previous) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** A gateway in process in front of one mock server playing OpenAI, Anthropic and Gemini, plus an OpenAI SDK client pointed at it. */
export type Stack = StackOf<InProcessGateway>;

export function startStack(config?: StackConfig): Promise<Stack> {
  return stackWith(startGateway, config);
}
