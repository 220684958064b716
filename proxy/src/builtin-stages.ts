// The built-in stages, one entry each, in the order they run: a new cross-cutting stage is its own
// module (which declares its part of the request context and of the services) plus one line here.
// Metrics first: its `after` runs last, once every other stage has had its say.
import type { Snapshot } from './config/snapshot.ts';
import { governanceStages, initGovernanceFields } from './governance/stages.ts';
import { contentLoggingOff, loggingEnabled, loggingStage } from './logs/stage.ts';
import { metricsStage } from './metrics/stage.ts';
import { mcpStage } from './mcp/stage.ts';
import type { ContextServices, RequestContext } from './pipeline/context.ts';
import type { BuiltinStages, PluginEntry, Stage } from './pipeline/stage.ts';

export interface Builtin {
  /** `caller`: run before the request is read (who calls); `request`: once it is. */
  list: keyof BuiltinStages;
  /** The entry's stages for one snapshot (built once per snapshot); none: left out of it. */
  stages(snapshot: Snapshot, services: ContextServices): readonly Stage[];
  /** Sets the context fields its stages own to their first values (see ContextServices.initContext). */
  context?(ctx: RequestContext): void;
}

export const BUILTINS: readonly Builtin[] = [
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
  for (const b of builtins) lists[b.list].push(...b.stages(snapshot, services));
  return lists;
}

/** Sets the context fields every request starts with, in the entries' order. */
export function contextInit(builtins: readonly Builtin[] = BUILTINS): (ctx: RequestContext) => void {
  const inits = builtins.flatMap((b) => (b.context ? [b.context] : []));
  // One entry today: called directly, without a loop.
  if (inits.length === 1) return inits[0];
  return (ctx) => {
    for (const init of inits) init(ctx);
  };
}

function namesPlugin(snapshot: Snapshot, name: string): boolean {
  const plugins = (snapshot.config as { plugins?: PluginEntry[] }).plugins;
  return Array.isArray(plugins) && plugins.some((p) => p.name === name);
}
