// When to try again, when to move on to a fallback, and how long to wait in between.
import type { GatewayError } from '../unified/errors.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';

/** Rate limits, upstream server errors, timeouts and broken connections are worth another try. */
export function isRetryable(err: GatewayError): boolean {
  if (err.type === 'upstream_connection_error' || err.type === 'upstream_timeout') return true;
  return err.upstream && (err.status === 429 || err.status >= 500);
}

/** Statuses that mean the client's own request is wrong: another provider would refuse it too. */
const CLIENT_FAULT = new Set([400, 404, 405, 413, 415, 422]);

export function canFallback(err: GatewayError): boolean {
  if (err.type === 'unsupported_operation') return true;
  return !CLIENT_FAULT.has(err.status);
}

/** Exponential backoff with full jitter; an upstream's Retry-After wins when it asks for longer. */
export function backoffMs(provider: ProviderRuntime, attempt: number, retryAfterSeconds: number | undefined): number {
  const ceiling = Math.min(provider.backoffMaxMs, provider.backoffInitialMs * 2 ** attempt);
  const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
  if (retryAfterSeconds !== undefined) return Math.max(jittered, Math.min(retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS));
  return jittered;
}

/** A Retry-After longer than this is not waited out inside one client request. */
const MAX_RETRY_AFTER_MS = 60_000;

export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
