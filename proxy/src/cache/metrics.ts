// The cache's Prometheus series, on the gateway's own registry (one set per Metrics instance, so two
// gateways in one process keep theirs apart). Labels are fixed words: never a key or a model.
import { Counter, Histogram } from 'prom-client';
import { boundHistogram, type Metrics } from '../metrics/metrics.ts';

export interface CacheMetrics {
  /** type: direct | semantic */
  hits: Counter<'type'>;
  /** type: the lookups that ran and missed (direct, or semantic after direct) */
  misses: Counter<'type'>;
  /** reason: no_key | conversation_too_long | store_unavailable */
  bypassed: Counter<'reason'>;
  /** type: direct | semantic (semantic excludes the embedding call) */
  lookupSeconds: Histogram<'type'>;
  /** operation: get | nearest | put | delete | sweep | init | embed */
  storeErrors: Counter<'operation'>;
  writes: Counter<string>;
  /** outcome: evicted (an older entry of the key removed) | skipped (an entry larger than the whole bound) */
  keyBudget: Counter<'outcome'>;
  /** Bound children of the hottest series: a bypassed request pays no label lookup. */
  bypassNoKey: Counter.Internal;
  bypassLongConversation: Counter.Internal;
  /** A direct hit's series, bound once: a hit pays no label lookup either. */
  directHits: Counter.Internal;
  directMisses: Counter.Internal;
  directLookupSeconds: { observe(seconds: number): void };
}

const byRegistry = new WeakMap<Metrics, CacheMetrics>();

export function cacheMetrics(m: Metrics): CacheMetrics {
  let c = byRegistry.get(m);
  if (!c) {
    const registers = [m.registry];
    c = {
      hits: new Counter({ name: 'skybridge_cache_hits_total', help: 'Answers served from the response cache, by hit type.', labelNames: ['type'] as const, registers }),
      misses: new Counter({ name: 'skybridge_cache_misses_total', help: 'Cache lookups that found nothing, by the last lookup type that ran.', labelNames: ['type'] as const, registers }),
      bypassed: new Counter({ name: 'skybridge_cache_bypassed_total', help: 'Requests the cache did not look up, by reason.', labelNames: ['reason'] as const, registers }),
      lookupSeconds: new Histogram({
        name: 'skybridge_cache_lookup_duration_seconds',
        help: 'Time of one store lookup (semantic: the search only, not the embedding call).',
        labelNames: ['type'] as const,
        buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
        registers,
      }),
      storeErrors: new Counter({ name: 'skybridge_cache_store_errors_total', help: 'Cache store or embedding failures (the request went on uncached).', labelNames: ['operation'] as const, registers }),
      writes: new Counter({ name: 'skybridge_cache_writes_total', help: 'Entries written to the response cache.', registers }),
      keyBudget: new Counter({ name: 'skybridge_cache_key_budget_total', help: "Entries evicted, or not written, to keep a virtual key within max_bytes_per_key.", labelNames: ['outcome'] as const, registers }),
    } as CacheMetrics;
    c.bypassNoKey = c.bypassed.labels('no_key');
    c.bypassLongConversation = c.bypassed.labels('conversation_too_long');
    c.directHits = c.hits.labels('direct');
    c.directMisses = c.misses.labels('direct');
    c.directLookupSeconds = boundHistogram(c.lookupSeconds)('direct');
    byRegistry.set(m, c);
  }
  return c;
}
