#!/usr/bin/env node
// Entry point: parse the command line, load config (file, environment or Kubernetes), then either
// keep worker processes alive (--workers) or start the gateway (gateway.ts) and wire its signals.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import cluster from 'node:cluster';
import { parseCli, USAGE } from './cli.ts';
import { version } from './version.ts';
import { configureLog, log } from './log.ts';
import { configFromEnv, loadConfigWithSecrets } from './config/load.ts';
import { checkConfig, ConfigError, type LoadedConfig } from './config/check.ts';
import { ignoredSettingsWarning, processGatewaySettings } from './config/env-settings.ts';
import type { KubeStart } from './config/kube-source.ts';
import { configFile, createGateway, GatewayStartError } from './gateway.ts';
import { gracefulShutdown } from './http/shutdown.ts';
import { runPrimary } from './cluster.ts';
import { applyGatewayV8Flags } from './v8-flags.ts';

async function main(): Promise<void> {
  // Before any traffic: V8 reads these at its next collection (cluster workers run this too).
  applyGatewayV8Flags();
  let opts;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (opts === 'version') {
    process.stdout.write(`skybridge ${version()}\n`);
    return;
  }
  configureLog({ level: opts.logLevel, style: opts.logStyle });

  // With --kube-namespace the operator's rendered configuration is the only source (config.json is
  // not read), and every worker follows it itself. The client library loads only then.
  const file = configFile(opts);
  // A mistyped --app-dir must not quietly become "providers from the environment, writes lost".
  const appDirProblem = opts.appDir !== undefined ? checkAppDir(resolve(opts.appDir)) : undefined;
  if (appDirProblem) {
    process.stderr.write(`${appDirProblem}\n`);
    process.exit(1);
  }
  let kube: KubeStart | undefined;
  let loaded: LoadedConfig;
  try {
    // The deployment's settings (SKYBRIDGE_CLIENT, management auth...): a bad one ends the start here.
    if (opts.kubeNamespace) processGatewaySettings();
    if (opts.kubeNamespace && !(opts.workers > 1 && cluster.isPrimary)) kube = await (await import('./config/kube-source.ts')).openKubernetesConfig(opts.kubeNamespace);
    loaded = kube ? kube.loaded : opts.kubeNamespace ? checkConfig({}, 'an empty configuration') : file && existsSync(file) ? await loadConfigWithSecrets(file) : checkConfig(configFromEnv(), 'environment');
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const ignoredSettings = opts.kubeNamespace || !cluster.isPrimary ? undefined : ignoredSettingsWarning();
  if (ignoredSettings) log.warn(ignoredSettings);
  if (opts.workers > 1 && cluster.isPrimary) {
    // Config was validated above so a bad file fails once, here, not in every worker.
    for (const w of loaded.warnings) log.warn(w);
    runPrimary(opts.workers);
    return;
  }
  if (cluster.isPrimary) for (const w of loaded.warnings) log.warn(w);
  let gateway;
  try {
    gateway = await createGateway(loaded, { ...opts, ...(kube && { kube }), processGuards: true });
  } catch (err) {
    if (!(err instanceof GatewayStartError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const shutdown = gracefulShutdown(gateway, opts.shutdownGraceMs);
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** Why `dir` cannot be the app dir, or undefined when it can. */
function checkAppDir(dir: string): string | undefined {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return `--app-dir ${dir}: no such directory (create it, or fix the path; without --app-dir, /api changes are lost on restart)`;
  }
  return stat.isDirectory() ? undefined : `--app-dir ${dir}: not a directory`;
}

void main();
