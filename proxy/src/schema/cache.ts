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
    max_bytes_per_key: Type.Optional(
      Type.Integer({ minimum: 1, description: "Bytes of entries one virtual key may keep (default 268435456, 256 MiB); past it that key's oldest entries are evicted." }),
    ),
  },
  { additionalProperties: false },
);

/** The `plugins[]` item that turns the cache on. */
export const SemanticCachePluginSchema = Type.Object(
  {
    name: Type.Literal(SEMANTIC_CACHE_PLUGIN),
    enabled: Type.Boolean(),
    config: SemanticCacheConfigSchema,
    placement: Type.Optional(Type.Union([Type.Literal('pre_builtin'), Type.Literal('post_builtin')], { description: "Where the plugin runs: pre_builtin (before the gateway's own stages) or post_builtin (after; default)." })),
    order: Type.Optional(Type.Integer({ description: 'Order among the plugins of the same placement, ascending.' })),
  },
  { additionalProperties: false },
);

export const VECTOR_STORE_TYPES = ['sqlite', 'redis', 'postgres', 'weaviate', 'qdrant', 'pinecone'] as const;

/** Vector store kinds this gateway runs; the others are accepted (reference configs) but cannot back the cache. */
export const BUILT_VECTOR_STORES: ReadonlySet<string> = new Set(['sqlite', 'redis', 'postgres']);

/** The embedded store's file: relative paths are under the app directory (default `cache.db`). */
export const SqliteVectorConfigSchema = Type.Object(
  { path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'Database file (default cache.db in the app directory).' })) },
  { additionalProperties: false },
);

/** config.json `vector_store`: must be enabled before the cache can be. Redis-compatible stores are `redis`. */
export const VectorStoreSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    type: Type.Union(VECTOR_STORE_TYPES.map((t) => Type.Literal(t))),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Store settings. sqlite: path; redis: addr, username, password, db, ...; postgres: as logs_store postgres (env.VAR allowed).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Where a rule about a field was broken (the config loader's FieldError shape). */
interface CacheFieldError {
  path: string;
  message: string;
}

const validSqliteConfig = (config: unknown): boolean =>
  config === undefined || (typeof config === 'object' && config !== null && Object.keys(config).every((k) => k === 'path') && (((config as { path?: unknown }).path === undefined) || (typeof (config as { path?: unknown }).path === 'string' && ((config as { path: string }).path.length > 0))));

/**
 * Rules a JSON Schema cannot say (spec "Cache behavior" 6): the config must be valid; semantic mode
 * needs a provider with its embedding model; an embedding model without a provider means nothing.
 * `dimension` 1 with a provider is accepted (a reference config.json may have it): the config is
 * semantic, and the embedding's other dimension is reported at run time (rule 8). Rule 9 (a vector store first) is `vectorStoreProblem`: it is enforced where
 * a person writes the document (config.json at start, /api), not on a document Kubernetes renders,
 * where a CachePolicy without a store leaves the cache off and says so in the plugin's status.
 */
export function cacheConfigErrors(config: { plugins?: unknown; vector_store?: unknown }, validConfig: (v: unknown) => CacheFieldError[] | undefined): CacheFieldError[] {
  const errors: CacheFieldError[] = [];
  const vs = config.vector_store as VectorStoreConfig | undefined;
  if (vs?.type === 'sqlite' && !validSqliteConfig(vs.config)) errors.push({ path: 'vector_store.config.path', message: 'must be a non-empty string (the only sqlite setting)' });
  const plugins = Array.isArray(config.plugins) ? (config.plugins as { name?: unknown; enabled?: unknown; config?: unknown }[]) : [];
  plugins.forEach((p, i) => {
    if (!p || p.name !== SEMANTIC_CACHE_PLUGIN) return;
    const at = `plugins[${i}].config`;
    const problems = validConfig(p.config);
    if (problems) {
      errors.push(...problems.map((e) => ({ path: e.path ? `${at}.${e.path}` : at, message: e.message })));
      return;
    }
    const c = p.config as SemanticCacheConfig;
    if (c.embedding_model !== undefined && c.provider === undefined) errors.push({ path: `${at}.embedding_model`, message: 'is not allowed without provider (direct-only mode has neither)' });
    if (c.provider !== undefined && c.embedding_model === undefined) errors.push({ path: `${at}.embedding_model`, message: 'is required when provider is set (semantic mode)' });
  });
  return errors;
}

/** Rule 9: an enabled cache needs an enabled vector store this gateway runs (undefined: fine). */
export function vectorStoreProblem(config: { plugins?: unknown; vector_store?: unknown }): CacheFieldError | undefined {
  const plugins = Array.isArray(config.plugins) ? (config.plugins as { name?: unknown; enabled?: unknown }[]) : [];
  const i = plugins.findIndex((p) => p?.name === SEMANTIC_CACHE_PLUGIN && p.enabled === true);
  if (i < 0) return undefined;
  const vs = config.vector_store as VectorStoreConfig | undefined;
  if (!vs || vs.enabled !== true) return { path: 'vector_store', message: `an enabled vector_store is required before the ${SEMANTIC_CACHE_PLUGIN} plugin can be enabled (plugins[${i}])` };
  if (!BUILT_VECTOR_STORES.has(vs.type)) return { path: 'vector_store.type', message: `'${vs.type}' cannot back the ${SEMANTIC_CACHE_PLUGIN} plugin on this gateway: use sqlite, redis or postgres` };
  return undefined;
}

export type SemanticCacheConfig = Static<typeof SemanticCacheConfigSchema>;
export type SemanticCachePlugin = Static<typeof SemanticCachePluginSchema>;
export type VectorStoreConfig = Static<typeof VectorStoreSchema>;
