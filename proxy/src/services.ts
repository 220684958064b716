// Everything a gateway keeps across requests and snapshots, built once (main.ts, or a test running
// a gateway in process) and handed to every request: the usage counters, the model catalog, the
// metrics, and the pipeline with its stage lists. Nothing here is a module singleton, so two
// gateways in one process do not share state.
import type { Snapshot } from './config/snapshot.ts';
import type { CounterStore } from './governance/counters/store.ts';
import { MemoryCounterStore } from './governance/counters/memory.ts';
import { ModelCatalog } from './governance/catalog.ts';
import { governanceStages } from './governance/stages.ts';
import { Metrics } from './metrics/metrics.ts';
import { metricsStage } from './metrics/stage.ts';
import type { ContextServices } from './pipeline/context.ts';
import { Pipeline } from './pipeline/runner.ts';
import type { BuiltinStages, PluginRegistry } from './pipeline/stage.ts';
import { closePools } from './upstream/pools.ts';

export interface Services extends ContextServices {
  pipeline: Pipeline;
  /** Closes the upstream connection pools. */
  close(): Promise<void>;
}

/** Plugins the data plane can run, by the name `plugins[]` gives them. */
export const PLUGINS: PluginRegistry = new Map();

/** Metrics first: its `after` runs last, once every other stage has had its say. */
function builtinStages(snapshot: Snapshot): BuiltinStages {
  const governance = governanceStages(snapshot);
  return { caller: [metricsStage, ...governance.caller], request: governance.request };
}

export function createServices(opts: { counters?: CounterStore; catalog?: ModelCatalog; metrics?: Metrics; plugins?: PluginRegistry } = {}): Services {
  return {
    counters: opts.counters ?? new MemoryCounterStore(),
    catalog: opts.catalog ?? new ModelCatalog(),
    metrics: opts.metrics ?? new Metrics(),
    pipeline: new Pipeline(builtinStages, opts.plugins ?? PLUGINS),
    close: closePools,
  };
}
