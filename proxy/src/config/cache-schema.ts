// The response cache (spec: "Response cache plugin configuration", plugin name `semantic_cache`) and
// the vector store it needs. The single source of truth for this resource: ajv validates the plugin
// config with it, `Static` gives the types, and the CachePolicy CRD is generated from it.
import { Type, type Static } from '@sinclair/typebox';

export const SEMANTIC_CACHE_PLUGIN = 'semantic_cache';

/** Go duration (`30s`, `5m`, `1h`, `1h30m`); a bare integer means seconds. */
export const CACHE_TTL_PATTERN = '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$';

export const CACHE_DEFAULTS = {
  ttl_seconds: 300,
  threshold: 0.8,
  conversation_history_threshold: 3,
  exclude_system_prompt: false,
  cache_by_model: true,
  cache_by_provider: true,
  vector_store_namespace: 'BifrostSemanticCachePlugin',
  default_cache_key: '',
} as const;

/**
 * The plugin's `config`. Direct-only mode: `dimension` 1 and no `provider`. Semantic mode: a
 * `provider` with its `embedding_model`. Provider API keys come from the provider configuration.
 */
export const SemanticCacheConfigSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Embedding provider; required for semantic mode, omitted for direct-only.' })),
    embedding_model: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Required when provider is set; not allowed without it.' })),
    dimension: Type.Integer({ minimum: 1, description: "1 for direct-only; the embedding model's vector size for semantic." }),
    ttl: Type.Optional(
      Type.Union([Type.String({ maxLength: 64, pattern: CACHE_TTL_PATTERN }), Type.Integer({ minimum: 0 })], {
        description: "Entry lifetime: a duration ('30s', '5m', '24h') or integer seconds (default 5m).",
      }),
    ),
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Minimum cosine similarity of a semantic hit (default 0.8).' })),
    conversation_history_threshold: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Not cached when a conversation has more messages than this (default 3).' }),
    ),
    exclude_system_prompt: Type.Optional(Type.Boolean({ description: 'Leave system messages out of the cache key (default false).' })),
    cache_by_model: Type.Optional(Type.Boolean({ description: 'The model is part of the key (default true).' })),
    cache_by_provider: Type.Optional(Type.Boolean({ description: 'The provider is part of the key (default true).' })),
    vector_store_namespace: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'Bucket or index of the entries (default BifrostSemanticCachePlugin).' }),
    ),
    default_cache_key: Type.Optional(
      Type.String({ maxLength: 512, description: 'Cache key of requests without x-bf-cache-key; empty: those are not cached.' }),
    ),
    cleanup_on_shutdown: Type.Optional(Type.Boolean({ description: 'Drop the entries on shutdown (default false).' })),
  },
  { additionalProperties: false },
);

/** The `plugins[]` item that turns the cache on. */
export const SemanticCachePluginSchema = Type.Object(
  {
    name: Type.Literal(SEMANTIC_CACHE_PLUGIN),
    enabled: Type.Boolean(),
    config: SemanticCacheConfigSchema,
    placement: Type.Optional(Type.Union([Type.Literal('pre_builtin'), Type.Literal('post_builtin')])),
    order: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

export const VECTOR_STORE_TYPES = ['redis', 'weaviate', 'qdrant', 'pinecone'] as const;

/** config.json `vector_store`: must be enabled before the cache can be. Redis-compatible stores are `redis`. */
export const VectorStoreSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    type: Type.Union(VECTOR_STORE_TYPES.map((t) => Type.Literal(t))),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Store settings; for redis: addr, username, password, db, ... (env.VAR allowed).' })),
  },
  { additionalProperties: false },
);

export type SemanticCacheConfig = Static<typeof SemanticCacheConfigSchema>;
export type SemanticCachePlugin = Static<typeof SemanticCachePluginSchema>;
export type VectorStoreConfig = Static<typeof VectorStoreSchema>;
