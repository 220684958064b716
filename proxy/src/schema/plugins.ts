// The plugins this gateway runs, by the name `plugins[]` gives them. A list of names, not the
// registry (plugins.ts, which builds the stages): the config check tells a built plugin from one
// that is only stored without loading the cache and logging stages, and so does the operator.
// test/unit/plugin-names.test.ts holds the registry to this list.
import { SEMANTIC_CACHE_PLUGIN } from './cache.ts';

/** In the registry's order (the management API lists them so). */
export const BUILT_PLUGINS: ReadonlySet<string> = new Set(['logging', SEMANTIC_CACHE_PLUGIN]);

export function pluginNotBuilt(name: string): string {
  return `plugin '${name}' is not built into this gateway: its configuration is kept, but nothing runs`;
}
