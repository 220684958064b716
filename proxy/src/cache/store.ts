// What the response cache needs from a store (the spec's `vector_store`): exact lookups by the
// canonical request hash, nearest-neighbour lookups by embedding, writes with an expiry, and the two
// clears of the management API. One implementation per engine (embedded SQLite, Redis Stack with
// RediSearch, PostgreSQL with pgvector), so the cache stage is written once.

/** One cached answer. */
export interface CacheEntry {
  /** The entry's id (`cache_id` in cache_debug and `DELETE /api/cache/clear/{cache_id}`). */
  id: string;
  /**
   * Who may read it: the virtual key (or '' without one), the cache key and, per cache_by_model /
   * cache_by_provider, the model and provider, encoded as one string by the cache. Lookups only
   * match entries of the same scope.
   */
  scope: string;
  /** The cache key the entry was written under (for clear-by-key). */
  cacheKey: string;
  /** Hex SHA-256 of the canonical request (input, parameters, stream flag). */
  hash: string;
  /** The request's embedding (semantic mode only; length = the namespace's dimension). */
  vector?: Float32Array;
  /** The stored answer, serialised by the cache (opaque to the store). */
  value: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds; a read at or after it misses. */
  expiresAt: number;
}

export interface SemanticMatch {
  entry: CacheEntry;
  /** Cosine similarity, 0..1. */
  similarity: number;
}

/** Thrown by `init` when the namespace exists with another dimension (the spec's start-up error). */
export class DimensionMismatchError extends Error {
  readonly namespace: string;
  readonly existing: number;
  readonly required: number;
  constructor(namespace: string, existing: number, required: number) {
    super(`namespace ${namespace} already exists with dimension ${existing} but the config requires ${required}`);
    this.namespace = namespace;
    this.existing = existing;
    this.required = required;
  }
}

export interface CacheStore {
  readonly type: 'sqlite' | 'redis' | 'postgres';
  /** Creates the namespace (table / index) when missing; throws DimensionMismatchError when it exists with another dimension. */
  init(namespace: string, dimension: number): Promise<void>;
  /** The live entry of this scope with this hash, if any. */
  getDirect(namespace: string, scope: string, hash: string, now: number): Promise<CacheEntry | undefined>;
  /**
   * getDirect answered at once, for a store that answers without I/O waits (the embedded SQLite
   * file): a hit then costs the request no promise. Only for a namespace already initialised.
   */
  getDirectNow?(namespace: string, scope: string, hash: string, now: number): CacheEntry | undefined;
  /** The live entry of this scope nearest to `vector` with similarity >= `minSimilarity`, if any. */
  nearest(namespace: string, scope: string, vector: Float32Array, minSimilarity: number, now: number): Promise<SemanticMatch | undefined>;
  /** Writes (or replaces, by id) one entry. */
  put(namespace: string, entry: CacheEntry): Promise<void>;
  /** Removes one entry by id; resolves with the number removed (0 or 1). */
  deleteById(namespace: string, id: string): Promise<number>;
  /** Removes every entry written under this cache key; resolves with the number removed. */
  deleteByKey(namespace: string, cacheKey: string): Promise<number>;
  /** Removes expired entries; resolves with the number removed. */
  sweep(namespace: string, now: number): Promise<number>;
  /** Removes the namespace and everything in it (cleanup_on_shutdown). */
  drop(namespace: string): Promise<void>;
  close(): Promise<void>;
  /**
   * Why the store does not answer right now (a server store that missed its deadline, or is not
   * connected), if it does not: the plugin's status and /health say it. An embedded store has none.
   */
  unavailable?(): string | undefined;
}
