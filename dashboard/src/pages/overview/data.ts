// The overview's numbers, all from the logs store's own aggregates (/api/logs/stats and the
// histogram endpoints, which bound their bucket count), never from fetching the rows themselves.
import { get, query } from '../../lib/api.ts';
import type { LogStats as Stats } from '../../../../proxy/src/api/answers.ts';

export const RANGES = [
  { value: '1h', label: 'Last hour', ms: 3600_000 },
  { value: '6h', label: 'Last 6 hours', ms: 6 * 3600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86400_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 86400_000 },
] as const;
export const DEFAULT_RANGE = '24h';

interface Bucket {
  timestamp: string;
}
export interface Overview {
  stats: Stats;
  bucketSeconds: number;
  times: string[];
  success: number[];
  errors: number[];
  tokens: number[];
  cost: number[];
  avgLatency: number[];
  p95Latency: number[];
  topModels: Top[];
  topProviders: Top[];
  topKeys: Top[];
  /** Virtual keys beyond the ones counted (there were too many to ask about one by one). */
  keysLeftOut: number;
}

export interface Top {
  name: string;
  requests: number;
  cost?: number;
  errors?: number;
}

/** Virtual keys counted one stats query each; more would make the overview slow on a big store. */
const MAX_KEYS = 25;

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function loadOverview(range: string, now = Date.now()): Promise<Overview> {
  const ms = RANGES.find((r) => r.value === range)?.ms ?? 24 * 3600_000;
  const window = { start_time: iso(now - ms), end_time: iso(now) };
  const q = query(window);
  type Hist<T> = { buckets: (Bucket & T)[]; bucket_size_seconds: number };
  const [stats, counts, tokens, cost, latency, models, providerLatency, providerCost, filters] = await Promise.all([
    get<Stats>(`/api/logs/stats${q}`),
    get<Hist<{ count: number; success: number; error: number }>>(`/api/logs/histogram${q}`),
    get<Hist<{ total_tokens: number }>>(`/api/logs/histogram/tokens${q}`),
    get<Hist<{ total_cost: number; by_model: Record<string, number> }>>(`/api/logs/histogram/cost${q}`),
    get<Hist<{ avg_latency: number; p95_latency: number; total_requests: number }>>(`/api/logs/histogram/latency${q}`),
    get<Hist<{ by_model: Record<string, { total: number; success: number; error: number }> }>>(`/api/logs/histogram/models${q}`),
    get<Hist<{ by_provider: Record<string, { total_requests: number }> }>>(`/api/logs/histogram/latency/by-provider${q}`),
    get<Hist<{ by_provider: Record<string, number> }>>(`/api/logs/histogram/cost/by-provider${q}`),
    get<{ virtual_keys: { id: string; name?: string }[] }>('/api/logs/filterdata'),
  ]);

  const modelTotals = new Map<string, Top>();
  for (const b of models.buckets) {
    for (const [m, v] of Object.entries(b.by_model)) {
      const t = modelTotals.get(m) ?? { name: m, requests: 0, errors: 0, cost: 0 };
      t.requests += v.total;
      t.errors = (t.errors ?? 0) + v.error;
      modelTotals.set(m, t);
    }
  }
  for (const b of cost.buckets) for (const [m, c] of Object.entries(b.by_model)) if (modelTotals.has(m)) modelTotals.get(m)!.cost! += c;

  const providerTotals = new Map<string, Top>();
  for (const b of providerLatency.buckets) {
    for (const [p, v] of Object.entries(b.by_provider)) {
      const t = providerTotals.get(p) ?? { name: p, requests: 0, cost: 0 };
      t.requests += v.total_requests;
      providerTotals.set(p, t);
    }
  }
  for (const b of providerCost.buckets) for (const [p, c] of Object.entries(b.by_provider)) if (providerTotals.has(p)) providerTotals.get(p)!.cost! += c;

  // No histogram groups by virtual key: ask the stats of each known key (bounded) within the window.
  const keys = filters.virtual_keys.slice(0, MAX_KEYS);
  const keyStats = await Promise.all(keys.map((k) => get<Stats>(`/api/logs/stats${query({ ...window, virtual_key_ids: k.id })}`)));
  const topKeys = keys
    .map((k, i) => ({ name: k.name && k.name !== k.id ? `${k.name} (${k.id})` : k.id, requests: keyStats[i]!.total_requests, cost: keyStats[i]!.total_cost }))
    .filter((k) => k.requests > 0);

  const byRequests = (a: Top, b: Top) => b.requests - a.requests || a.name.localeCompare(b.name);
  return {
    stats,
    bucketSeconds: counts.bucket_size_seconds,
    times: counts.buckets.map((b) => b.timestamp),
    success: counts.buckets.map((b) => b.success),
    errors: counts.buckets.map((b) => b.error),
    tokens: tokens.buckets.map((b) => b.total_tokens),
    cost: cost.buckets.map((b) => b.total_cost),
    // NaN marks a bucket without requests: a gap in the line, not a latency of 0.
    avgLatency: latency.buckets.map((b) => (b.total_requests > 0 ? b.avg_latency : NaN)),
    p95Latency: latency.buckets.map((b) => (b.total_requests > 0 ? b.p95_latency : NaN)),
    topModels: [...modelTotals.values()].sort(byRequests).slice(0, 8),
    topProviders: [...providerTotals.values()].sort(byRequests).slice(0, 8),
    topKeys: topKeys.sort(byRequests).slice(0, 8),
    keysLeftOut: Math.max(0, filters.virtual_keys.length - MAX_KEYS),
  };
}
