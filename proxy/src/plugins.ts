// The plugins this gateway can run, by the name `plugins[]` gives them. The pipeline and the
// management API look names up here; neither knows a plugin by name.
import { loggingPlugin } from './logs/stage.ts';
import { semanticCachePlugin } from './cache/stage.ts';
import { SEMANTIC_CACHE_PLUGIN } from './schema/cache.ts';
import type { PluginRegistry } from './pipeline/stage.ts';

export const PLUGINS: PluginRegistry = new Map([
  ['logging', loggingPlugin],
  [SEMANTIC_CACHE_PLUGIN, semanticCachePlugin],
]);
