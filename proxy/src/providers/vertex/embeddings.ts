// Unified embeddings ↔ Vertex AI text-embedding `:predict` (text-embedding-005, gemini-embedding-001, ...):
// one instance per input text; each prediction carries its vector and token count.
import type { EmbeddingRequest, EmbeddingResponse } from '../../unified/embeddings.ts';
import { encodeEmbedding } from '../../unified/embeddings.ts';
import { GatewayError, invalidRequest } from '../../unified/errors.ts';

export interface VertexPredictEmbeddingsRequest {
  instances: { content: string }[];
  parameters?: { outputDimensionality?: number };
}

export function toVertexEmbedRequest(req: EmbeddingRequest): VertexPredictEmbeddingsRequest {
  const texts = typeof req.input === 'string' ? [req.input] : req.input.map((item, i) => {
    if (typeof item !== 'string') throw invalidRequest('Vertex AI embeds text only; token-id input is not supported', `input[${i}]`);
    return item;
  });
  const body: VertexPredictEmbeddingsRequest = { instances: texts.map((content) => ({ content })) };
  if (req.dimensions !== undefined) body.parameters = { outputDimensionality: req.dimensions };
  return body;
}

export function fromVertexEmbedResponse(body: unknown, model: string, encoding: 'float' | 'base64' | undefined): EmbeddingResponse {
  const predictions = isRecord(body) && Array.isArray(body.predictions) ? body.predictions : [];
  let tokens = 0;
  const data = predictions.map((prediction: unknown, index) => {
    const embeddings = isRecord(prediction) ? prediction.embeddings : undefined;
    const values = isRecord(embeddings) ? embeddings.values : undefined;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'number')) {
      throw new GatewayError(502, `Vertex AI returned no embedding values at index ${index}`, { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'vertex', upstream: true });
    }
    const stats = isRecord(embeddings) ? embeddings.statistics : undefined;
    const count = isRecord(stats) ? stats.token_count : undefined;
    if (typeof count === 'number') tokens += count;
    return { object: 'embedding' as const, index, embedding: encodeEmbedding(values as number[], encoding) };
  });
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
