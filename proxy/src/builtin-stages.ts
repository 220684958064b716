// The built-in stages, one entry each, in the order they run: a new cross-cutting stage is its own
// module (which declares its part of the request context and of the services) plus one line here.
// Tracing first: its span holds the whole request, and its `after` runs last; then metrics.
import type { Snapshot } from './config/snapshot.ts';
import { governanceStages, initGovernanceFields } from './governance/stages.ts';
import { contentLoggingOff, loggingEnabled, loggingStage } from './logs/stage.ts';
import { metricsStage } from './metrics/stage.ts';
import { mcpStage } from './mcp/stage.ts';
import type { ContextServices, RequestContext } from './pipeline/context.ts';
import type { BuiltinStages, PluginEntry, PluginRegistry, Stage } from './pipeline/stage.ts';
import { OTEL_PLUGIN } from './schema/plugins.ts';
import { initTracingFields, tracedStage, tracingStage } from './tracing/stage.ts';

export interface Builtin {
  /** `caller`: run before the request is read (who calls); `request`: once it is. */
  list: keyof BuiltinStages;
  /** The entry's stages for one snapshot (built once per snapshot); none: left out of it. */
  stages(snapshot: Snapshot, services: ContextServices): readonly Stage[];
  /** Sets the context fields its stages own to their first values (see ContextServices.initContext). */
  context?(ctx: RequestContext): void;
  /** Wraps every other stage of the snapshot, plugins included (tracing: a span per stage); none: left as they are. */
  around?(snapshot: Snapshot, services: ContextServices): ((stage: Stage) => Stage) | undefined;
  /** The `plugins[]` name that configures this entry, for a plugin run as a builtin (schema/plugins.ts BUILTIN_RUN_PLUGINS). */
  plugin?: string;
}

export const BUILTINS: readonly Builtin[] = [
  // OpenTelemetry traces: the `otel` plugin entry or the OTEL_* variables turn it on (tracing/settings.ts);
  // off, it adds no stage and wraps none, and the SDK is never loaded.
  {
    list: 'caller',
    plugin: OTEL_PLUGIN,
    stages: (s, services) => {
      const t = services.tracing?.for(s);
      return t ? [tracingStage(t)] : [];
    },
    context: initTracingFields,
    around: (s, services) => {
      const t = services.tracing?.for(s);
      return t && tracedStage;
    },
  },
  { list: 'caller', stages: () => [metricsStage] },
  // Request logging switched on by `client.enable_logging` / `logs_store` (the reference's way) runs
  // as the logging plugin would, unless `plugins[]` names it, which then decides (placement, enabled, config).
  { list: 'caller', stages: (s) => (loggingEnabled(s) && !namesPlugin(s, 'logging') ? [loggingStage({ content: !contentLoggingOff(s) })] : []) },
  { list: 'caller', stages: (s) => governanceStages(s).caller, context: initGovernanceFields },
  { list: 'request', stages: (s) => governanceStages(s).request },
  // MCP last: it needs the caller (identify), and its agent turns are each planned and admitted
  // themselves. Left out where no MCP client is configured, so plain requests do not pay for it.
  { list: 'request', stages: (s, services) => (services.mcp && (s.config.mcp?.client_configs?.length ?? 0) > 0 ? [mcpStage(services.mcp)] : []) },
];

/** The stage lists of one snapshot. */
export function builtinStages(snapshot: Snapshot, services: ContextServices, builtins: readonly Builtin[] = BUILTINS): BuiltinStages {
  const lists: { caller: Stage[]; request: Stage[] } = { caller: [], request: [] };
  for (const b of builtins) {
    const wrap = aroundOthers(snapshot, services, builtins, b);
    const stages = b.stages(snapshot, services);
    lists[b.list].push(...(wrap ? stages.map(wrap) : stages));
  }
  return lists;
}

/** The registry's plugin stages, wrapped as the builtins are (`services`: read when a snapshot builds its stages). */
export function wrappedPlugins(registry: PluginRegistry, services: () => ContextServices, builtins: readonly Builtin[] = BUILTINS): PluginRegistry {
  if (!builtins.some((b) => b.around)) return registry;
  return new Map(
    [...registry].map(([name, make]) => [
      name,
      (config: unknown, snapshot: Snapshot) => {
        const stage = make(config, snapshot);
        const wrap = aroundOthers(snapshot, services(), builtins, undefined);
        return wrap ? wrap(stage) : stage;
      },
    ]),
  );
}

/** The entries' `around` wrappers for the stages of `self` (an entry does not wrap its own), composed; none: undefined. */
function aroundOthers(snapshot: Snapshot, services: ContextServices, builtins: readonly Builtin[], self: Builtin | undefined): ((stage: Stage) => Stage) | undefined {
  let out: ((stage: Stage) => Stage) | undefined;
  for (const b of builtins) {
    if (b === self || !b.around) continue;
    const wrap = b.around(snapshot, services);
    if (!wrap) continue;
    const inner = out;
    out = inner ? (stage) => wrap(inner(stage)) : wrap;
  }
  return out;
}

/** Sets the context fields every request starts with, in the entries' order. */
export function contextInit(builtins: readonly Builtin[] = BUILTINS): (ctx: RequestContext) => void {
  const inits = builtins.flatMap((b) => (b.context ? [b.context] : []));
  // One or two entries: called directly, without a loop.
  if (inits.length === 1) return inits[0];
  if (inits.length === 2) {
    const [a, b] = inits;
    return (ctx) => {
      a(ctx);
      b(ctx);
    };
  }
  return (ctx) => {
    for (const init of inits) init(ctx);
  };
}

function namesPlugin(snapshot: Snapshot, name: string): boolean {
  const plugins = (snapshot.config as { plugins?: PluginEntry[] }).plugins;
  return Array.isArray(plugins) && plugins.some((p) => p.name === name);
}
