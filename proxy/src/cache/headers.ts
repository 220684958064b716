// The per-request cache headers (spec "Per-request cache headers"): read once per request.
import type { IncomingHttpHeaders } from 'node:http';
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

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

export function readCacheHeaders(h: IncomingHttpHeaders): CacheHeaders {
  const key = one(h[BF_HEADERS.cacheKey.name]);
  const ttl = one(h[BF_HEADERS.cacheTtl.name]);
  const threshold = one(h[BF_HEADERS.cacheThreshold.name]);
  const type = one(h[BF_HEADERS.cacheType.name])?.trim().toLowerCase();
  const t = threshold === undefined || threshold.trim() === '' ? NaN : Number(threshold);
  return {
    key: key === undefined || key === '' ? undefined : key,
    ttlMs: ttl === undefined ? undefined : parseDurationMs(ttl),
    threshold: Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : undefined,
    type: type === 'direct' || type === 'semantic' ? type : undefined,
    noStore: one(h[BF_HEADERS.cacheNoStore.name])?.trim().toLowerCase() === 'true',
  };
}
