// Unified embeddings <-> Cohere v2 /embed. Cohere needs `input_type` for v3+ models; documents for
// retrieval (`search_document`) is the default, overridable with the request's own `input_type`.
import type { EmbeddingRequest, EmbeddingResponse } from '../../unified/embeddings.ts';
import { GatewayError, invalidRequest } from '../../unified/errors.ts';
import type { CohereEmbedRequest, CohereEmbedResponse } from './types.ts';

export const DEFAULT_INPUT_TYPE = 'search_document';

export function toCohereEmbedRequest(req: EmbeddingRequest, model: string): CohereEmbedRequest {
  const input = req.input;
  let texts: string[];
  if (typeof input === 'string') texts = [input];
  else if (input.every((v) => typeof v === 'string')) texts = input as string[];
  else throw invalidRequest('cohere embeddings take text input, not token arrays', 'input');
  const extra = req as { input_type?: unknown; truncate?: unknown };
  const out: CohereEmbedRequest = {
    model,
    texts,
    input_type: typeof extra.input_type === 'string' ? extra.input_type : DEFAULT_INPUT_TYPE,
    embedding_types: ['float'],
  };
  if (req.dimensions !== undefined) out.output_dimension = req.dimensions;
  if (typeof extra.truncate === 'string') out.truncate = extra.truncate;
  return out;
}

export function fromCohereEmbedResponse(body: CohereEmbedResponse, model: string): EmbeddingResponse {
  const vectors = body?.embeddings?.float;
  if (!Array.isArray(vectors)) {
    throw new GatewayError(502, 'cohere returned an embed response without float embeddings', { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'cohere', upstream: true });
  }
  const tokens = body.meta?.billed_units?.input_tokens ?? body.meta?.tokens?.input_tokens ?? 0;
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
