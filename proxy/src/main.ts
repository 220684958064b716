#!/usr/bin/env node
// Entry point: parse the command line, load config (file or environment), serve.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCli, USAGE } from './cli.ts';
import { configureLog, log } from './log.ts';
import { checkConfig, configFromEnv, loadConfigFile, ConfigError, type LoadedConfig } from './config/load.ts';
import { ignoredSettingsWarning, processGatewaySettings } from './config/env-settings.ts';
import { watchConfigFile } from './config/source.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { createServices } from './services.ts';
import { openState } from './state/shared-state.ts';
import { execute } from './endpoints/execute.ts';
import { Metrics } from './metrics/metrics.ts';
import { openRequestLogs } from './logs/open.ts';
import { startResponseCache, stopResponseCache } from './cache/start.ts';
import { startWebhooks } from './webhooks/start.ts';
import { SqlLogStore } from './logs/sql-store.ts';
import { DEFAULT_RETENTION_DAYS } from './logs/retention.ts';
import { SqlMcpCallStore } from './mcp/call-store.ts';
import { startAsyncJobs } from './async/jobs.ts';
import { asyncRoutes } from './endpoints/async.ts';
import { createGatewayServer, listen } from './http/server.ts';
import { servedOnAdminPort, splitRoutes } from './http/admin-port.ts';
import { installProcessGuards } from './http/process-guard.ts';
import { warnIfOpen } from './api/auth.ts';
import { lazyHandler } from './http/lazy-handler.ts';
import { gracefulShutdown } from './http/shutdown.ts';
import { markNotReady, markReady } from './state/readiness.ts';
import type { KubeStart } from './config/kube-source.ts';
import { buildRoutes, NATIVE_ROUTES } from './routes.ts';
import { runPrimary } from './cluster.ts';
import { EventHub } from './dashboard/events.ts';
import { dashboardFront } from './dashboard/front.ts';
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
    loaded = kube ? kube.loaded : opts.kubeNamespace ? checkConfig({}, 'an empty configuration') : file && existsSync(file) ? loadConfigFile(file) : checkConfig(configFromEnv(), 'environment');
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
  const seedFrom = file && existsSync(file) ? { kind: 'file' as const, source: file } : { kind: 'environment' as const, source: 'the environment' };
  const { service, counters, revocations } = await openState(loaded, opts.appDir, kube !== undefined, seedFrom);
  if (!kube && service.store.kind === 'memory') log.warn('no --app-dir (and no redis): configuration changes made through /api or the dashboard live in memory only and are lost on restart; pass --app-dir DIR to keep them in DIR/config.store.json');
  const holder = service.holder;
  const catalog = new ModelCatalog();
  const metrics = new Metrics();
  // Opened from the start-up configuration: moving the store elsewhere takes a restart. Each
  // worker opens its own (SQLite in WAL mode takes several writer processes; PostgreSQL is shared).
  // A store that cannot be opened (PostgreSQL down) leaves logging off rather than the gateway down.
  // The dashboard's live events (this replica's): nothing is built while no dashboard socket listens.
  const events = new EventHub();
  const logs = await openRequestLogs(holder.current().config, resolve(opts.appDir ?? '.'), { onDrop: (n) => metrics.logsDropped.inc(n), onWritten: (records) => events.logsWritten(records) }).catch((err: unknown) => {
    log.error('request logs store could not be opened: request logging is off until restart', { error: (err as Error).message });
    return undefined;
  });
  // The response cache's store, opened once from the start-up configuration; a namespace holding
  // another dimension, or a cache without a store, ends the start here with the spec's message.
  const cache = await startResponseCache(holder.current().config, resolve(opts.appDir ?? '.'), kube !== undefined).catch((err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  });
  const services = createServices({ counters, catalog, metrics, events, ...(logs && { logs: logs.writer }), ...(cache && { cache }) });
  services.mcp.onChange = (c) => events.mcpClientChanged({ id: c.id, name: c.name, state: c.state, lastError: c.lastError });
  // MCP clients follow the snapshots; agent turns run through the whole pipeline.
  services.mcp.runTurn = (snapshot, request) => execute(services, snapshot, request);
  services.mcp.apply(holder.current());
  holder.onSwap((next) => services.mcp.apply(next));
  metrics.setConfigHash(holder.current().hash);
  holder.onSwap((next) => metrics.setConfigHash(next.hash));
  metrics.routingRulesSkipped.set(holder.current().routing.skipped.length);
  holder.onSwap((next) => metrics.routingRulesSkipped.set(next.routing.skipped.length));
  // The served revision: the operator's index revision in Kubernetes (none until one loads), else the hash.
  if (kube?.initial) metrics.configLoaded(kube.initial.index.revision);
  else if (!opts.kubeNamespace) metrics.configLoaded(holder.current().hash);
  if (!opts.kubeNamespace) holder.onSwap((next) => metrics.configLoaded(next.hash));
  if (file && existsSync(file)) watchConfigFile(file, service, () => metrics.configReloadErrors.inc());
  if (kube) await kube.follow(service, () => metrics.configReloadErrors.inc(), (revision) => metrics.configLoaded(revision));
  void catalog.refresh(holder.current());
  // Returned, not dropped: an /api write answers once the catalog its `['*']` grants read is filled.
  holder.onSwap((next) => catalog.refresh(next));

  // Webhook deliveries live in the logs store's database: without one there are none to send.
  const webhooks = logs?.store instanceof SqlLogStore ? await startWebhooks(logs.store.driver, holder, metrics) : undefined;
  // Async jobs live there too; without a store /v1/async answers 503 naming what is missing.
  const jobs = logs?.store instanceof SqlLogStore ? startAsyncJobs({ driver: logs.store.driver, current: () => holder.current(), services, metrics }) : undefined;
  // MCP tool call logs there too, so /api/mcp-logs on any replica shows every replica's calls.
  if (logs?.store instanceof SqlLogStore) services.mcp.calls = new SqlMcpCallStore(logs.store.driver, holder.current().config.client?.log_retention_days ?? DEFAULT_RETENTION_DAYS);
  if (webhooks) webhooks.dispatcher.onGaveUp = (d) => events.webhookGaveUp(d);
  const { routes, patterns } = buildRoutes(NATIVE_ROUTES);
  const asyncSet = asyncRoutes(jobs);
  Object.assign(routes, asyncSet.routes);
  patterns.unshift(...asyncSet.patterns);
  warnIfOpen(service.current());
  // The dashboard (page, assets, /ws) unless --no-dashboard; its files are read on first visit.
  const dashboard = opts.dashboard ? dashboardFront({ current: () => holder.current(), events }) : undefined;
  // The management API (express and its routers) loads with the first /api request.
  const api = lazyHandler(async () =>
    (await import('./api/app.ts')).createApiHandler(service, logs && { store: logs.store, dropped: () => logs.writer.dropped }, webhooks?.dispatcher, services.mcp, cache, services.counters, {
      ...(dashboard && { tickets: dashboard.tickets }),
      features: () => ({ logs: logs !== undefined, cache: cache !== undefined, mcp: true /* the MCP manager always runs: clients can be added at any time */, webhooks: webhooks !== undefined, async: jobs !== undefined }),
    }, services.guesses, revocations),
  );
  // With --admin-port, /api, /metrics and the dashboard get a listener of their own (split before
  // serving: nothing is checked per request), and the inference port answers them 404.
  const split = opts.adminPort !== undefined ? splitRoutes(routes) : undefined;
  const server = split
    ? createGatewayServer(holder, services, split.inference, patterns, servedOnAdminPort, opts.limits, dashboard && servedOnAdminPort)
    : createGatewayServer(holder, services, routes, patterns, api, opts.limits, dashboard?.pages);
  const admin = split && createGatewayServer(holder, services, split.admin, [], api, opts.limits, dashboard?.pages);
  dashboard?.attach(admin ?? server);
  const { port } = await listen(server, opts.port, opts.host);
  const adminPort = admin && (await listen(admin, opts.adminPort ?? 0, opts.host)).port;
  // Only once serving: a failure to start must still end the process.
  installProcessGuards();
  log.info('skybridge listening', {
    ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
    address: `http://${opts.host}:${port}`,
    ...(adminPort !== undefined && { admin_address: `http://${opts.host}:${adminPort}` }),
    config: kube ? `kubernetes namespace ${kube.source.namespace}` : file && existsSync(file) ? file : 'environment',
    config_hash: holder.current().hash,
    providers: [...holder.current().providers.keys()],
  });

  // Ready once a configuration is served: in Kubernetes, once the operator's rendering was read.
  if (kube && !kube.initial) {
    markNotReady(`no configuration rendered in namespace ${kube.source.namespace} yet`);
    holder.onSwap(() => markReady());
  } else {
    markReady();
  }
  // Tells the operator which revision this process serves (its Ready conditions count replicas).
  let servedReport: { stop(): Promise<void> } | undefined;
  if (kube) {
    const { startServedReport } = await import('./state/served-report.ts');
    const source = kube.source;
    servedReport = startServedReport({ namespace: source.namespace, kc: (await import('./config/kube-source.ts')).defaultKubeConfig(), served: () => source.servedIndex, problem: () => source.problem, mcp: services.mcp, webhooks: webhooks !== undefined, cache: cache !== undefined, ...(cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : {}) });
  }
  const shutdown = gracefulShutdown(server, {
    graceMs: opts.shutdownGraceMs,
    close: () =>
      Promise.allSettled([
        servedReport?.stop(),
        services.close(),
        cache && stopResponseCache(cache, holder.current().config),
        Promise.all([webhooks?.stop(), jobs?.close(), services.mcp.calls.close()]).then(() => logs?.close()),
      ]),
  });
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
