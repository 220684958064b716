// The `semantic_cache` plugin's stage (spec "Cache behavior" 1-9). `before`: no cache key, a long
// conversation or an operation that is not cached pass by; otherwise a direct lookup by the
// canonical hash, a wait on an identical request already in flight on this replica, then (semantic
// mode) an embedding and a nearest-neighbour lookup. A hit answers in place of the call. On a miss
// the answer is captured (`tap` for streams) and, once it is complete and successful, written after
// it went out (setImmediate, never awaited on the answer's path).
import { randomUUID } from 'node:crypto';
import { log } from '../log.ts';
import { answerCost } from '../governance/cost.ts';
import type { SemanticCacheConfig } from '../schema/cache.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { Stage, StageFactory } from '../pipeline/stage.ts';
import { OPERATIONS } from '../unified/operations.ts';
import { debugMiss, directDebug, readyAnswer, serveDirect, serveReady, storedAnswer, MAX_STORED_BYTES, MAX_STORED_CHARS, MAX_STREAM_ITEMS, type CacheDebug, type ReadyAnswer } from './answer.ts';
import { embedText } from './embed.ts';
import { readCacheHeaders, type CacheHeaders } from './headers.ts';
import { conversationLength, identify, type CacheIdentity } from './identity.ts';
import type { CacheMetrics } from './metrics.ts';
import type { CacheRuntime } from './runtime.ts';
import { resolveCacheConfig, type ResolvedCacheConfig } from './settings.ts';
import type { CacheEntry } from './store.ts';

declare module '../pipeline/context.ts' {
  interface RequestContext {
    /** A cache hit's: the stored answer's price, which the hit saved (the log record's cost). */
    savedCost: number | undefined;
  }
}

/** The operations whose answers are cached (rule 5: the table's `cache`); relayed bodies (speech audio, plain-text transcripts) are captured by `tap`. */
const CACHED_OPERATIONS: ReadonlySet<string> = new Set(OPERATIONS.filter((op) => op.cache).map((op) => op.name));
/** How long a request waits for an identical one in flight before calling upstream itself. */
const FLIGHT_WAIT_MS = 120_000;
/** The embedding of an entry written after the answer gives up after this long. */
const EMBED_WRITE_TIMEOUT_MS = 30_000;

interface Miss {
  runtime: CacheRuntime;
  cfg: ResolvedCacheConfig;
  id: CacheIdentity;
  entryId: string;
  vector: Float32Array | undefined;
  ttlMs: number;
  debug: CacheDebug;
  write: boolean;
  /** The single-flight key this request leads, if it leads one. */
  flight: string | undefined;
  streamed: unknown[] | undefined;
  /** Bytes of a relayed body seen so far. */
  bytes: number;
}

const misses = new WeakMap<RequestContext, Miss>();

/** Entries kept read (by id) at most, and the longest stored value kept: a few MB at worst. */
const READY_MAX = 128;
const READY_MAX_CHARS = 32 * 1024;
/**
 * Entries served recently, read once: a hit on one of them parses nothing. Keyed by id and checked
 * against the value the store gave, so an entry replaced under its id is read anew.
 */
const readyEntries = new Map<string, { value: string; ready: ReadyAnswer }>();

function readyOf(entry: CacheEntry): ReadyAnswer | undefined {
  const known = readyEntries.get(entry.id);
  if (known && known.value === entry.value) return known.ready;
  const ready = readyAnswer(entry.value);
  if (ready && entry.value.length <= READY_MAX_CHARS) {
    // The oldest first out.
    if (!known && readyEntries.size >= READY_MAX) readyEntries.delete(readyEntries.keys().next().value!);
    readyEntries.set(entry.id, { value: entry.value, ready });
  }
  return ready;
}

function hit(ctx: RequestContext, m: CacheMetrics, entry: CacheEntry, debug: CacheDebug): Outcome | undefined {
  const ready = readyOf(entry);
  if (!ready) return undefined;
  const stored = ready.stored;
  // Stored by an in-process call but read over HTTP (or the reverse) cannot happen: the scope names the format.
  (debug.hit_type === 'direct' ? m.directHits : m.hits.labels(String(debug.hit_type))).inc();
  ctx.finalExtra = { cache_debug: debug };
  ctx.savedCost = stored.cost;
  ctx.provider = stored.provider || ctx.provider;
  ctx.model = stored.model || ctx.model;
  ctx.access.provider = ctx.provider;
  ctx.access.model = ctx.model;
  return debug.hit_type === 'direct' ? serveDirect(ready, debug) : serveReady(ready, debug);
}

async function timed<T>(m: CacheMetrics, type: 'direct' | 'semantic', op: 'get' | 'nearest', f: () => Promise<T>): Promise<T | undefined> {
  const start = performance.now();
  try {
    return await f();
  } catch (err) {
    return lookupFailed(m, type, op, err);
  } finally {
    (type === 'direct' ? m.directLookupSeconds : m.lookupSeconds.labels(type)).observe((performance.now() - start) / 1000);
  }
}

/** timed() for a store that answers at once (getDirectNow): the same metrics and failure rule, no promise. */
function timedNow<T>(m: CacheMetrics, f: () => T): T | undefined {
  const start = performance.now();
  try {
    return f();
  } catch (err) {
    return lookupFailed(m, 'direct', 'get', err);
  } finally {
    m.directLookupSeconds.observe((performance.now() - start) / 1000);
  }
}

function lookupFailed(m: CacheMetrics, type: 'direct' | 'semantic', op: 'get' | 'nearest', err: unknown): undefined {
  m.storeErrors.labels(op).inc();
  log.warn('response cache lookup failed: the request goes on uncached', { type, error: (err as Error).message });
  return undefined;
}

/**
 * Synchronous when the cache does not apply (no key, a long conversation, an operation not cached):
 * a bypassed request pays no promise and no lookup.
 */
function before(ctx: RequestContext, cfg: ResolvedCacheConfig): Outcome | undefined | Promise<Outcome | undefined> {
  const runtime = ctx.services.cache;
  if (!runtime || ctx.scope.kind !== 'model' || !CACHED_OPERATIONS.has(ctx.operation)) return undefined;
  const m = runtime.metrics(ctx.services.metrics);
  const headers = readCacheHeaders(ctx.headers);
  const cacheKey = headers.key ?? cfg.defaultCacheKey;
  if (!cacheKey) {
    m.bypassNoKey.inc();
    return undefined;
  }
  if (conversationLength((ctx.request ?? {}) as Record<string, unknown>) > cfg.conversationHistoryThreshold) {
    m.bypassLongConversation.inc();
    return undefined;
  }
  // An embedded store answers a direct lookup at once: a direct hit then costs no promise at all.
  const now = runtime.store.getDirectNow;
  if (now && isDirect(cfg, headers) && runtime.usable(cfg.namespace, cfg.dimension)) {
    const id = identify(ctx, cfg, cacheKey);
    const entry = timedNow(m, () => now.call(runtime.store, cfg.namespace, id.scope, id.hash, Date.now()));
    const served = entry && hit(ctx, m, entry, directDebug(entry.id));
    if (served) return served;
    return lookup(ctx, cfg, runtime, m, headers, cacheKey, id);
  }
  return lookup(ctx, cfg, runtime, m, headers, cacheKey);
}

/** Rule 6: in direct-only mode the type and threshold headers change nothing. */
const isDirect = (cfg: ResolvedCacheConfig, headers: CacheHeaders) => !(cfg.semantic && headers.type === 'semantic');

/** `looked`: the identity whose direct lookup already ran (getDirectNow) and missed. */
async function lookup(ctx: RequestContext, cfg: ResolvedCacheConfig, runtime: CacheRuntime, m: CacheMetrics, headers: CacheHeaders, cacheKey: string, looked?: CacheIdentity): Promise<Outcome | undefined> {
  // Known usable: no promise to wait on (the usual case once the namespace was first used).
  if (!looked && !runtime.usable(cfg.namespace, cfg.dimension) && !(await runtime.ready(cfg.namespace, cfg.dimension))) {
    m.bypassed.labels('store_unavailable').inc();
    return undefined;
  }
  const id = looked ?? identify(ctx, cfg, cacheKey);
  const ns = cfg.namespace;
  const direct = isDirect(cfg, headers);
  const semantic = cfg.semantic && headers.type !== 'direct' && id.text !== '';
  const flightKey = `${ns}\u0000${id.scope}\u0000${id.hash}`;

  const write = !headers.noStore;
  // Lead (before the embedding call, so an identical request arriving meanwhile waits for this one)
  // in the same turn as the check for a leader: of identical requests that all missed, exactly one
  // goes upstream, however their store lookups interleave.
  const tryLead = () => (write && runtime.flights.lead(flightKey) ? flightKey : undefined);
  let flight: string | undefined;
  if (direct) {
    if (!looked) {
      const entry = await timed(m, 'direct', 'get', () => runtime.store.getDirect(ns, id.scope, id.hash, Date.now()));
      const served = entry && hit(ctx, m, entry, directDebug(entry.id));
      if (served) return served;
    }
    // Answered on this replica but not yet in the store, or being answered now: that answer is this one's.
    const landing = runtime.flights.landing(flightKey);
    flight = landing ? undefined : tryLead();
    if (!flight) {
      const shared = landing ?? (await runtime.flights.wait(flightKey, ctx.signal, FLIGHT_WAIT_MS));
      const servedShared = shared && hit(ctx, m, shared, directDebug(shared.id));
      if (servedShared) return servedShared;
      // The leader failed, gave nothing to share or took too long: this request calls upstream itself.
      flight = tryLead();
    }
  } else flight = tryLead();
  // The id a miss's entry will have (made only once no direct hit answered).
  const entryId = randomUUID();
  let vector: Float32Array | undefined;
  const debug: CacheDebug = { cache_hit: false, cache_id: entryId };
  if (semantic) {
    try {
      const embedded = await embedText(ctx.snapshot, ctx.services.metrics, cfg.provider!, cfg.embeddingModel!, id.text, ctx.signal);
      Object.assign(debug, { provider_used: cfg.provider, model_used: cfg.embeddingModel, input_tokens: embedded.inputTokens });
      if (embedded.vector.length === cfg.dimension) vector = embedded.vector;
      else {
        // Rule 8: vectors of another dimension than the namespace's miss; the entry is still kept for direct lookups.
        m.storeErrors.labels('embed').inc();
        runtime.embeddingMismatch(cfg, embedded.vector.length);
      }
    } catch (err) {
      m.storeErrors.labels('embed').inc();
      log.warn('response cache embedding failed: semantic lookup skipped', { provider: cfg.provider, error: (err as Error).message });
    }
    if (vector) {
      // The header can only make the match stricter.
      const threshold = Math.max(cfg.threshold, headers.threshold ?? 0);
      const v = vector;
      const match = await timed(m, 'semantic', 'nearest', () => runtime.store.nearest(ns, id.scope, v, threshold, Date.now()));
      if (match) {
        const served = hit(ctx, m, match.entry, { ...debug, cache_hit: true, cache_id: match.entry.id, hit_type: 'semantic', threshold, similarity: match.similarity });
        if (served) {
          // Nothing new is written: waiters look up again themselves (and find this entry too).
          if (flight) runtime.flights.settle(flight, undefined);
          return served;
        }
      }
    }
  }

  (semantic && vector ? m.misses.labels('semantic') : m.directMisses).inc();
  if (!write) debug.cache_id = '';
  ctx.finalExtra = { cache_debug: debug };
  misses.set(ctx, { runtime, cfg, id, entryId, vector, ttlMs: headers.ttlMs ?? cfg.ttlMs, debug, write, flight, streamed: undefined, bytes: 0 });
  return undefined;
}

function after(ctx: RequestContext, result: Outcome): void {
  const miss = misses.get(ctx);
  if (!miss) return;
  misses.delete(ctx);
  const ok = result.kind !== 'error' && ctx.status >= 200 && ctx.status < 300 && !ctx.signal.aborted;
  const sentText = ok ? debugMiss(result, miss.debug) : undefined;
  if (!ok || !miss.write) {
    if (miss.flight) miss.runtime.flights.settle(miss.flight, undefined);
    return;
  }
  const provider = ctx.provider === 'none' ? '' : ctx.provider;
  const model = ctx.model ?? '';
  const streamed = miss.streamed;
  const cost = answerCost(ctx);
  // Off the answer's path: a JSON answer's after hooks run before it is written.
  setImmediate(() => {
    let entry: CacheEntry | undefined;
    try {
      const stored = storedAnswer(result, streamed, ctx.http === undefined, provider, model, sentText);
      if (stored && cost !== undefined) stored.cost = cost;
      const value = stored && JSON.stringify(stored);
      if (value !== undefined && value.length <= MAX_STORED_CHARS) {
        const now = Date.now();
        entry = {
          id: miss.entryId,
          scope: miss.id.scope,
          cacheKey: miss.id.cacheKey,
          hash: miss.id.hash,
          ...(miss.vector && { vector: miss.vector }),
          value,
          createdAt: now,
          expiresAt: now + miss.ttlMs,
        };
      }
    } catch (err) {
      log.warn('response cache could not keep an answer', { error: (err as Error).message });
    }
    if (miss.flight) miss.runtime.flights.settle(miss.flight, entry);
    if (entry) miss.runtime.track(write(ctx, miss, entry));
  });
}

/**
 * Stores the entry. In semantic mode an entry whose lookup ran direct only (x-bf-cache-type) gets
 * its embedding here, after the answer, so later paraphrases can still find it.
 */
async function write(ctx: RequestContext, miss: Miss, entry: CacheEntry): Promise<void> {
  const m = miss.runtime.metrics(ctx.services.metrics);
  const cfg = miss.cfg;
  // Not again when the lookup's embedding came back with another dimension: it would again.
  if (cfg.semantic && !entry.vector && miss.id.text && !miss.runtime.problem(cfg)) {
    try {
      const embedded = await embedText(ctx.snapshot, ctx.services.metrics, cfg.provider!, cfg.embeddingModel!, miss.id.text, AbortSignal.timeout(EMBED_WRITE_TIMEOUT_MS));
      if (embedded.vector.length === cfg.dimension) entry.vector = embedded.vector;
    } catch (err) {
      m.storeErrors.labels('embed').inc();
      log.warn('response cache embedding failed: the entry is kept for direct lookups only', { provider: cfg.provider, error: (err as Error).message });
    }
  }
  try {
    // A virtual key's entries stay within max_bytes_per_key: its oldest go first (callers without a key are not bounded here).
    const key = ctx.vk?.record.id;
    if (key !== undefined) {
      const bytes = Buffer.byteLength(entry.value) + (entry.vector?.length ?? 0) * 4;
      const verdict = miss.runtime.budget.admit(key, { namespace: cfg.namespace, id: entry.id, bytes, expiresAt: entry.expiresAt }, cfg.maxBytesPerKey, Date.now());
      if (!verdict.write) {
        m.keyBudget.labels('skipped').inc();
        return;
      }
      for (const old of verdict.evict) {
        await miss.runtime.store.deleteById(old.namespace, old.id);
        m.keyBudget.labels('evicted').inc();
      }
    }
    await miss.runtime.store.put(cfg.namespace, entry);
    m.writes.inc();
  } catch (err) {
    m.storeErrors.labels('put').inc();
    log.warn('response cache write failed', { error: (err as Error).message });
  } finally {
    if (miss.flight) miss.runtime.flights.landed(miss.flight);
  }
}

function tap(ctx: RequestContext, item: unknown): void {
  const miss = misses.get(ctx);
  if (!miss || !miss.write) return;
  const items = (miss.streamed ??= []);
  if (item instanceof Uint8Array) miss.bytes += item.length;
  if (items.length < MAX_STREAM_ITEMS && miss.bytes <= MAX_STORED_BYTES) items.push(item);
  else {
    // Too long to keep: served, not stored.
    miss.write = false;
    miss.streamed = undefined;
  }
}

/** The `semantic_cache` entry of the plugin registry (config validated with the document). */
export const semanticCachePlugin: StageFactory = (config) => {
  const cfg = resolveCacheConfig(config as SemanticCacheConfig);
  const stage: Stage = { name: 'semantic_cache', before: (ctx) => before(ctx, cfg), after, tap };
  return stage;
};
