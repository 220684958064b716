// The load a model server reports on its Prometheus endpoint, read from the text exposition format.
// Pure. vLLM's names: `vllm:num_requests_waiting` (queue depth) and `vllm:kv_cache_usage_perc`
// (KV-cache use as a fraction, 0 to 1; `vllm:gpu_cache_usage_perc` before vLLM 0.10).

export interface ServerLoad {
  waiting?: number;
  kvCache?: number;
}

const WAITING = 'vllm:num_requests_waiting';
const KV_CACHE = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'];

/**
 * Queue depth (summed over the series: one per engine or model) and KV-cache use (the highest
 * series) from a metrics page; undefined fields when the page has no such series or an unreadable
 * value.
 */
export function parseServerLoad(text: string): ServerLoad {
  let waiting: number | undefined;
  const kv: (number | undefined)[] = KV_CACHE.map(() => undefined);
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseSample(line);
    if (!sample) continue;
    if (sample.name === WAITING) waiting = (waiting ?? 0) + sample.value;
    const k = KV_CACHE.indexOf(sample.name);
    if (k >= 0) kv[k] = Math.max(kv[k] ?? 0, sample.value);
  }
  const kvCache = kv.find((v) => v !== undefined);
  return { ...(waiting !== undefined && { waiting }), ...(kvCache !== undefined && { kvCache }) };
}

/** `name{labels} value [timestamp]`; undefined for a line that is not a finite sample. */
function parseSample(line: string): { name: string; value: number } | undefined {
  const brace = line.indexOf('{');
  let name: string;
  let rest: string;
  if (brace >= 0) {
    // Label values may hold spaces and braces when quoted: the series ends at the last '}'.
    const close = line.lastIndexOf('}');
    if (close < brace) return undefined;
    name = line.slice(0, brace).trim();
    rest = line.slice(close + 1);
  } else {
    const space = line.search(/\s/);
    if (space < 0) return undefined;
    name = line.slice(0, space);
    rest = line.slice(space);
  }
  const token = rest.trim().split(/\s+/)[0];
  if (!token) return undefined;
  const value = Number(token);
  return Number.isFinite(value) && value >= 0 ? { name, value } : undefined;
}
