// The cache at start: the configured vector store opened once (moving it takes a restart), and
// every enabled `semantic_cache` config's namespace initialised, so a namespace holding vectors of
// another dimension fails start-up with the spec's message (rule 8). A store that cannot be reached
// leaves the cache off (logged; the plugin's status says why) rather than the gateway down.
import type { GatewayConfig } from '../schema/gateway.ts';
import { BUILT_VECTOR_STORES, SEMANTIC_CACHE_PLUGIN, vectorStoreProblem, type SemanticCacheConfig, type VectorStoreConfig } from '../schema/cache.ts';
import { log } from '../log.ts';
import { withEnvVectorStore } from './env.ts';
import { openCacheStore } from './open.ts';
import { CacheRuntime } from './runtime.ts';
import { resolveCacheConfig, type ResolvedCacheConfig } from './settings.ts';
import { DimensionMismatchError } from './store.ts';

/** The enabled semantic_cache configs of a document, defaults applied. */
export function cacheConfigs(config: GatewayConfig, enabledOnly = true): ResolvedCacheConfig[] {
  const plugins = (config as { plugins?: unknown }).plugins;
  if (!Array.isArray(plugins)) return [];
  return plugins
    .filter((p: { name?: unknown; enabled?: unknown; config?: unknown }) => p?.name === SEMANTIC_CACHE_PLUGIN && (!enabledOnly || p.enabled === true) && p.config)
    .map((p: { config: unknown }) => resolveCacheConfig(p.config as SemanticCacheConfig));
}

/**
 * Throws when start-up must fail: a namespace of another dimension (rule 8), or an enabled cache
 * without a vector store in a document a person wrote (rule 9). A Kubernetes-rendered document is
 * the operator's: there the cache stays off and the plugin's status says why. Any other failure
 * leaves the cache off.
 */
export async function startResponseCache(document: GatewayConfig, appDir: string, kubernetes = false): Promise<CacheRuntime | undefined> {
  const config = withEnvVectorStore(document);
  const problem = vectorStoreProblem(config);
  if (problem) {
    if (!kubernetes) throw new Error(`invalid configuration: ${problem.path}: ${problem.message}`);
    log.error('the response cache is configured without a usable vector store: it is off', { [problem.path]: problem.message });
  }
  const vs = (config as { vector_store?: VectorStoreConfig }).vector_store;
  if (!vs || vs.enabled !== true || !BUILT_VECTOR_STORES.has(vs.type)) return undefined;
  let runtime: CacheRuntime;
  try {
    runtime = new CacheRuntime(await openCacheStore(vs, appDir));
  } catch (err) {
    log.error('response cache store could not be opened: the cache is off until restart', { type: vs.type, error: (err as Error).message });
    return undefined;
  }
  for (const c of cacheConfigs(config)) {
    try {
      await runtime.init(c.namespace, c.dimension);
    } catch (err) {
      if (err instanceof DimensionMismatchError) {
        await runtime.close().catch(() => undefined);
        throw err;
      }
      log.error('response cache namespace could not be initialised: it is retried on use', { namespace: c.namespace, error: (err as Error).message });
    }
  }
  log.info('response cache store open', { type: vs.type });
  return runtime;
}

/** Closes the store, dropping the namespaces whose config asks for cleanup_on_shutdown. */
export async function stopResponseCache(runtime: CacheRuntime, config: GatewayConfig): Promise<void> {
  await runtime.close(cacheConfigs(config).filter((c) => c.cleanupOnShutdown).map((c) => c.namespace));
}
