// The composition root: one call builds a whole gateway (shared state, services, stores, workers,
// listeners) from a loaded configuration, and close() stops it. The command line (main.ts) and
// tests running a gateway in process both start here, so they run the same gateway.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import cluster from 'node:cluster';
import type { CliOptions } from './cli.ts';
import { log } from './log.ts';
import type { LoadedConfig } from './config/check.ts';
import { watchConfigFile, type SnapshotHolder } from './config/source.ts';
import { vaultSecrets } from './config/vault.ts';
import type { ConfigService } from './config/service.ts';
import { poolProblems, poolRefs, retainPools, startPoolDiscovery, stopPoolDiscovery } from './inference-pool/registry.ts';
import type { KubeStart } from './config/kube-source.ts';
import { openState } from './state/shared-state.ts';
import type { SessionRevocations } from './state/session-revocations.ts';
import { markNotReady, markReady } from './state/readiness.ts';
import { Dependencies } from './state/dependencies.ts';
import { storeTimeoutMs } from './store-guard.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { createServices, type Services } from './services.ts';
import { TracingService } from './tracing/service.ts';
import { tracingSettings } from './tracing/settings.ts';
import { toolCallWatcher } from './tracing/tools.ts';
import { deliveryWatcher } from './tracing/webhooks.ts';
import { execute, startExecution } from './operations/execute.ts';
import { Metrics } from './metrics/metrics.ts';
import { residentBytes, startMemoryTrim, trimAfterStart, type Activity } from './memory-trim.ts';
import { applyGatewayV8FlagsAfterStart } from './v8-flags.ts';
import { limitMetrics } from './governance/limit-metrics.ts';
import { openRequestLogs, type RequestLogs } from './logs/open.ts';
import { SqlLogStore } from './logs/sql-store.ts';
import { DEFAULT_RETENTION_DAYS } from './logs/retention.ts';
import { startResponseCache, stopResponseCache } from './cache/start.ts';
import type { CacheRuntime } from './cache/runtime.ts';
import type { Webhooks } from './webhooks/start.ts';
import { GivenUpDeliveries } from './webhooks/given-up.ts';
import type { AsyncJobs } from './async/jobs.ts';
import { asyncRoutes } from './endpoints/async.ts';
import { skillsRoutes } from './endpoints/skills.ts';
import { openaiSkillsRoutes } from './endpoints/openai-skills.ts';
import type { SkillStore } from './skills/store.ts';
import { McpManager } from './mcp/manager.ts';
import { createGatewayServer, listen } from './http/server.ts';
import { servedOnAdminPort, splitRoutes } from './http/admin-port.ts';
import { installProcessGuards } from './http/process-guard.ts';
import { lazyHandler } from './http/lazy-handler.ts';
import { drainServer } from './http/shutdown.ts';
import { readTls, watchTls, type TlsTarget } from './http/tls.ts';
import { upgradeRoutes } from './http/upgrades.ts';
import { REALTIME_PATHS, realtimeFront } from './realtime/front.ts';
import { realtimeSecretRoutes } from './endpoints/realtime-secrets.ts';
import { RESPONSES_SOCKET_PATHS, responsesSockets } from './realtime/responses-socket.ts';
import { SessionCap } from './realtime/session-cap.ts';
import { callsFront } from './realtime/calls.ts';
import { LOCAL_CALLS, RedisCallDirectory } from './realtime/call-directory.ts';
import { RealtimeRegistry } from './realtime/registry.ts';
import { warnIfOpen } from './api/auth.ts';
import { buildRoutes, NATIVE_ROUTES } from './routes.ts';
import { EventHub } from './logs/live-events.ts';
import { AuditLog } from './audit/log.ts';
import { ManagementKeys } from './audit/keys.ts';
import { reloadEntry } from './audit/reload.ts';
import { dashboardFront } from './dashboard/front.ts';

/** How the gateway serves: the command line's options that are not about the process itself. */
export type GatewayOptions = Pick<CliOptions, 'appDir' | 'port' | 'host' | 'kubeNamespace' | 'limits' | 'shutdownGraceMs' | 'dashboard' | 'adminPort'> & Partial<Pick<CliOptions, 'tls' | 'memoryTrimMs'>> & {
  /** The Kubernetes source the start-up document came from (opened by the caller, which loaded it). */
  kube?: KubeStart;
  /** Install the process-wide guards once serving: the command line does; a test process keeps its own. */
  processGuards?: boolean;
};

export interface Gateway {
  /** The configuration's owner: its holder serves snapshots, its store keeps /api writes. */
  config: ConfigService;
  holder: SnapshotHolder;
  services: Services;
  /** Absent when request logging is off or its store could not be opened. */
  logs: RequestLogs | undefined;
  cache: CacheRuntime | undefined;
  webhooks: Webhooks | undefined;
  jobs: AsyncJobs | undefined;
  revocations: SessionRevocations | undefined;
  /** The inference listener (everything, without an admin port). */
  server: Server;
  port: number;
  /** The /api, /metrics and dashboard listener, with --admin-port. */
  admin: Server | undefined;
  adminPort: number | undefined;
  /** Stops taking requests and lets those in flight finish, up to the shutdown grace period; once. */
  drain(): Promise<void>;
  /** Drains (unless done), then stops the workers and closes the stores, in dependency order; once. */
  close(): Promise<void>;
}

/** A start-up that cannot go on (the response cache's store refused): the command line prints the message and exits 1. */
export class GatewayStartError extends Error {}

/** The watched config.json: read from the app dir, except in Kubernetes where the operator's rendering is the only source. */
export function configFile(opts: Pick<GatewayOptions, 'appDir' | 'kubeNamespace'>): string | undefined {
  return opts.appDir && !opts.kubeNamespace ? join(resolve(opts.appDir), 'config.json') : undefined;
}

/**
 * Quiet this long after the first traffic before the one collection a gateway makes without
 * --memory-trim. A memory-reducing collection lets die the maps only optimized code still holds, so
 * it deoptimizes that code (64 functions after a 3 s burst) and the next traffic compiles it again:
 * 1.2-2.1x CPU per request over the 20 s after a trim 1 s into a pause. A pause of this length is
 * idleness, not the gap between two bursts (V8's own memory reducer, after 8 s, has then given back most
 * of what it will), so traffic with pauses never pays for it.
 */
const FIRST_TRIM_QUIET_MS = 30_000;

/**
 * After a burst that grew the resident memory by this much (since the start trim or the last trim)
 * a gateway collects after a second of quiet, not 30: what saturation grew (the young generation at
 * its largest, old-space pages of thousands of requests' state, and the pages V8 freed but pools)
 * V8's own reducer gives back only about 8 s later. Resident, not the heap's committed bytes: the
 * pooled pages are a third of what a burst adds and the heap's figure leaves them out. Growth under
 * this keeps the process under about 150 MB, and steady traffic never has a second of quiet, so
 * trickles, short bursts and steady load pay for no recompiling (above).
 */
const BURST_TRIM_QUIET_MS = 1000;
const BURST_TRIM_GROWTH_BYTES = 64 * 2 ** 20;

export async function createGateway(loaded: LoadedConfig, opts: GatewayOptions): Promise<Gateway> {
  const { kube } = opts;
  // A certificate that cannot be served stops the start before anything is opened.
  let tls;
  try {
    tls = opts.tls && readTls(opts.tls);
  } catch (err) {
    throw new GatewayStartError((err as Error).message);
  }
  const file = configFile(opts);
  const fromFile = file !== undefined && existsSync(file);
  const appDir = resolve(opts.appDir ?? '.');
  const seedFrom = fromFile ? { kind: 'file' as const, source: file } : { kind: 'environment' as const, source: 'the environment' };
  // Redis, the cache's and the logs' stores register here: /health and /ready read them.
  const dependencies = new Dependencies();
  // Read by each store as it opens; checked here too, so a bad value stops the start even without one.
  storeTimeoutMs();
  // A bad OTEL_* variable stops the start naming it (config.json's otel fields were checked with the document).
  try {
    tracingSettings(loaded.config, process.env);
  } catch (err) {
    throw new GatewayStartError(`tracing: ${(err as Error).message}`);
  }
  const tracing = new TracingService(process.env);
  // Before the first snapshot is compiled: a provider naming an InferencePool gets its endpoints from here.
  startPoolDiscovery();
  const { service, counters, revocations, redis: sharedRedis, close: closeState } = await openState(loaded, opts.appDir, kube !== undefined, seedFrom, dependencies);
  if (!kube && service.store.kind === 'memory') log.warn('no --app-dir (and no redis): configuration changes made through /api or the dashboard live in memory only and are lost on restart; pass --app-dir DIR to keep them in DIR/config.store.json');
  const holder = service.holder;
  const catalog = new ModelCatalog();
  const metrics = new Metrics();
  // The dashboard's live events (this replica's): nothing is built while no dashboard socket listens.
  const events = new EventHub();
  // Opened from the start-up configuration: moving the store elsewhere takes a restart. Each
  // worker opens its own (SQLite in WAL mode takes several writer processes; PostgreSQL is shared).
  // A store that cannot be opened (PostgreSQL down) leaves logging off rather than the gateway down.
  const logs = await openRequestLogs(holder.current().config, appDir, { onDrop: (n) => metrics.logsDropped.inc(n), onWritten: (records) => events.logsWritten(records) }, kube === undefined, () => holder.current().config).catch((err: unknown) => {
    log.error('request logs store could not be opened: request logging is off until restart', { error: (err as Error).message });
    return undefined;
  });
  // The response cache's store, opened once from the start-up configuration; a namespace holding
  // another dimension, or a cache without a store, ends the start here with the spec's message.
  let cache: CacheRuntime | undefined;
  try {
    cache = await startResponseCache(holder.current().config, appDir, kube !== undefined);
  } catch (err) {
    await Promise.allSettled([logs?.close(), closeState()]);
    throw new GatewayStartError((err as Error).message);
  }
  // Server-backed stores that stop answering say so on /health (their plugins' status too); the
  // gateway serves on by their outage rules (a cache miss; log records queued, then dropped).
  const cacheStore = cache?.store;
  const logStore = logs?.store;
  if (cacheStore?.unavailable) dependencies.registerStore('cache_store', () => cacheStore.unavailable?.());
  if (logStore?.unavailable && logStore.kind === 'postgres') dependencies.registerStore('logs_store', () => logStore.unavailable?.());
  // The SQL logs store also holds MCP tool call logs, so /api/mcp-logs on any replica shows every replica's calls.
  const sql = logs?.store instanceof SqlLogStore ? logs.store.driver : undefined;
  // What lives in that database (MCP call logs, video jobs, webhooks, async jobs, skills) is code a
  // gateway without one never loads.
  const calls = sql && new (await import('./mcp/call-store.ts')).SqlMcpCallStore(sql, holder.current().config.client?.log_retention_days ?? DEFAULT_RETENTION_DAYS);
  const videos = sql && new (await import('./state/videos.ts')).VideoStore(sql);
  const mcp = new McpManager({
    ...(calls && { calls }),
    onChange: (c) => events.mcpClientChanged({ id: c.id, name: c.name, state: c.state, lastError: c.lastError }),
    // Agent turns run through the whole pipeline.
    runTurn: (snapshot, request) => execute(services, snapshot, request),
    watchers: [
      ({ client, tool }) => ({ meta: undefined, end: (outcome, seconds) => metrics.toolCalled(client, tool, outcome.failure ?? 'success', seconds) }),
      toolCallWatcher(tracing),
    ],
  });
  // Video jobs are recorded there too (the gateway's video ids), so any replica answers for any video.
  const services = createServices({ counters, catalog, metrics, events, mcp, dependencies, tracing, ...(logs && { logs: logs.writer }), ...(cache && { cache }), ...(videos && { videos }) });
  // Only the InferencePools the served configuration names are watched and scraped.
  holder.onSwap((next) => retainPools(poolRefs(next)));
  // MCP clients follow the snapshots.
  mcp.apply(holder.current());
  holder.onSwap((next) => mcp.apply(next));
  // Budget and rate-limit headroom per virtual key and team, read at scrape time.
  limitMetrics(metrics, () => holder.current(), counters);
  metrics.setConfigHash(holder.current().hash);
  holder.onSwap((next) => metrics.setConfigHash(next.hash));
  metrics.routingRulesSkipped.set(holder.current().routing.skipped.length);
  holder.onSwap((next) => metrics.routingRulesSkipped.set(next.routing.skipped.length));
  // The served revision: the operator's index revision in Kubernetes (none until one loads), else the hash.
  if (kube?.initial) metrics.configLoaded(kube.initial.index.revision);
  else if (!opts.kubeNamespace) metrics.configLoaded(holder.current().hash);
  if (!opts.kubeNamespace) holder.onSwap((next) => metrics.configLoaded(next.hash));
  // The audit log and the management API keys live in the logs store's database too (docs/audit.md).
  const audit = sql ? new AuditLog(sql, { settings: () => holder.current().config.audit_logs, onFailure: () => metrics.auditWriteFailures.inc() }) : undefined;
  const managementKeys = sql ? new ManagementKeys(sql) : undefined;
  // Said only when the section asks for an audit log: without one configured, no store is the default.
  const auditAsked = holder.current().config.audit_logs;
  if (!sql && auditAsked && auditAsked.disabled !== true) log.warn('audit_logs is set but no logs store is open: the audit log and issued management API keys are off (they live in the logs store; see docs/audit.md)');
  const watcher = fromFile
    ? watchConfigFile(file, service, () => metrics.configReloadErrors.inc(), (e) => void audit?.record(reloadEntry({ type: 'system', name: 'config file' }, e.file, e.before, e.after, e.hashBefore, e.hashAfter, { kept_from_api: e.kept, set_aside: e.setAside })))
    : undefined;
  if (kube) {
    // The operator's rendering, as this replica serves it: each revision is a change by the operator.
    // The stored documents themselves (each reload replaces the document, never changes it): compared, not copied.
    let served = { doc: service.storedDocument(), hash: service.current().hash };
    await kube.follow(service, () => metrics.configReloadErrors.inc(), (revision) => {
      metrics.configLoaded(revision);
      const next = { doc: service.storedDocument(), hash: service.current().hash };
      void audit?.record(reloadEntry({ type: 'system', name: 'kubernetes operator' }, `kubernetes namespace ${kube.source.namespace}`, served.doc, next.doc, served.hash, next.hash, { revision }));
      served = next;
    });
  }
  void catalog.refresh(holder.current());
  // Vault references are read again every TTL; a rotated value swaps the snapshot like a reload.
  // /health says `degraded` while the vault cannot answer (the last good values serve meanwhile).
  if (vaultSecrets.status().configured) dependencies.registerStore('vault', () => (vaultSecrets.status().state === 'down' ? (vaultSecrets.status().last_error ?? 'the vault does not answer') : undefined));
  vaultSecrets.start({
    onChange: async () => {
      const before = service.current().hash;
      await service.refreshSecrets();
      // A secret rotated in the vault: which one is not said (paths of the document only, no values).
      void audit?.record({ actor: { type: 'system', name: 'vault' }, action: 'rotate', resource: 'vault', outcome: 'success', details: { config_hash: { before, after: service.current().hash } } });
    },
    onRefresh: (ok) => {
      metrics.vaultUp.set(ok ? 1 : 0);
      if (!ok) metrics.vaultRefreshFailures.inc();
    },
  });
  // Returned, not dropped: an /api write answers once the catalog its `['*']` grants read is filled.
  holder.onSwap((next) => catalog.refresh(next));

  // Webhook deliveries live in the logs store's database: without one there are none to send.
  const webhooks = sql ? await (await import('./webhooks/start.ts')).startWebhooks(sql, holder, metrics, process.env, deliveryWatcher(tracing)) : undefined;
  // Async jobs live there too; without a store /v1/async answers 503 naming what is missing.
  const jobs = sql ? (await import('./async/jobs.ts')).startAsyncJobs({ driver: sql, current: () => holder.current(), services, metrics }) : undefined;
  // Given-up deliveries go to the dashboard's live events and, in Kubernetes, to the served report.
  const givenUp = new GivenUpDeliveries();
  if (webhooks) {
    webhooks.dispatcher.onGaveUp = (d) => {
      events.webhookGaveUp(d);
      givenUp.record(d.webhook, d.error);
    };
  }
  const { routes, patterns } = buildRoutes(NATIVE_ROUTES);
  // Ephemeral client secrets for realtime sessions (the sessions themselves are upgrades, below).
  Object.assign(routes, realtimeSecretRoutes());
  // Realtime sessions and the Responses API's WebSocket mode (upgrades, below) and WebRTC calls
  // (POST /v1/realtime/calls) are capped together per virtual key.
  const sessionCap = new SessionCap();
  // Open and recently ended realtime sessions (WebSocket, WebRTC) and Responses WebSocket connections, for /api and the dashboard.
  const realtimeSessions = new RealtimeRegistry((event, session) => events.realtimeSession(event, session));
  // A hangup may reach any replica: with a shared Redis the one holding the call is told.
  const callDirectory = sharedRedis ? new RedisCallDirectory(sharedRedis.conn, sharedRedis.prefix) : LOCAL_CALLS;
  const rtcCalls = callsFront({ services, cap: sessionCap, registry: realtimeSessions, directory: callDirectory });
  Object.assign(routes, rtcCalls.routes);
  patterns.push(...rtcCalls.patterns);
  const asyncSet = asyncRoutes(jobs);
  Object.assign(routes, asyncSet.routes);
  patterns.unshift(...asyncSet.patterns);
  // The skills repository lives there too: /api/skills manages it, /skills/* serves it to agents.
  const skills: SkillStore | undefined = sql ? new (await import('./skills/store.ts')).SkillStore(sql) : undefined;
  for (const set of [skillsRoutes(skills), openaiSkillsRoutes(skills)]) {
    Object.assign(routes, set.routes);
    patterns.push(...set.patterns);
  }
  warnIfOpen(service.current());
  // The dashboard (page, assets, /ws) unless --no-dashboard; its files are read on first visit.
  const dashboard = opts.dashboard ? dashboardFront({ current: () => holder.current(), events }) : undefined;
  // This replica's realtime sessions, listed by /api and announced on the dashboard's socket.
  // The management API (express and its routers) loads with the first /api request.
  const api = lazyHandler(async () =>
    (await import('./api/app.ts')).createApiHandler(service, logs && { store: logs.store, dropped: () => logs.writer.dropped }, webhooks?.dispatcher, mcp, cache, services.counters, {
      ...(dashboard && { tickets: dashboard.tickets }),
      realtime: realtimeSessions,
      playground: { run: (snapshot, request) => startExecution(services, snapshot, request), logsOpen: () => logs !== undefined },
      features: () => ({ logs: logs !== undefined, cache: cache !== undefined, mcp: true /* the MCP manager always runs: clients can be added at any time */, webhooks: webhooks !== undefined, async: jobs !== undefined, skills: skills !== undefined, audit: audit !== undefined }),
    }, services.guesses, revocations, skills, { ...(audit && { audit }), ...(managementKeys && { keys: managementKeys }) }),
  );
  // With --admin-port, /api, /metrics and the dashboard get a listener of their own (split before
  // serving: nothing is checked per request), and the inference port answers them 404.
  const split = opts.adminPort !== undefined ? splitRoutes(routes) : undefined;
  const server = split
    ? createGatewayServer(holder, services, split.inference, patterns, servedOnAdminPort, opts.limits, dashboard && servedOnAdminPort, tls)
    : createGatewayServer(holder, services, routes, patterns, api, opts.limits, dashboard?.pages, tls);
  const admin = split && createGatewayServer(holder, services, split.admin, [], api, opts.limits, dashboard?.pages, tls);
  // Both listeners serve the certificate; a renewed one replaces it on each.
  const tlsWatch = opts.tls && watchTls(opts.tls, [server, ...(admin ? [admin] : [])] as unknown as TlsTarget[], (ok) => metrics.tlsReloads.inc({ outcome: ok ? 'ok' : 'error' }));
  dashboard?.attach(admin ?? server);
  // Realtime sessions and the Responses API's WebSocket mode: upgrades of the inference listener.
  const realtime = realtimeFront({ current: () => holder.current(), services, cap: sessionCap, registry: realtimeSessions });
  const responseSockets = responsesSockets({ current: () => holder.current(), services, cap: sessionCap, registry: realtimeSessions });
  upgradeRoutes(server).add(REALTIME_PATHS, realtime.handle);
  upgradeRoutes(server).add(RESPONSES_SOCKET_PATHS, responseSockets.handle);

  // What runs now, stopped in dependency order: the workers and the MCP calls write to the logs
  // store's database, so it closes last.
  const stopAll = async (): Promise<void> => {
    watcher?.close();
    tlsWatch?.close();
    vaultSecrets.stop();
    await Promise.allSettled([
      servedReport?.stop(),
      callDirectory.close(),
      stopPoolDiscovery(),
      services.close(),
      cache && stopResponseCache(cache, holder.current().config),
      Promise.all([webhooks?.stop(), jobs?.close(), mcp.calls.close(), audit?.close(), managementKeys?.close()]).then(() => logs?.close()),
    ]);
    await closeState();
  };
  let servedReport: { stop(): Promise<void> } | undefined;
  let port: number;
  let adminPort: number | undefined;
  let binding = { flag: '--port', port: opts.port };
  try {
    port = (await listen(server, opts.port, opts.host)).port;
    binding = { flag: '--admin-port', port: opts.adminPort ?? 0 };
    adminPort = admin && (await listen(admin, opts.adminPort ?? 0, opts.host)).port;
  } catch (err) {
    server.close();
    // Bounded: a store closed under a background poll can leave a promise that never settles, and
    // with nothing else to wait for the process would end with code 0 before saying why.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([stopAll(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    // A newcomer's most common start failure: one line naming the port and the way out, no stack.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new GatewayStartError(`port ${binding.port} on ${opts.host} is already in use: stop what listens there, or choose another with ${binding.flag} N`);
    if (code === 'EACCES') throw new GatewayStartError(`port ${binding.port} on ${opts.host} needs privileges this process lacks: choose a port above 1023 with ${binding.flag} N`);
    throw err;
  }
  // Only once serving: a failure to start must still end the process.
  if (opts.processGuards) installProcessGuards();
  // The heap is the process's: only the process's own gateway gives back what its start grew
  // (once, before the first request) and what traffic grew: after every quiet moment when asked
  // (--memory-trim), else once after the first traffic (its first requests load and compile what
  // they use, which grows the young generation to its largest even for a handful of requests) and
  // after each burst that grew the heap by a saturation's worth.
  if (opts.processGuards) {
    trimAfterStart();
    // V8's memory reducer keeps collecting as ordinary collections from here on (v8-flags.ts).
    applyGatewayV8FlagsAfterStart();
  }
  // An open realtime session or Responses WebSocket relays without HTTP requests: it is traffic too,
  // and a trim while it relays is a pause of tens of milliseconds in its events.
  const activity: Activity = { started: metrics.activity.started, inFlight: () => metrics.activity.inFlight() + realtimeSessions.openCount };
  const trims = !opts.processGuards ? []
    : opts.memoryTrimMs !== undefined ? [startMemoryTrim(activity, { idleMs: opts.memoryTrimMs })]
    : [
        startMemoryTrim(activity, { idleMs: FIRST_TRIM_QUIET_MS, limit: 1, afterTraffic: true }),
        startMemoryTrim(activity, { idleMs: BURST_TRIM_QUIET_MS, growthBytes: BURST_TRIM_GROWTH_BYTES, fromStart: true, committed: residentBytes }),
      ];
  log.info('skybridge listening', {
    ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
    address: `${tls ? 'https' : 'http'}://${opts.host}:${port}`,
    ...(adminPort !== undefined && { admin_address: `${tls ? 'https' : 'http'}://${opts.host}:${adminPort}` }),
    config: kube ? `kubernetes namespace ${kube.source.namespace}` : fromFile ? file : 'environment',
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
  if (kube) {
    const { startServedReport } = await import('./state/served-report.ts');
    const source = kube.source;
    servedReport = startServedReport({ namespace: source.namespace, kc: (await import('./config/kube-source.ts')).defaultKubeConfig(), served: () => source.servedIndex, problem: () => source.problem, mcp, givenUp: () => givenUp.recent(), pools: () => poolProblems(holder.current()), webhooks: webhooks !== undefined, cache: cache !== undefined, ...(cluster.isWorker && cluster.worker ? { worker: cluster.worker.id } : {}) });
  }

  let drained: Promise<void> | undefined;
  let closed: Promise<void> | undefined;
  // Realtime sessions never end by themselves: they are ended between turns (close code 1001) while the listener drains.
  const drain = (): Promise<void> => (drained ??= Promise.all([realtime.drain(opts.shutdownGraceMs), rtcCalls.drain(opts.shutdownGraceMs), responseSockets.drain(opts.shutdownGraceMs), drainServer(server, opts.shutdownGraceMs, () => services.openStreams.cutAll())]).then(() => undefined));
  return {
    config: service,
    holder,
    services,
    logs,
    cache,
    webhooks,
    jobs,
    revocations,
    server,
    port,
    admin,
    adminPort,
    drain,
    close: () =>
      (closed ??= (async () => {
        await drain();
        // The admin listener serves no streams: it is closed, not drained (the process used to just exit).
        if (admin) {
          admin.closeIdleConnections();
          admin.closeAllConnections();
          admin.close();
        }
        for (const t of trims) t.stop();
        await stopAll();
      })()),
  };
}
