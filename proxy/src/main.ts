#!/usr/bin/env node
// Entry point: parse the command line, load config (file or environment), serve.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCli, USAGE } from './cli.ts';
import { configureLog, log } from './log.ts';
import { checkConfig, configFromEnv, loadConfigFile, ConfigError, type LoadedConfig } from './config/load.ts';
import { compileSnapshot } from './config/snapshot.ts';
import { SnapshotHolder, watchConfigFile } from './config/source.ts';
import { ConfigService } from './config/service.ts';
import { FileConfigStore, MemoryConfigStore, type ConfigStore } from './config/store.ts';
import { RedisConfigStore } from './config/redis-store.ts';
import { connectRedis, DEFAULT_KEY_PREFIX, redisFromEnv } from './state/redis.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { installGovernanceServices } from './governance/services.ts';
import type { CounterStore } from './governance/counters/store.ts';
import { MemoryCounterStore } from './governance/counters/memory.ts';
import { RedisCounterStore } from './governance/counters/redis.ts';
import { createGatewayServer, listen } from './http/server.ts';
import { createApiHandler } from './api/app.ts';
import type { KubeStart } from './config/kube-source.ts';
import { buildRoutes, NATIVE_ROUTES } from './routes.ts';
import { configReloadErrors, setConfigHash } from './metrics/metrics.ts';
import { closePools } from './upstream/pools.ts';
import { runPrimary } from './cluster.ts';
import cluster from 'node:cluster';

async function main(): Promise<void> {
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
  configureLog({ level: opts.logLevel, style: opts.logStyle });

  // With --kube-namespace the operator's rendered configuration is the only source (config.json is
  // not read), and every worker follows it itself. The client library loads only then.
  const file = opts.appDir && !opts.kubeNamespace ? join(resolve(opts.appDir), 'config.json') : undefined;
  let kube: KubeStart | undefined;
  let loaded: LoadedConfig;
  try {
    if (opts.kubeNamespace && !(opts.workers > 1 && cluster.isPrimary)) kube = await (await import('./config/kube-source.ts')).openKubernetesConfig(opts.kubeNamespace);
    loaded = kube ? kube.loaded : opts.kubeNamespace ? checkConfig({}, 'an empty configuration') : file && existsSync(file) ? loadConfigFile(file) : checkConfig(configFromEnv(), 'environment');
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (opts.workers > 1 && cluster.isPrimary) {
    // Config was validated above so a bad file fails once, here, not in every worker.
    for (const w of loaded.warnings) log.warn(w);
    runPrimary(opts.workers);
    return;
  }
  if (cluster.isPrimary) for (const w of loaded.warnings) log.warn(w);
  const { service, counters } = await openState(loaded, opts.appDir, kube !== undefined);
  const holder = service.holder;
  setConfigHash(holder.current().hash);
  holder.onSwap((next) => setConfigHash(next.hash));
  if (file && existsSync(file)) watchConfigFile(file, service, () => configReloadErrors.inc());
  if (kube) await kube.follow(service, () => configReloadErrors.inc());
  const catalog = new ModelCatalog();
  installGovernanceServices({ counters, catalog });
  void catalog.refresh(holder.current());
  holder.onSwap((next) => void catalog.refresh(next));

  const { routes, patterns } = buildRoutes(NATIVE_ROUTES);
  const server = createGatewayServer(holder, routes, patterns, createApiHandler(service));
  const { port } = await listen(server, opts.port, opts.host);
  log.info('skybridge listening', {
    ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
    address: `http://${opts.host}:${port}`,
    config: kube ? `kubernetes namespace ${kube.source.namespace}` : file && existsSync(file) ? file : 'environment',
    config_hash: holder.current().hash,
    providers: [...holder.current().providers.keys()],
  });

  const shutdown = (signal: string) => {
    log.info('shutting down', { signal });
    server.close(() => void closePools().then(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/**
 * The config store and counters: in Redis when `redis` is configured (shared by every replica),
 * else a file in the app dir and process memory.
 */
async function openState(loaded: LoadedConfig, appDir: string | undefined, kube = false): Promise<{ service: ConfigService; counters: CounterStore }> {
  const redisCfg = loaded.config.redis ?? redisFromEnv();
  let store: ConfigStore;
  let counters: CounterStore;
  if (redisCfg) {
    const client = await connectRedis(redisCfg);
    const prefix = redisCfg.key_prefix ?? DEFAULT_KEY_PREFIX;
    store = new RedisConfigStore(client, prefix);
    const redisCounters = new RedisCounterStore(redisCfg);
    await redisCounters.ready();
    counters = redisCounters;
  } else {
    store = appDir ? new FileConfigStore(join(resolve(appDir), 'config.store.json')) : new MemoryConfigStore();
    counters = new MemoryCounterStore();
  }
  if (kube) {
    // Kubernetes holds the document and each replica follows it there: nothing to store here.
    const holder = new SnapshotHolder(compileSnapshot(loaded.config));
    return { service: new ConfigService(holder, new MemoryConfigStore(), { seed: 'kubernetes', revision: 1, document: loaded.raw }), counters };
  }
  const stored = await ConfigService.initialDocument(store, loaded.raw);
  const { config } = checkConfig(stored.document, `stored configuration (${store.kind})`);
  const service = new ConfigService(new SnapshotHolder(compileSnapshot(config)), store, stored);
  return { service, counters };
}

void main();
