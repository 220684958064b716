// Async job settings from the live configuration (client.async_job_result_ttl and
// client.async_job_config), read on each use so a config change applies to the next claim.
import type { GatewayConfig } from '../schema/gateway.ts';

export const DEFAULT_RESULT_TTL_SECONDS = 3600;
/** The most a job may ask for with x-bf-async-job-result-ttl: 30 days. */
export const MAX_RESULT_TTL_SECONDS = 2_592_000;

export interface AsyncSettings {
  resultTtlSeconds: number;
  leaseMs: number;
  pollMs: number;
  concurrency: number;
  maxAttempts: number;
  sweepMs: number;
  /** The largest result (JSON text, binary answers base64) a job keeps. */
  maxResultBytes: number;
  /** Jobs waiting or running per virtual key (jobs without a key count as one key), and in the store. */
  maxPendingPerKey: number;
  maxPending: number;
  /** Bytes kept per virtual key and in the store: stored requests, results and errors of live jobs. */
  maxStoredBytesPerKey: number;
  maxStoredBytes: number;
}

export function asyncSettings(config: GatewayConfig): AsyncSettings {
  const client = config.client;
  const c = client?.async_job_config;
  return {
    resultTtlSeconds: client?.async_job_result_ttl ?? DEFAULT_RESULT_TTL_SECONDS,
    leaseMs: (c?.lease_seconds ?? 30) * 1000,
    pollMs: c?.poll_interval_ms ?? 1000,
    concurrency: c?.max_concurrent_jobs ?? 16,
    maxAttempts: c?.max_attempts ?? 3,
    sweepMs: (c?.sweep_interval_seconds ?? 60) * 1000,
    maxResultBytes: (c?.max_result_size_mb ?? 32) * 1024 * 1024,
    maxPendingPerKey: c?.max_pending_jobs_per_key ?? 1000,
    maxPending: c?.max_pending_jobs ?? 10_000,
    maxStoredBytesPerKey: (c?.max_stored_mb_per_key ?? 256) * 1024 * 1024,
    maxStoredBytes: (c?.max_stored_mb ?? 4096) * 1024 * 1024,
  };
}
