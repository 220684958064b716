// Native Gemini embedContent / batchEmbedContents bodies ↔ unified embeddings: the inverse of
// ../embeddings.ts. (@google/genai's models.embedContent always calls batchEmbedContents.)
import type { EmbeddingRequest, EmbeddingResponse } from '../../../unified/embeddings.ts';
import { invalidRequest } from '../../../unified/errors.ts';
import type { GeminiEmbedMethod } from '../embeddings.ts';
import type { GeminiBatchEmbedContentsResponse, GeminiEmbedContentResponse } from '../types.ts';

/**
 * Text parts only (Gemini embeds each request's parts as one text). taskType and title have no
 * unified equivalent and are dropped; a batch must ask for one outputDimensionality throughout.
 * The per-entry `model` is not checked against the URL's (the URL decides, as routing does).
 */
export function fromGeminiEmbedRequest(method: GeminiEmbedMethod, body: unknown, model: string): EmbeddingRequest {
  const entries = method === 'embedContent' ? [{ entry: body, where: '' }] : batchEntries(body);
  let dimensions: number | undefined;
  const texts = entries.map(({ entry, where }, i) => {
    if (!isRecord(entry)) throw invalidRequest('embed request must be a JSON object', where || undefined);
    const dims = entry.outputDimensionality;
    if (dims !== undefined) {
      if (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1) {
        throw invalidRequest('outputDimensionality must be a positive integer', `${where}outputDimensionality`);
      }
      if (i > 0 && dims !== dimensions) {
        throw invalidRequest('every request of a batch must ask for the same outputDimensionality', `${where}outputDimensionality`);
      }
    } else if (i > 0 && dimensions !== undefined) {
      throw invalidRequest('every request of a batch must ask for the same outputDimensionality', `${where}outputDimensionality`);
    }
    dimensions = dims as number | undefined;
    return contentText(entry.content, `${where}content`);
  });

  const out: EmbeddingRequest = { model: model.replace(/^models\//, ''), input: method === 'embedContent' ? texts[0] : texts };
  if (dimensions !== undefined) out.dimensions = dimensions;
  return out;
}

function batchEntries(body: unknown): Array<{ entry: unknown; where: string }> {
  const requests = isRecord(body) ? body.requests : undefined;
  if (!Array.isArray(requests) || !requests.length) throw invalidRequest('requests must be a non-empty array', 'requests');
  return requests.map((entry, i) => ({ entry, where: `requests[${i}].` }));
}

function contentText(content: unknown, where: string): string {
  if (!isRecord(content) || !Array.isArray(content.parts) || !content.parts.length) {
    throw invalidRequest('content must have a non-empty parts array', where);
  }
  return content.parts
    .map((part: unknown, j) => {
      if (!isRecord(part) || typeof part.text !== 'string') throw invalidRequest('only text parts can be embedded', `${where}.parts[${j}]`);
      return part.text;
    })
    .join('\n');
}

/** `{embedding: {values}}` or `{embeddings: [{values}]}` (typed loosely: it is a response body). */
export function toGeminiEmbedResponse(method: GeminiEmbedMethod, res: EmbeddingResponse): unknown {
  const embeddings = [...res.data].sort((a, b) => a.index - b.index).map((d) => ({ values: vectorOf(d.embedding) }));
  if (method === 'embedContent') return { embedding: embeddings[0] ?? { values: [] } } satisfies GeminiEmbedContentResponse;
  return { embeddings } satisfies GeminiBatchEmbedContentsResponse;
}

/** Float arrays pass through; OpenAI's base64 form is little-endian float32. */
function vectorOf(embedding: number[] | string): number[] {
  if (typeof embedding !== 'string') return embedding;
  const buf = Buffer.from(embedding, 'base64');
  const values: number[] = [];
  for (let offset = 0; offset + 4 <= buf.length; offset += 4) values.push(buf.readFloatLE(offset));
  return values;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
