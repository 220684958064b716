// A vLLM server's Prometheus endpoint (GET /metrics), as vLLM's OpenAI-compatible server exposes it:
// the text exposition format, one series per engine, labelled with the served model. The load is
// set by the test (MockProvider.setLoad, or POST /_mock/metrics); with none set the endpoint answers
// 404, as a server without metrics would.

export interface MockLoad {
  /** vllm:num_requests_waiting */
  waiting: number;
  /** vllm:kv_cache_usage_perc (a fraction, 0 to 1) */
  kvCache: number;
  /** Name the KV-cache gauge as vLLM before 0.10 did (vllm:gpu_cache_usage_perc). */
  legacyKvName?: boolean;
  /** vllm:num_requests_running */
  running?: number;
}

export function loadProblem(v: unknown): string | undefined {
  if (v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) return 'must be an object or null';
  const l = v as Record<string, unknown>;
  if (typeof l.waiting !== 'number' || l.waiting < 0) return 'waiting must be a number >= 0';
  if (typeof l.kvCache !== 'number' || l.kvCache < 0 || l.kvCache > 1) return 'kvCache must be a number from 0 to 1';
  return undefined;
}

export function metricsText(load: MockLoad, model = 'meta-llama/Llama-3.1-8B-Instruct'): string {
  const labels = `{engine="0",model_name="${model}"}`;
  const kv = load.legacyKvName ? 'vllm:gpu_cache_usage_perc' : 'vllm:kv_cache_usage_perc';
  return [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running${labels} ${(load.running ?? 0).toFixed(1)}`,
    '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
    '# TYPE vllm:num_requests_waiting gauge',
    `vllm:num_requests_waiting${labels} ${load.waiting.toFixed(1)}`,
    `# HELP ${kv} KV-cache usage. 1 means 100 percent usage.`,
    `# TYPE ${kv} gauge`,
    `${kv}${labels} ${load.kvCache}`,
    '',
  ].join('\n');
}
