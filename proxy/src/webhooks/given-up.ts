// Deliveries this process gave up on (their last retry failed), kept for a window so the operator
// can warn on the Webhook resource while it keeps happening, and clear the warning once it stops.
import { EXHAUSTED_WINDOW_MS, type ServedWebhook } from '../state/served-contract.ts';

/** Bounded: one entry per webhook id, each a count and the newest time and error. */
export class GivenUpDeliveries {
  readonly #by = new Map<string, { times: number[]; error?: string }>();
  readonly #windowMs: number;

  constructor(windowMs = EXHAUSTED_WINDOW_MS) {
    this.#windowMs = windowMs;
  }

  record(webhook: string, error: string | undefined, now = Date.now()): void {
    const entry = this.#by.get(webhook) ?? { times: [] };
    entry.times.push(now);
    // Only the count within the window matters; a storm of failures keeps at most this many stamps.
    if (entry.times.length > 1000) entry.times.splice(0, entry.times.length - 1000);
    if (error !== undefined) entry.error = error;
    this.#by.set(webhook, entry);
  }

  /** Webhooks with deliveries given up within the window. */
  recent(now = Date.now()): Record<string, ServedWebhook> {
    const out: Record<string, ServedWebhook> = {};
    for (const [id, entry] of this.#by) {
      const since = now - this.#windowMs;
      const kept = entry.times.filter((t) => t > since);
      if (!kept.length) {
        this.#by.delete(id);
        continue;
      }
      entry.times = kept;
      out[id] = { exhausted: kept.length, ...(entry.error !== undefined ? { error: entry.error } : {}) };
    }
    return out;
  }
}
