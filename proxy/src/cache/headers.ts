// The per-request cache headers (spec "Per-request cache headers"): read once per request.
import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '../unified/errors.ts';
import { parseDurationMs } from './duration.ts';
import { BF_HEADERS } from '../bf-headers.ts';

export interface CacheHeaders {
  key: string | undefined;
  /** Milliseconds; undefined when absent or invalid (invalid values are ignored). */
  ttlMs: number | undefined;
  /** Clamped to [0, 1]; undefined when absent or not a number. */
  threshold: number | undefined;
  type: 'direct' | 'semantic' | undefined;
  noStore: boolean;
}

/**
 * The longest lifetime a request may ask for with x-bf-cache-ttl: 7 days. Without a bound one caller
 * could pin entries (and their bytes) in a shared store for ever.
 */
export const MAX_HEADER_TTL_SECONDS = 604_800;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Throws a 400 naming x-bf-cache-ttl when it asks for more than MAX_HEADER_TTL_SECONDS (other invalid values are ignored, per the spec). */
export function readCacheHeaders(h: IncomingHttpHeaders): CacheHeaders {
  const key = one(h[BF_HEADERS.cacheKey.name]);
  const ttl = one(h[BF_HEADERS.cacheTtl.name]);
  const ttlMs = ttl === undefined ? undefined : parseDurationMs(ttl);
  if (ttlMs !== undefined && ttlMs > MAX_HEADER_TTL_SECONDS * 1000) {
    throw invalidRequest(`${BF_HEADERS.cacheTtl.name} asks for ${ttl!.trim().slice(0, 32)}; the most a request may ask for is ${MAX_HEADER_TTL_SECONDS} seconds (7 days)`, BF_HEADERS.cacheTtl.name);
  }
  const threshold = one(h[BF_HEADERS.cacheThreshold.name]);
  const type = one(h[BF_HEADERS.cacheType.name])?.trim().toLowerCase();
  const t = threshold === undefined || threshold.trim() === '' ? NaN : Number(threshold);
  return {
    key: key === undefined || key === '' ? undefined : key,
    ttlMs,
    threshold: Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : undefined,
    type: type === 'direct' || type === 'semantic' ? type : undefined,
    noStore: one(h[BF_HEADERS.cacheNoStore.name])?.trim().toLowerCase() === 'true',
  };
}
