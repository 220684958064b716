// The embedded cache store (`vector_store.type: sqlite`): one SQLite file (node:sqlite, WAL), a
// table per namespace with its dimension recorded, vectors as float32 BLOBs next to their search
// signature. Lookups by hash use an index; nearest-neighbour search runs over an in-memory index
// per scope (vector-index.ts), loaded from the file on its first lookup and kept current by this
// process's writes. Calls are synchronous and short (indexed reads, one-row writes); the cache
// writes only after the answer went out. One process: other processes' writes reach this one's
// semantic index only when that scope is loaded again (see docs/cache.md).
import { closeSync, openSync, readSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { privateSqliteFile } from '../private-file.ts';
import { createHash } from 'node:crypto';
import { DimensionMismatchError, type CacheEntry, type CacheStore, type SemanticMatch } from './store.ts';
import { signatureOf, VectorIndex } from './vector-index.ts';

interface Row {
  id: string;
  scope: string;
  cache_key: string;
  hash: string;
  vector: Uint8Array | null;
  value: string;
  created_at: number;
  expires_at: number;
}

interface Namespace {
  table: string;
  dimension: number;
  byHash: StatementSync;
  byId: StatementSync;
  put: StatementSync;
  dropSameHash: StatementSync;
  deleteId: StatementSync;
  idsOfKey: StatementSync;
  deleteKey: StatementSync;
  expired: StatementSync;
  sweep: StatementSync;
  scopeVectors: StatementSync;
  /** The entries direct lookups found, by scope and hash (see getDirectNow). */
  found: Map<string, CacheEntry>;
  /** Loaded scopes' indexes. */
  indexes: Map<string, VectorIndex>;
  /** Scope of each id in a loaded index (for deletes by id or key). */
  scopeOf: Map<string, string>;
}

/** Scopes kept in memory per namespace; the least recently loaded is dropped beyond it. */
const MAX_LOADED_SCOPES = 1024;
/** Direct lookups' answers kept (see getDirectNow): at most this many, of values at most this long (4 MB at worst, shared with the stage's ready answers). */
const FOUND_MAX = 128;
const FOUND_MAX_CHARS = 32 * 1024;
/**
 * The WAL-index header at the start of the -shm file, both copies (https://www.sqlite.org/walformat.html,
 * "The WAL-Index Header"): every commit, by any connection, changes it (its change counter, last
 * frame and checksums); readers change only what follows it (the checkpoint info and read marks).
 */
const WAL_HEADER_BYTES = 96;

function tableName(namespace: string): string {
  return `cache_${createHash('sha256').update(namespace).digest('hex').slice(0, 24)}`;
}

const toBlob = (v: Float32Array | Int32Array): Uint8Array => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
const floats = (b: Uint8Array): Float32Array => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const ints = (b: Uint8Array): Int32Array => new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

function toEntry(row: Row): CacheEntry {
  return {
    id: row.id,
    scope: row.scope,
    cacheKey: row.cache_key,
    hash: row.hash,
    ...(row.vector ? { vector: floats(row.vector) } : {}),
    value: row.value,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

export class SqliteCacheStore implements CacheStore {
  readonly type = 'sqlite' as const;
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #namespaces = new Map<string, Namespace>();
  readonly #dataVersion: StatementSync;
  /** The file's data_version the found entries were read at (changes when another connection commits); -1: not known. */
  #seen = -1;
  /**
   * The -shm file, open for reading its WAL-index header: one read per lookup tells whether anyone
   * committed since the found entries were read, where PRAGMA data_version takes a read
   * transaction (two locks and a stat). Undefined when the file is not in WAL mode: the pragma then.
   */
  #shm: number | undefined;
  /** The header the found entries were read at (all zero: none yet), and a buffer to read it into. */
  readonly #header = Buffer.alloc(WAL_HEADER_BYTES);
  readonly #read = Buffer.alloc(WAL_HEADER_BYTES);

  constructor(path: string) {
    this.path = path;
    privateSqliteFile(path);
    this.#db = new DatabaseSync(path, { timeout: 5000 });
    const mode = (this.#db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode;
    this.#db.exec('PRAGMA synchronous = NORMAL');
    this.#db.exec('CREATE TABLE IF NOT EXISTS cache_namespaces (name TEXT PRIMARY KEY, table_name TEXT NOT NULL, dimension INTEGER NOT NULL)');
    this.#dataVersion = this.#db.prepare('PRAGMA data_version');
    // The connection has the -shm file open (and so kept) from its first read in WAL mode on.
    if (mode === 'wal' && path !== ':memory:' && path !== '' && !path.startsWith('file:')) {
      try {
        this.#shm = openSync(`${path}-shm`, 'r');
      } catch {
        this.#shm = undefined;
      }
    }
  }

  async init(namespace: string, dimension: number): Promise<void> {
    this.#open(namespace, dimension);
  }

  #open(namespace: string, dimension: number): Namespace {
    const known = this.#namespaces.get(namespace);
    if (known) {
      if (known.dimension !== dimension) throw new DimensionMismatchError(namespace, known.dimension, dimension);
      return known;
    }
    const row = this.#db.prepare('SELECT table_name, dimension FROM cache_namespaces WHERE name = ?').get(namespace) as { table_name: string; dimension: number } | undefined;
    if (row && Number(row.dimension) !== dimension) throw new DimensionMismatchError(namespace, Number(row.dimension), dimension);
    const t = row?.table_name ?? tableName(namespace);
    this.#db.exec(`CREATE TABLE IF NOT EXISTS ${t} (
      id TEXT PRIMARY KEY, scope TEXT NOT NULL, cache_key TEXT NOT NULL, hash TEXT NOT NULL,
      vector BLOB, sig BLOB, value TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
    // A direct lookup takes the newest live entry of a scope and hash: with created_at in the index
    // its ORDER BY reads the index backwards instead of sorting in a temporary B-tree on every lookup.
    // It replaces the (scope, hash) index of files written before (a prefix of this one).
    this.#db.exec(`CREATE INDEX IF NOT EXISTS ${t}_hash_at ON ${t} (scope, hash, created_at)`);
    this.#db.exec(`DROP INDEX IF EXISTS ${t}_hash`);
    this.#db.exec(`CREATE INDEX IF NOT EXISTS ${t}_key ON ${t} (cache_key)`);
    this.#db.exec(`CREATE INDEX IF NOT EXISTS ${t}_expires ON ${t} (expires_at)`);
    if (!row) this.#db.prepare('INSERT OR IGNORE INTO cache_namespaces (name, table_name, dimension) VALUES (?, ?, ?)').run(namespace, t, dimension);
    this.#wrote();
    const cols = 'id, scope, cache_key, hash, vector, value, created_at, expires_at';
    const ns: Namespace = {
      table: t,
      dimension,
      byHash: this.#db.prepare(`SELECT ${cols} FROM ${t} WHERE scope = ? AND hash = ? AND expires_at > ? ORDER BY created_at DESC LIMIT 1`),
      byId: this.#db.prepare(`SELECT ${cols} FROM ${t} WHERE id = ?`),
      put: this.#db.prepare(`INSERT OR REPLACE INTO ${t} (id, scope, cache_key, hash, vector, sig, value, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      dropSameHash: this.#db.prepare(`SELECT id FROM ${t} WHERE scope = ? AND hash = ? AND id <> ?`),
      deleteId: this.#db.prepare(`DELETE FROM ${t} WHERE id = ?`),
      idsOfKey: this.#db.prepare(`SELECT id FROM ${t} WHERE cache_key = ?`),
      deleteKey: this.#db.prepare(`DELETE FROM ${t} WHERE cache_key = ?`),
      expired: this.#db.prepare(`SELECT id FROM ${t} WHERE expires_at <= ?`),
      sweep: this.#db.prepare(`DELETE FROM ${t} WHERE expires_at <= ?`),
      scopeVectors: this.#db.prepare(`SELECT id, vector, sig, expires_at FROM ${t} WHERE scope = ? AND vector IS NOT NULL AND expires_at > ?`),
      found: new Map(),
      indexes: new Map(),
      scopeOf: new Map(),
    };
    this.#namespaces.set(namespace, ns);
    return ns;
  }

  #ns(namespace: string): Namespace {
    const ns = this.#namespaces.get(namespace);
    if (!ns) throw new Error(`cache namespace ${namespace} is not initialised`);
    return ns;
  }

  async getDirect(namespace: string, scope: string, hash: string, now: number): Promise<CacheEntry | undefined> {
    return this.getDirectNow(namespace, scope, hash, now);
  }

  /**
   * A direct lookup found before answers again without reading its row (a repeated hit reads no
   * value), while the file is as it was: no other connection (another worker) committed since
   * (data_version, read before the row), and this one's writes drop what they may change. The entry
   * returned is shared: callers do not change it.
   */
  getDirectNow(namespace: string, scope: string, hash: string, now: number): CacheEntry | undefined {
    const ns = this.#ns(namespace);
    if (this.#shm !== undefined) {
      if (!this.#readHeader(this.#read) || !this.#read.equals(this.#header)) {
        // Someone committed: what was found may be gone. The header read is the new baseline (the
        // rows read from now on are at least that new); data_version is no longer known to match it.
        this.#forgetFound();
        this.#read.copy(this.#header);
        this.#seen = -1;
      }
    } else {
      const version = this.#version();
      if (version !== this.#seen) {
        this.#forgetFound();
        this.#seen = version;
      }
    }
    const key = `${scope}\u0000${hash}`;
    const known = ns.found.get(key);
    // An expired one may hide an older entry still live (a longer x-bf-cache-ttl): asked again.
    if (known && known.expiresAt > now) return known;
    const row = ns.byHash.get(scope, hash, now) as Row | undefined;
    if (!row) return undefined;
    const entry = toEntry(row);
    if (entry.value.length <= FOUND_MAX_CHARS) {
      if (!known && ns.found.size >= FOUND_MAX) ns.found.delete(ns.found.keys().next().value!);
      ns.found.set(key, entry);
    }
    return entry;
  }

  #forgetFound(): void {
    for (const ns of this.#namespaces.values()) ns.found.clear();
  }

  #version(): number {
    return Number((this.#dataVersion.get() as { data_version: number }).data_version);
  }

  /** False when the header could not be read whole (the buffer then holds no baseline). */
  #readHeader(into: Buffer): boolean {
    if (readSync(this.#shm!, into, 0, WAL_HEADER_BYTES, 0) === WAL_HEADER_BYTES) return true;
    into.fill(0);
    return false;
  }

  /**
   * After this connection committed (its writes dropped the found entries they change): the header
   * moved, and the found entries stay only if nobody else committed since they were read. The
   * header is read on both sides of data_version (which counts other connections' commits only);
   * when it did not move in between, the version and the header describe the same file.
   */
  #wrote(): void {
    if (this.#shm === undefined) return;
    const before = this.#readHeader(this.#read);
    const version = this.#version();
    const consistent = this.#readHeader(this.#header) && before && this.#read.equals(this.#header);
    if (!consistent || version !== this.#seen) this.#forgetFound();
    this.#seen = consistent ? version : -1;
  }

  #index(ns: Namespace, scope: string, now: number): VectorIndex {
    let index = ns.indexes.get(scope);
    if (index) return index;
    index = new VectorIndex(ns.dimension);
    for (const r of ns.scopeVectors.iterate(scope, now) as Iterable<{ id: string; vector: Uint8Array; sig: Uint8Array | null; expires_at: number }>) {
      const v = floats(r.vector);
      if (r.sig) index.set(r.id, v, Number(r.expires_at), ints(r.sig));
      else index.set(r.id, v, Number(r.expires_at));
      ns.scopeOf.set(r.id, scope);
    }
    if (ns.indexes.size >= MAX_LOADED_SCOPES) this.#unload(ns, ns.indexes.keys().next().value as string);
    ns.indexes.set(scope, index);
    return index;
  }

  #unload(ns: Namespace, scope: string): void {
    ns.indexes.delete(scope);
    for (const [id, s] of ns.scopeOf) if (s === scope) ns.scopeOf.delete(id);
  }

  #forget(ns: Namespace, id: string): void {
    const scope = ns.scopeOf.get(id);
    if (scope === undefined) return;
    ns.scopeOf.delete(id);
    ns.indexes.get(scope)?.delete(id);
  }

  async nearest(namespace: string, scope: string, vector: Float32Array, minSimilarity: number, now: number): Promise<SemanticMatch | undefined> {
    const ns = this.#ns(namespace);
    const index = this.#index(ns, scope, now);
    // An id whose row is gone (cleared by another process) is dropped and the search repeated.
    for (let tries = 0; tries < 3; tries++) {
      const hit = index.nearest(vector, minSimilarity, now);
      if (!hit) return undefined;
      const row = ns.byId.get(hit.id) as Row | undefined;
      if (row && Number(row.expires_at) > now) return { entry: toEntry(row), similarity: hit.similarity };
      this.#forget(ns, hit.id);
    }
    return undefined;
  }

  async put(namespace: string, entry: CacheEntry): Promise<void> {
    const ns = this.#ns(namespace);
    const vector = entry.vector && entry.vector.length === ns.dimension ? entry.vector : undefined;
    if (entry.vector && !vector) throw new Error(`vector of dimension ${entry.vector.length} written to namespace ${namespace} of dimension ${ns.dimension}`);
    const signed = vector ? signatureOf(vector) : undefined;
    // It becomes the newest entry of its scope and hash.
    ns.found.delete(`${entry.scope}\u0000${entry.hash}`);
    // One live entry per request hash: an older one is replaced, not shadowed.
    for (const r of ns.dropSameHash.all(entry.scope, entry.hash, entry.id) as { id: string }[]) {
      ns.deleteId.run(r.id);
      this.#forget(ns, r.id);
    }
    ns.put.run(entry.id, entry.scope, entry.cacheKey, entry.hash, signed ? toBlob(signed.unit) : null, signed ? toBlob(signed.sig) : null, entry.value, entry.createdAt, entry.expiresAt);
    this.#wrote();
    const index = ns.indexes.get(entry.scope);
    if (index && signed) {
      index.set(entry.id, signed.unit, entry.expiresAt, signed.sig);
      ns.scopeOf.set(entry.id, entry.scope);
    }
  }

  async deleteById(namespace: string, id: string): Promise<number> {
    const ns = this.#ns(namespace);
    const n = Number(ns.deleteId.run(id).changes);
    this.#forget(ns, id);
    if (n) ns.found.clear();
    this.#wrote();
    return n;
  }

  async deleteByKey(namespace: string, cacheKey: string): Promise<number> {
    const ns = this.#ns(namespace);
    for (const r of ns.idsOfKey.all(cacheKey) as { id: string }[]) this.#forget(ns, r.id);
    const n = Number(ns.deleteKey.run(cacheKey).changes);
    if (n) ns.found.clear();
    this.#wrote();
    return n;
  }

  async sweep(namespace: string, now: number): Promise<number> {
    const ns = this.#ns(namespace);
    for (const r of ns.expired.all(now) as { id: string }[]) this.#forget(ns, r.id);
    // What it removed is gone for every reader, whatever time a later lookup is asked at.
    const n = Number(ns.sweep.run(now).changes);
    if (n) ns.found.clear();
    this.#wrote();
    return n;
  }

  async drop(namespace: string): Promise<void> {
    const ns = this.#namespaces.get(namespace);
    const row = this.#db.prepare('SELECT table_name FROM cache_namespaces WHERE name = ?').get(namespace) as { table_name: string } | undefined;
    const t = ns?.table ?? row?.table_name;
    if (t) this.#db.exec(`DROP TABLE IF EXISTS ${t}`);
    this.#db.prepare('DELETE FROM cache_namespaces WHERE name = ?').run(namespace);
    this.#namespaces.delete(namespace);
    this.#wrote();
  }

  async close(): Promise<void> {
    if (this.#shm !== undefined) closeSync(this.#shm);
    this.#shm = undefined;
    if (this.#db.isOpen) this.#db.close();
  }
}
