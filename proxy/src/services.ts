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

export interface Services extends ContextServices {
  pipeline: Pipeline;
  /** Closes the upstream connection pools. */
  close(): Promise<void>;
}

export { PLUGINS };

/**
 * Metrics first: its `after` runs last, once every other stage has had its say. Request logging
 * switched on by `client.enable_logging` / `logs_store` (the reference's way) runs as the logging
 * plugin would, unless `plugins[]` names it, which then decides (placement, enabled, config).
 */
function builtinStages(snapshot: Snapshot): BuiltinStages {
  const governance = governanceStages(snapshot);
  const implicit: Stage[] = loggingEnabled(snapshot) && !namesPlugin(snapshot, 'logging') ? [loggingStage({ content: !contentLoggingOff(snapshot) })] : [];
  return { caller: [metricsStage, ...implicit, ...governance.caller], request: governance.request };
}

function namesPlugin(snapshot: Snapshot, name: string): boolean {
  const plugins = (snapshot.config as { plugins?: PluginEntry[] }).plugins;
  return Array.isArray(plugins) && plugins.some((p) => p.name === name);
}

export function createServices(
  opts: { counters?: CounterStore; catalog?: ModelCatalog; metrics?: Metrics; plugins?: PluginRegistry; logs?: ContextServices['logs'] } = {},
): Services {
  return {
    ...(opts.logs && { logs: opts.logs }),
    counters: opts.counters ?? new MemoryCounterStore(),
    catalog: opts.catalog ?? new ModelCatalog(),
    metrics: opts.metrics ?? new Metrics(),
    pipeline: new Pipeline(builtinStages, opts.plugins ?? PLUGINS),
    close: closePools,
  };
}
