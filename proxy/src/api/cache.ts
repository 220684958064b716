// /api/cache: clearing response cache entries, by entry id (`cache_id` of cache_debug) or by the
// cache key they were written under. Entries live in the configured store, so on a shared store
// (Redis, PostgreSQL) one call clears them for every replica.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { CacheRuntime } from '../cache/runtime.ts';
import { cacheConfigs } from '../cache/start.ts';
import { GatewayError } from '../unified/errors.ts';
import { pathParam, reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import type { CacheStats } from './answers.ts';

const MAX_PARAM = 512;

function param(req: Request, name: string): string {
  const v = pathParam(req, name);
  if (!v || v.length > MAX_PARAM) throw new GatewayError(400, `${name} must be 1 to ${MAX_PARAM} characters`, { param: name, code: 'invalid_field' });
  return v;
}

/** Every namespace an entry could be in: those in use, and those of each semantic_cache config (enabled or not). */
async function namespaces(service: ConfigService, cache: CacheRuntime): Promise<string[]> {
  for (const c of cacheConfigs(service.current().config, false)) await cache.ready(c.namespace, c.dimension);
  return cache.namespaces();
}

export function cacheRouter(service: ConfigService, cache: CacheRuntime | undefined): Router {
  const router = Router();
  const runtime = (): CacheRuntime => {
    if (!cache) throw new GatewayError(400, 'no response cache store is open on this gateway: enable vector_store (sqlite, redis or postgres) and restart', { param: 'vector_store', code: 'cache_not_configured' });
    return cache;
  };
  const clear = (remove: (c: CacheRuntime, ns: string, value: string) => Promise<number>, name: string) => async (req: Request, res: Response) => {
    const value = param(req, name);
    const c = runtime();
    // An entry this replica just served may still be on its way into the store: it is cleared too.
    await c.writesLanded();
    let deleted = 0;
    for (const ns of await namespaces(service, c)) deleted += await remove(c, ns, value);
    reply(res, 200, { message: 'Cache cleared successfully', deleted });
  };
  router.route('/stats').get(async (_req: Request, res: Response) => reply(res, 200, await cacheStats(service, cache))).all(methodNotAllowed);
  router.route('/clear/:cache_id').delete(clear((c, ns, id) => c.store.deleteById(ns, id), 'cache_id')).all(methodNotAllowed);
  router.route('/clear-by-key/:cache_key').delete(clear((c, ns, key) => c.store.deleteByKey(ns, key), 'cache_key')).all(methodNotAllowed);
  return router;
}

/** A counter's values by its one label (a counter without labels answers under `total`). */
async function byLabel(counter: { get(): Promise<{ values: ReadonlyArray<{ value: number; labels: Record<string, string | number | undefined> }> }> } | undefined, label?: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await counter?.get())?.values ?? []) {
    const key = label ? String(v.labels[label] ?? 'unknown') : 'total';
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}

/**
 * Hit rates for the dashboard, from the counters behind /metrics (this process only: each replica
 * and each cluster worker counts its own). The store is named by type, never by its settings.
 */
async function cacheStats(service: ConfigService, cache: CacheRuntime | undefined): Promise<CacheStats> {
  const vs = (service.current().config as { vector_store?: { enabled?: boolean; type?: string } }).vector_store;
  const store = { type: vs?.type ?? null, enabled: vs?.enabled === true, open: cache !== undefined };
  const m = cache?.counters;
  const hits = await byLabel(m?.hits, 'type');
  const misses = await byLabel(m?.misses, 'type');
  const hitTotal = Object.values(hits).reduce((a, b) => a + b, 0);
  const missTotal = Object.values(misses).reduce((a, b) => a + b, 0);
  return {
    store,
    ...(cache === undefined && { problem: await cacheProblem(service, cache) }),
    namespaces: cache?.namespaces() ?? [],
    hits: { direct: hits.direct ?? 0, semantic: hits.semantic ?? 0, total: hitTotal },
    misses: { direct: misses.direct ?? 0, semantic: misses.semantic ?? 0, total: missTotal },
    hit_rate: hitTotal + missTotal > 0 ? hitTotal / (hitTotal + missTotal) : null,
    bypassed: await byLabel(m?.bypassed, 'reason'),
    writes: (await byLabel(m?.writes)).total ?? 0,
    // Entries removed (evicted) or not written (skipped) to keep a virtual key within max_bytes_per_key.
    key_budget: { evicted: 0, skipped: 0, ...(await byLabel(m?.keyBudget, 'outcome')) },
    store_errors: await byLabel(m?.storeErrors, 'operation'),
  };
}

/** Why the semantic_cache plugin cannot run here (its /api/plugins status), if it cannot. */
/** Follows the live config: its namespace is checked (once; the answer is kept) before it is reported usable. */
export async function cacheProblem(service: ConfigService, cache: CacheRuntime | undefined): Promise<string | undefined> {
  if (!cache) return 'no response cache store is open on this gateway (vector_store is read at start; see the start-up log): nothing is cached';
  // Before the namespaces: their check would itself wait for a store that does not answer.
  const silent = cache.store.unavailable?.();
  if (silent) return `${silent}: lookups miss and answers are not kept until it answers`;
  for (const c of cacheConfigs(service.current().config)) {
    await cache.ready(c.namespace, c.dimension);
    const problem = cache.problem(c);
    if (problem) return problem;
  }
  return undefined;
}
