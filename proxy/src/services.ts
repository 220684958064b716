// Everything a gateway keeps across requests and snapshots, built once (gateway.ts, or a test running
// a gateway in process) and handed to every request: the usage counters, the model catalog, the
// metrics, and the pipeline with its stage lists. Nothing here is a module singleton, so two
// gateways in one process do not share state.
import type { CounterStore } from './governance/counters/store.ts';
import { MemoryCounterStore } from './governance/counters/memory.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { PLUGINS } from './plugins.ts';
import { Metrics } from './metrics/metrics.ts';
import type { ContextServices } from './pipeline/context.ts';
import { Pipeline } from './pipeline/runner.ts';
import type { PluginRegistry } from './pipeline/stage.ts';
import { closePools } from './upstream/pools.ts';
import { McpManager } from './mcp/manager.ts';
import { EventHub } from './logs/live-events.ts';
import { GuessThrottle } from './governance/guess-throttle.ts';
import { builtinStages, contextInit, wrappedPlugins } from './builtin-stages.ts';
import { TracingService } from './tracing/service.ts';
import { Dependencies } from './state/dependencies.ts';
import { OpenStreams } from './pipeline/open-streams.ts';

export interface Services extends ContextServices {
  pipeline: Pipeline;
  mcp: McpManager;
  events: EventHub;
  guesses: GuessThrottle;
  /** What the gateway depends on and can run without for a while (/health, /ready). */
  dependencies: Dependencies;
  tracing: TracingService;
  openStreams: OpenStreams;
  /** Closes the upstream connection pools. */
  close(): Promise<void>;
}

export { PLUGINS };

export function createServices(
  opts: { counters?: CounterStore; catalog?: ModelCatalog; metrics?: Metrics; plugins?: PluginRegistry; logs?: ContextServices['logs']; mcp?: McpManager; cache?: ContextServices['cache']; events?: EventHub; videos?: ContextServices['videos']; dependencies?: Dependencies; tracing?: TracingService } = {},
): Services {
  const mcp = opts.mcp ?? new McpManager();
  const tracing = opts.tracing ?? new TracingService();
  const services: Services = {
    initContext: contextInit(),
    ...(opts.logs && { logs: opts.logs }),
    ...(opts.cache && { cache: opts.cache }),
    ...(opts.videos && { videos: opts.videos }),
    counters: opts.counters ?? new MemoryCounterStore(),
    catalog: opts.catalog ?? new ModelCatalog(),
    metrics: opts.metrics ?? new Metrics(),
    mcp,
    events: opts.events ?? new EventHub(),
    guesses: new GuessThrottle(),
    dependencies: opts.dependencies ?? new Dependencies(),
    tracing,
    openStreams: new OpenStreams(),
    pipeline: new Pipeline((snapshot) => builtinStages(snapshot, services), wrappedPlugins(opts.plugins ?? PLUGINS, () => services)),
    close: async () => {
      await Promise.all([closePools(), mcp.close(), tracing.close()]);
    },
  };
  return services;
}
