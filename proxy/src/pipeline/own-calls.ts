// The gateway's own calls: upstream requests a feature makes for itself rather than for a caller
// (the response cache embedding a request's text, complexity routing embedding its examples and
// the request's text). They go through `invoke` (key pool, retries, the provider's adapter) but
// through no stage: no virtual key, no limits or budgets, no request log, no cache. That is on
// purpose (a cache that cached its own embeddings, or a budget charged for routing, would be
// wrong), so it is said here, in one place, and each call is counted by the feature that made it
// (skybridge_internal_requests_total{purpose}).
import type { EmbeddingRequest, EmbeddingResponse } from '../unified/embeddings.ts';
import { GatewayError } from '../unified/errors.ts';
import { parseAnswerJson } from './answer-body.ts';
import { invoke, type AttemptMetrics } from './invoke.ts';
import type { Target } from './target.ts';

/** The metrics an own call feeds (metrics/metrics.ts `Metrics` is one; the pipeline names no stage module). */
export interface OwnCallMetrics extends AttemptMetrics {
  readonly internalRequests: { labels(purpose: string, outcome: string): { inc(): void } };
}

/** Which feature made the call: the `purpose` label. */
export type OwnCallPurpose = 'cache_embedding' | 'complexity_embedding';

/** Embeddings of `input` from one target, for `purpose`; throws as `invoke` does. */
export async function ownEmbeddings(metrics: OwnCallMetrics, purpose: OwnCallPurpose, target: Target, input: string | string[], signal: AbortSignal): Promise<EmbeddingResponse> {
  const req = { model: target.model, input } as EmbeddingRequest;
  let outcome = 'error';
  try {
    const attempt = await invoke(
      [target],
      (t, adapter) => {
        if (!adapter.embeddingsRequest) throw new GatewayError(400, `provider '${t.provider.name}' has no embeddings`, { provider: t.provider.name });
        return adapter.embeddingsRequest(req, t.model);
      },
      signal,
      metrics,
    );
    const body = parseAnswerJson(await attempt.answer.text(), target.provider.name);
    const answer = attempt.adapter.embeddingsResponse!(body, req, attempt.target.model, attempt.up);
    outcome = 'success';
    return answer;
  } finally {
    metrics.internalRequests.labels(purpose, outcome).inc();
  }
}
