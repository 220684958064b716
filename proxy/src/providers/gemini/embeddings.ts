// Unified embeddings ↔ Gemini embedContent / batchEmbedContents.
import type { EmbeddingRequest, EmbeddingResponse } from '../../unified/embeddings.ts';
import { encodeEmbedding } from '../../unified/embeddings.ts';
import { GatewayError, invalidRequest } from '../../unified/errors.ts';
import type { GeminiEmbedContentRequest } from './types.ts';

export type GeminiEmbedMethod = 'embedContent' | 'batchEmbedContents';

/** A single string → embedContent; a list → batchEmbedContents. Gemini embeds text, not token ids. */
export function toGeminiEmbedRequest(
  req: EmbeddingRequest,
  model: string,
): { method: GeminiEmbedMethod; body: unknown } {
  const input = req.input;
  const entry = (text: string): GeminiEmbedContentRequest => ({
    model: `models/${model}`,
    content: { parts: [{ text }] },
    ...(req.dimensions !== undefined && { outputDimensionality: req.dimensions }),
  });
  if (typeof input === 'string') return { method: 'embedContent', body: entry(input) };
  const texts = input.map((item, i) => {
    if (typeof item !== 'string') throw invalidRequest('Gemini embeds text only; token-id input is not supported', `input[${i}]`);
    return item;
  });
  return { method: 'batchEmbedContents', body: { requests: texts.map(entry) } };
}

export function fromGeminiEmbedResponse(
  method: GeminiEmbedMethod,
  body: unknown,
  model: string,
  encoding: 'float' | 'base64' | undefined,
): EmbeddingResponse {
  const record = isRecord(body) ? body : {};
  const embeddings = method === 'embedContent' ? [record.embedding] : Array.isArray(record.embeddings) ? record.embeddings : [];
  const data = embeddings.map((embedding, index) => ({
    object: 'embedding' as const,
    index,
    embedding: encodeEmbedding(vectorOf(embedding, index), encoding),
  }));
  const tokens = promptTokens(record, embeddings);
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

function vectorOf(embedding: unknown, index: number): number[] {
  const values = isRecord(embedding) ? embedding.values : undefined;
  if (Array.isArray(values) && values.every((v) => typeof v === 'number')) return values;
  throw new GatewayError(502, `Gemini returned no embedding values at index ${index}`, { type: 'upstream_invalid_response', code: 'upstream_invalid_response', provider: 'gemini', upstream: true });
}

/** The Gemini API reports no token counts for embeddings; use them when a variant does. */
function promptTokens(body: Record<string, unknown>, embeddings: unknown[]): number {
  const usage = body.usageMetadata;
  if (isRecord(usage)) {
    const count = usage.promptTokenCount ?? usage.totalTokenCount;
    if (typeof count === 'number') return count;
  }
  return embeddings.reduce<number>((sum, embedding) => {
    const stats = isRecord(embedding) ? embedding.statistics : undefined;
    const count = isRecord(stats) ? stats.tokenCount : undefined;
    return sum + (typeof count === 'number' ? count : 0);
  }, 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
