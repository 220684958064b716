// Everything a gateway keeps across requests and snapshots, built once (main.ts, or a test running
// a gateway in process) and handed to every request: the usage counters, the model catalog, the
// metrics, and the pipeline with its stage lists. Nothing here is a module singleton, so two
// gateways in one process do not share state.
import type { Snapshot } from './config/snapshot.ts';
import type { CounterStore } from './governance/counters/store.ts';
import { MemoryCounterStore } from './governance/counters/memory.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { governanceStages } from './governance/stages.ts';
import { contentLoggingOff, loggingEnabled, loggingStage } from './logs/stage.ts';
import { PLUGINS } from './plugins.ts';
import { Metrics } from './metrics/metrics.ts';
import { metricsStage } from './metrics/stage.ts';
import type { ContextServices } from './pipeline/context.ts';
import { Pipeline } from './pipeline/runner.ts';
import type { BuiltinStages, PluginEntry, PluginRegistry, Stage } from './pipeline/stage.ts';
import { closePools } from './upstream/pools.ts';
import { McpManager } from './mcp/manager.ts';
import { mcpStage } from './mcp/stage.ts';
import { EventHub } from './dashboard/events.ts';
import { GuessThrottle } from './governance/guess-throttle.ts';

export interface Services extends ContextServices {
  pipeline: Pipeline;
  mcp: McpManager;
  events: EventHub;
  guesses: GuessThrottle;
  /** Closes the upstream connection pools. */
  close(): Promise<void>;
}

export { PLUGINS };

/**
 * Metrics first: its `after` runs last, once every other stage has had its say. Request logging
 * switched on by `client.enable_logging` / `logs_store` (the reference's way) runs as the logging
 * plugin would, unless `plugins[]` names it, which then decides (placement, enabled, config).
 */
function builtinStages(snapshot: Snapshot, mcp: Stage): BuiltinStages {
  const governance = governanceStages(snapshot);
  const implicit: Stage[] = loggingEnabled(snapshot) && !namesPlugin(snapshot, 'logging') ? [loggingStage({ content: !contentLoggingOff(snapshot) })] : [];
  // MCP last: it needs the caller (identify), and its agent turns are each planned and admitted
  // themselves. Left out where no MCP client is configured, so plain requests do not pay for it.
  const request = (snapshot.config.mcp?.client_configs?.length ?? 0) > 0 ? [...governance.request, mcp] : governance.request;
  return { caller: [metricsStage, ...implicit, ...governance.caller], request };
}

function namesPlugin(snapshot: Snapshot, name: string): boolean {
  const plugins = (snapshot.config as { plugins?: PluginEntry[] }).plugins;
  return Array.isArray(plugins) && plugins.some((p) => p.name === name);
}

export function createServices(
  opts: { counters?: CounterStore; catalog?: ModelCatalog; metrics?: Metrics; plugins?: PluginRegistry; logs?: ContextServices['logs']; mcp?: McpManager; cache?: ContextServices['cache']; events?: EventHub } = {},
): Services {
  const mcp = opts.mcp ?? new McpManager();
  const stage = mcpStage(mcp);
  return {
    ...(opts.logs && { logs: opts.logs }),
    ...(opts.cache && { cache: opts.cache }),
    counters: opts.counters ?? new MemoryCounterStore(),
    catalog: opts.catalog ?? new ModelCatalog(),
    metrics: opts.metrics ?? new Metrics(),
    mcp,
    events: opts.events ?? new EventHub(),
    guesses: new GuessThrottle(),
    pipeline: new Pipeline((snapshot) => builtinStages(snapshot, stage), opts.plugins ?? PLUGINS),
    close: async () => {
      await Promise.all([closePools(), mcp.close()]);
    },
  };
}
