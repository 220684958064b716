// The per-request cache headers (spec "Per-request cache headers"): read once per request.
import type { IncomingHttpHeaders } from 'node:http';
import { parseDurationMs } from './duration.ts';

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
  const key = one(h['x-bf-cache-key']);
  const ttl = one(h['x-bf-cache-ttl']);
  const threshold = one(h['x-bf-cache-threshold']);
  const type = one(h['x-bf-cache-type'])?.trim().toLowerCase();
  const t = threshold === undefined || threshold.trim() === '' ? NaN : Number(threshold);
  return {
    key: key === undefined || key === '' ? undefined : key,
    ttlMs: ttl === undefined ? undefined : parseDurationMs(ttl),
    threshold: Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : undefined,
    type: type === 'direct' || type === 'semantic' ? type : undefined,
    noStore: one(h['x-bf-cache-no-store'])?.trim().toLowerCase() === 'true',
  };
}
