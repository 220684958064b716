// The plugin's `config` with the spec's defaults applied, once per snapshot.
import { CACHE_DEFAULTS, type SemanticCacheConfig } from '../schema/cache.ts';
import { parseDurationMs } from './duration.ts';

export interface ResolvedCacheConfig {
  semantic: boolean;
  provider: string | undefined;
  embeddingModel: string | undefined;
  dimension: number;
  ttlMs: number;
  threshold: number;
  conversationHistoryThreshold: number;
  excludeSystemPrompt: boolean;
  cacheByModel: boolean;
  cacheByProvider: boolean;
  namespace: string;
  defaultCacheKey: string;
  cleanupOnShutdown: boolean;
  /** Bytes of entries one virtual key may keep (key-budget.ts). */
  maxBytesPerKey: number;
}

export const DEFAULT_MAX_BYTES_PER_KEY = 256 * 1024 * 1024;

export function resolveCacheConfig(c: SemanticCacheConfig): ResolvedCacheConfig {
  return {
    // Rule 6: a provider makes the config semantic (validation requires its model and dimension).
    semantic: c.provider !== undefined,
    provider: c.provider,
    embeddingModel: c.embedding_model,
    dimension: c.dimension,
    ttlMs: parseDurationMs(c.ttl ?? '') ?? CACHE_DEFAULTS.ttl_seconds * 1000,
    threshold: c.threshold ?? CACHE_DEFAULTS.threshold,
    conversationHistoryThreshold: c.conversation_history_threshold ?? CACHE_DEFAULTS.conversation_history_threshold,
    excludeSystemPrompt: c.exclude_system_prompt ?? CACHE_DEFAULTS.exclude_system_prompt,
    cacheByModel: c.cache_by_model ?? CACHE_DEFAULTS.cache_by_model,
    cacheByProvider: c.cache_by_provider ?? CACHE_DEFAULTS.cache_by_provider,
    namespace: c.vector_store_namespace ?? CACHE_DEFAULTS.vector_store_namespace,
    defaultCacheKey: c.default_cache_key ?? CACHE_DEFAULTS.default_cache_key,
    cleanupOnShutdown: c.cleanup_on_shutdown ?? false,
    maxBytesPerKey: c.max_bytes_per_key ?? DEFAULT_MAX_BYTES_PER_KEY,
  };
}
