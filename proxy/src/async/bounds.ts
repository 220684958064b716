// What one virtual key, and all keys together, may hold in the async job store: jobs waiting or
// running, and bytes kept (stored requests, results, errors of live jobs). Checked at submit, before
// the rate limits count the request; a submit over a bound answers 429 with Retry-After and the
// setting that bounds it, and nothing is stored.
import { GatewayError } from '../unified/errors.ts';
import type { JobStore } from './job-store.ts';
import type { AsyncSettings } from './settings.ts';

const MIB = 1024 * 1024;
const SETTING = 'client.async_job_config';

/** Seconds until `at` (an expiry that frees room), at least 1; 1 when nothing is due to expire. */
const secondsUntil = (at: number | undefined, now: number): number => (at === undefined ? 1 : Math.max(1, Math.ceil((at - now) / 1000)));

/**
 * The refusal for a new job of `key` (a virtual key's id and name; undefined: no key) whose stored
 * request is `bytes` long, or undefined when it fits.
 */
export async function overBound(store: JobStore, s: AsyncSettings, key: { id: string; name: string } | undefined, bytes: number, now = Date.now()): Promise<GatewayError | undefined> {
  const u = await store.usage(key?.id);
  const who = key ? `virtual key '${key.name}'` : 'callers without a virtual key';
  const full = (message: string, code: string, retryAfter: number) => new GatewayError(429, message, { type: 'rate_limit_error', code, retryAfter });
  if (u.keyPending + 1 > s.maxPendingPerKey) {
    return full(`${who} already has ${u.keyPending} async jobs waiting or running, the most allowed (${SETTING}.max_pending_jobs_per_key = ${s.maxPendingPerKey}): submit again once some have finished`, 'async_jobs_per_key_exceeded', 1);
  }
  if (u.keyBytes + bytes > s.maxStoredBytesPerKey) {
    return full(
      `${who} keeps ${(u.keyBytes / MIB).toFixed(1)} MiB in async jobs; this request (${(bytes / MIB).toFixed(1)} MiB) would pass the bound (${SETTING}.max_stored_mb_per_key = ${s.maxStoredBytesPerKey / MIB}): room is freed as results expire`,
      'async_storage_per_key_exceeded',
      secondsUntil(u.keyNextExpiry, now),
    );
  }
  if (u.pending + 1 > s.maxPending) {
    return full(`the gateway's async job store already has ${u.pending} jobs waiting or running, the most allowed (${SETTING}.max_pending_jobs = ${s.maxPending}): submit again once some have finished`, 'async_jobs_exceeded', 1);
  }
  if (u.bytes + bytes > s.maxStoredBytes) {
    return full(
      `the gateway's async job store keeps ${(u.bytes / MIB).toFixed(1)} MiB; this request (${(bytes / MIB).toFixed(1)} MiB) would pass the bound (${SETTING}.max_stored_mb = ${s.maxStoredBytes / MIB}): room is freed as results expire`,
      'async_storage_exceeded',
      secondsUntil(u.nextExpiry, now),
    );
  }
  return undefined;
}
