// The mock provider's embeddings make semantic cache hits and misses testable without a model:
// paraphrases are close, unrelated texts far, and every provider format returns the same vector for
// the same text and dimension.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { embedText, modelDimensions } from '../mock-provider/embeddings.ts';
import { GEMINI_AUTH, OPENAI_AUTH, postRaw } from './mock-provider-helpers.ts';

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

const PARAPHRASES: [string, string][] = [
  ['What is the capital of France?', "what's the capital city of France"],
  ['How do I reset my password?', 'how can I reset my password'],
  ['Tell me a joke about cats', 'tell me a cat joke'],
  ['Summarize this article about climate change', 'summarise this climate change article'],
];
const UNRELATED: [string, string][] = [
  ['What is the capital of France?', 'How do I bake sourdough bread?'],
  ['What is the capital of France?', 'What is the meaning of life?'],
  ['Tell me a joke about cats', 'Tell me about the history of Rome'],
  ['How do I reset my password?', 'Explain quantum entanglement simply'],
];

describe('mock embeddings', () => {
  for (const dims of [64, 256, 1536]) {
    test(`paraphrases have cosine >= 0.8 and unrelated texts < 0.5 at ${dims} dimensions`, () => {
      for (const [a, b] of PARAPHRASES) assert.ok(cosine(embedText(a, dims), embedText(b, dims)) >= 0.8, `${a} / ${b}`);
      for (const [a, b] of UNRELATED) assert.ok(cosine(embedText(a, dims), embedText(b, dims)) < 0.5, `${a} / ${b}`);
    });
  }

  test('vectors are deterministic, unit length and of the asked dimension; case and spacing do not matter', () => {
    const v = embedText('What is the capital of France?', 256);
    assert.equal(v.length, 256);
    assert.deepEqual(embedText('What is the capital of France?', 256), v);
    assert.ok(Math.abs(cosine(v, v) - 1) < 1e-6);
    let norm = 0;
    for (const x of v) norm += x * x;
    assert.ok(Math.abs(norm - 1) < 1e-5);
    assert.deepEqual(embedText('  WHAT is the   capital of france ', 256), v);
    assert.equal(embedText('', 16).length, 16);
  });

  test('a model named ...-dim<N> has N dimensions, any other 8', () => {
    assert.equal(modelDimensions('text-embedding-3-small-dim256'), 256);
    assert.equal(modelDimensions('text-embedding-3-small'), 8);
    assert.equal(modelDimensions(undefined), 8);
  });
});

describe('mock embedding endpoints', () => {
  let mock: MockProvider;
  before(async () => {
    mock = await startMockProvider();
  });
  after(() => mock.close());

  const text = 'What is the capital of France?';
  const expected = Array.from(embedText(text, 64));

  async function post(path: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
    const res = await postRaw(`${mock.url}${path}`, body, headers);
    assert.equal(res.status, 200, res.text);
    return JSON.parse(res.text) as Record<string, unknown>;
  }

  test('OpenAI: `dimensions`, or the model name, sets the size; the vector is the same', async () => {
    const a = (await post('/openai/v1/embeddings', { model: 'text-embedding-3-small', input: text, dimensions: 64 }, OPENAI_AUTH)) as { data: { embedding: number[] }[] };
    assert.deepEqual(a.data[0].embedding, expected);
    const b = (await post('/openai/v1/embeddings', { model: 'text-embedding-3-small-dim64', input: [text, "what's the capital city of France"] }, OPENAI_AUTH)) as { data: { embedding: number[] }[] };
    assert.deepEqual(b.data[0].embedding, expected);
    assert.ok(cosine(b.data[0].embedding, b.data[1].embedding) >= 0.8);
  });

  test('Gemini embedContent and batchEmbedContents', async () => {
    const one = (await post('/gemini/v1beta/models/text-embedding-004:embedContent', { content: { parts: [{ text }] }, outputDimensionality: 64 }, GEMINI_AUTH)) as { embedding: { values: number[] } };
    assert.deepEqual(one.embedding.values, expected);
    const batch = (await post('/gemini/v1beta/models/gemini-embedding-001-dim64:batchEmbedContents', { requests: [{ content: { parts: [{ text }] } }] }, GEMINI_AUTH)) as { embeddings: { values: number[] }[] };
    assert.deepEqual(batch.embeddings[0].values, expected);
  });

  test('Cohere embed', async () => {
    const r = (await post('/cohere/v2/embed', { model: 'embed-v4.0', texts: [text], input_type: 'search_query', embedding_types: ['float'], output_dimension: 64 }, { authorization: 'Bearer co-test' })) as { embeddings: { float: number[][] } };
    assert.deepEqual(r.embeddings.float[0], expected);
  });

  test('Bedrock InvokeModel: Titan v2 (dimensions) and Cohere Embed (1024)', async () => {
    const auth = { authorization: 'Bearer bedrock-api-key' };
    const titan = (await post('/bedrock/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: text, dimensions: 256 }, auth)) as { embedding: number[]; inputTextTokenCount: number };
    assert.deepEqual(titan.embedding, Array.from(embedText(text, 256)));
    assert.ok(titan.inputTextTokenCount > 0);
    const co = (await post('/bedrock/model/cohere.embed-english-v3/invoke', { texts: [text, 'How do I bake sourdough bread?'], input_type: 'search_query' }, auth)) as { embeddings: number[][]; response_type: string };
    assert.equal(co.response_type, 'embeddings_floats');
    assert.equal(co.embeddings[0].length, 1024);
    assert.ok(cosine(co.embeddings[0], co.embeddings[1]) < 0.5);
    const bad = await postRaw(`${mock.url}/bedrock/model/amazon.titan-embed-text-v2%3A0/invoke`, { inputText: text, dimensions: 100 }, auth);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /dimensions/);
  });
});
