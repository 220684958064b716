import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EmbeddingRequest } from '../../proxy/src/unified/embeddings.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { fromGeminiEmbedResponse, toGeminiEmbedRequest } from '../../proxy/src/providers/gemini/embeddings.ts';

const req = (input: EmbeddingRequest['input'], extra: Partial<EmbeddingRequest> = {}): EmbeddingRequest => ({
  model: 'gemini/gemini-embedding-001',
  input,
  ...extra,
});

function decodeFloat32(base64: string): number[] {
  const buf = Buffer.from(base64, 'base64');
  return Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
}

describe('toGeminiEmbedRequest', () => {
  it('sends a single string to embedContent', () => {
    assert.deepEqual(toGeminiEmbedRequest(req('What is the meaning of life?'), 'gemini-embedding-001'), {
      method: 'embedContent',
      body: { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'What is the meaning of life?' }] } },
    });
  });

  it('sends a list to batchEmbedContents, each request naming the model, with dimensions', () => {
    assert.deepEqual(toGeminiEmbedRequest(req(['alpha', 'beta'], { dimensions: 768 }), 'gemini-embedding-001'), {
      method: 'batchEmbedContents',
      body: {
        requests: [
          { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 768 },
          { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 768 },
        ],
      },
    });
  });

  it('rejects token-id input', () => {
    for (const input of [[101, 2054], [[101, 2054], [7592]]]) {
      assert.throws(
        () => toGeminiEmbedRequest(req(input), 'gemini-embedding-001'),
        (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'input[0]',
      );
    }
  });
});

describe('fromGeminiEmbedResponse', () => {
  it('maps an embedContent answer as floats with zero usage', () => {
    const out = fromGeminiEmbedResponse('embedContent', { embedding: { values: [0.013, -0.0084, 0.25] } }, 'gemini-embedding-001', 'float');
    assert.deepEqual(out, {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.013, -0.0084, 0.25] }],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  });

  it('maps a batch answer as base64 float32 that decodes back to the values', () => {
    const vectors = [
      [0.5, -0.25, 1.5],
      [0.125, 2, -3.75],
    ];
    const out = fromGeminiEmbedResponse(
      'batchEmbedContents',
      { embeddings: vectors.map((values) => ({ values })) },
      'gemini-embedding-001',
      'base64',
    );
    assert.equal(out.data.length, 2);
    out.data.forEach((d, i) => {
      assert.equal(d.index, i);
      assert.equal(typeof d.embedding, 'string');
      assert.deepEqual(decodeFloat32(d.embedding as string), vectors[i]);
    });
    const floats = fromGeminiEmbedResponse('batchEmbedContents', { embeddings: vectors.map((values) => ({ values })) }, 'm', undefined);
    assert.deepEqual(floats.data.map((d) => d.embedding), vectors);
  });

  it('uses token counts when the body reports them', () => {
    const fromMetadata = fromGeminiEmbedResponse('embedContent', { embedding: { values: [1] }, usageMetadata: { promptTokenCount: 7 } }, 'm', 'float');
    assert.deepEqual(fromMetadata.usage, { prompt_tokens: 7, total_tokens: 7 });
    const fromStatistics = fromGeminiEmbedResponse(
      'batchEmbedContents',
      { embeddings: [{ values: [1], statistics: { tokenCount: 3 } }, { values: [2], statistics: { tokenCount: 4 } }] },
      'm',
      'float',
    );
    assert.deepEqual(fromStatistics.usage, { prompt_tokens: 7, total_tokens: 7 });
  });

  it('fails on an answer without values', () => {
    assert.throws(
      () => fromGeminiEmbedResponse('embedContent', { embedding: {} }, 'm', 'float'),
      (err: unknown) => err instanceof GatewayError && err.status === 502 && err.upstream,
    );
  });
});
