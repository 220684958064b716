// Which model server of a pool gets the next request: pure, so it is tested alone. The load each
// server reports (queue depth, KV-cache use) decides while it is fresh; round robin otherwise.

/** What is known of one server when a request is placed. */
export interface Candidate {
  /** Requests waiting in the server's queue (`vllm:num_requests_waiting`), from its last fresh scrape. */
  waiting?: number;
  /** KV-cache use, 0 to 1 (`vllm:kv_cache_usage_perc`), from its last fresh scrape. */
  kvCache?: number;
  /** Whether the last scrape answered within the staleness window. */
  fresh: boolean;
  /** Requests this proxy has sent it that are not over yet: load the server has not reported yet. */
  inFlight: number;
}

export interface Pick {
  index: number;
  /** least_loaded: by reported load; round_robin: no server had fresh metrics. */
  how: 'least_loaded' | 'round_robin';
}

/**
 * KV-cache use at or above which a server is passed over while another is below: it is about to
 * preempt or queue (the Inference Extension's reference picker filters at 0.8 by default; 0.9
 * leaves room for short spikes).
 */
export const KV_CACHE_SATURATED = 0.9;

/**
 * The server for the next request (`rr`: a counter the caller advances each pick), or undefined
 * when there is none. Servers with fresh metrics are scored by queue depth plus this proxy's own
 * requests in flight to them (which the next scrape will show), passing over saturated KV caches,
 * ties broken by KV-cache use and then in turn. Without a fresh report from any server every one
 * gets its turn.
 */
export function pickServer(candidates: readonly Candidate[], rr: number): Pick | undefined {
  if (candidates.length === 0) return undefined;
  let fresh = candidates.map((c, index) => ({ c, index })).filter((x) => x.c.fresh && x.c.waiting !== undefined);
  if (fresh.length === 0) return { index: rr % candidates.length, how: 'round_robin' };
  const roomy = fresh.filter((x) => (x.c.kvCache ?? 0) < KV_CACHE_SATURATED);
  if (roomy.length > 0) fresh = roomy;
  const score = (c: Candidate) => (c.waiting ?? 0) + c.inFlight;
  let best = Infinity;
  for (const x of fresh) best = Math.min(best, score(x.c));
  let tied = fresh.filter((x) => score(x.c) === best);
  let kv = Infinity;
  for (const x of tied) kv = Math.min(kv, x.c.kvCache ?? 0);
  tied = tied.filter((x) => (x.c.kvCache ?? 0) === kv);
  return { index: tied[rr % tied.length].index, how: 'least_loaded' };
}
