// The per-request cache headers (spec "Per-request cache headers"): read once per request.
import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '../unified/errors.ts';
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

/**
 * The longest lifetime a request may ask for with x-bf-cache-ttl: 7 days. Without a bound one caller
 * could pin entries (and their bytes) in a shared store for ever.
 */
export const MAX_HEADER_TTL_SECONDS = 604_800;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Throws a 400 naming x-bf-cache-ttl when it asks for more than MAX_HEADER_TTL_SECONDS (other invalid values are ignored, per the spec). */
export function readCacheHeaders(h: IncomingHttpHeaders): CacheHeaders {
  const key = one(h['x-bf-cache-key']);
  const ttl = one(h['x-bf-cache-ttl']);
  const ttlMs = ttl === undefined ? undefined : parseDurationMs(ttl);
  if (ttlMs !== undefined && ttlMs > MAX_HEADER_TTL_SECONDS * 1000) {
    throw invalidRequest(`x-bf-cache-ttl asks for ${ttl!.trim().slice(0, 32)}; the most a request may ask for is ${MAX_HEADER_TTL_SECONDS} seconds (7 days)`, 'x-bf-cache-ttl');
  }
  const threshold = one(h['x-bf-cache-threshold']);
  const type = one(h['x-bf-cache-type'])?.trim().toLowerCase();
  const t = threshold === undefined || threshold.trim() === '' ? NaN : Number(threshold);
  return {
    key: key === undefined || key === '' ? undefined : key,
    ttlMs,
    threshold: Number.isFinite(t) ? Math.min(1, Math.max(0, t)) : undefined,
    type: type === 'direct' || type === 'semantic' ? type : undefined,
    noStore: one(h['x-bf-cache-no-store'])?.trim().toLowerCase() === 'true',
  };
}
