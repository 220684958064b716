// Unified rerank <-> Cohere v2 /rerank.
import type { RerankRequest, RerankResponse, RerankResult } from '../../unified/rerank.ts';
import { documentText } from '../../unified/rerank.ts';
import { GatewayError } from '../../unified/errors.ts';
import type { CohereRerankRequest, CohereRerankResponse } from './types.ts';

export function toCohereRerankRequest(req: RerankRequest, model: string): CohereRerankRequest {
  const out: CohereRerankRequest = { model, query: req.query, documents: req.documents.map(documentText) };
  if (req.top_n !== undefined) out.top_n = req.top_n;
  if (req.max_tokens_per_doc !== undefined) out.max_tokens_per_doc = req.max_tokens_per_doc;
  return out;
}

export function fromCohereRerankResponse(body: CohereRerankResponse, req: RerankRequest, model: string): RerankResponse {
  if (!body || !Array.isArray(body.results)) {
    throw new GatewayError(502, 'cohere returned an unexpected rerank response', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'cohere', upstream: true });
  }
  const results: RerankResult[] = body.results
    .filter((r) => Number.isInteger(r.index) && typeof r.relevance_score === 'number')
    .map((r) => {
      const out: RerankResult = { index: r.index, relevance_score: r.relevance_score };
      const doc = req.documents[r.index];
      if (req.return_documents === true && doc !== undefined) out.document = typeof doc === 'string' ? { text: doc } : doc;
      return out;
    })
    .sort((a, b) => b.relevance_score - a.relevance_score);
  const res: RerankResponse = { results, model };
  if (body.id) res.id = body.id;
  const tokens = body.meta?.tokens?.input_tokens ?? body.meta?.billed_units?.input_tokens;
  if (typeof tokens === 'number') res.usage = { prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens };
  const units = body.meta?.billed_units?.search_units;
  if (typeof units === 'number') res.usage = { ...(res.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }), search_units: units };
  return res;
}
