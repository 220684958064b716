// Opens the configured `vector_store` once, at start (as the request-log store is): moving the
// store elsewhere takes a restart. Each store's code (and a server store's client library) loads
// only when configured.
import { isAbsolute, join } from 'node:path';
import type { VectorStoreConfig } from '../schema/cache.ts';
import type { CacheStore } from './store.ts';
import { storeTimeoutMs } from '../store-guard.ts';

export const DEFAULT_CACHE_FILE = 'cache.db';

/** `timeoutMs`: the deadline of a server store's calls (SKYBRIDGE_STORE_TIMEOUT_MS). */
export async function openCacheStore(vectorStore: VectorStoreConfig, appDir: string, timeoutMs = storeTimeoutMs()): Promise<CacheStore> {
  const config = (vectorStore.config ?? {}) as Record<string, unknown>;
  switch (vectorStore.type) {
    case 'sqlite': {
      const path = typeof config.path === 'string' && config.path ? config.path : DEFAULT_CACHE_FILE;
      return new (await import('./sqlite-store.ts')).SqliteCacheStore(isAbsolute(path) ? path : join(appDir, path));
    }
    case 'redis':
      return (await import('./redis-store.ts')).openRedisCacheStore(config, process.env, timeoutMs);
    case 'postgres':
      return (await import('./pg-store.ts')).openPgCacheStore(config, process.env, timeoutMs);
    default:
      throw new Error(`vector_store type '${vectorStore.type}' cannot back the response cache on this gateway (sqlite, redis or postgres)`);
  }
}
