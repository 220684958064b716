// The retry schedule (spec: "Async job and webhook delivery"): after failed attempt n (1-based) the
// next one waits initial * 2^(n-1) seconds, capped at max; after 1 + max_retries attempts the
// delivery is exhausted.
import type { WebhookSettings } from '../schema/webhooks.ts';

/** The delay before the next attempt after `failedAttempts` failures, or undefined when none remain. */
export function retryDelayMs(failedAttempts: number, s: Pick<WebhookSettings, 'max_retries' | 'retry_backoff_initial_seconds' | 'retry_backoff_max_seconds'>): number | undefined {
  if (failedAttempts > s.max_retries) return undefined;
  const seconds = Math.min(s.retry_backoff_initial_seconds * 2 ** (failedAttempts - 1), s.retry_backoff_max_seconds);
  return seconds * 1000;
}
