import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromGeminiModels } from '../../proxy/src/providers/gemini/models.ts';

describe('fromGeminiModels', () => {
  it('maps a page of models and its cursor', () => {
    const page = fromGeminiModels({
      models: [
        {
          name: 'models/gemini-2.5-flash',
          version: '001',
          displayName: 'Gemini 2.5 Flash',
          description: 'Stable version of Gemini 2.5 Flash',
          inputTokenLimit: 1048576,
          outputTokenLimit: 65536,
          supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'],
          temperature: 1,
          topP: 0.95,
          topK: 64,
          maxTemperature: 2,
          thinking: true,
        },
        {
          name: 'models/gemini-embedding-001',
          displayName: 'Gemini Embedding 001',
          inputTokenLimit: 2048,
          outputTokenLimit: 1,
          supportedGenerationMethods: ['embedContent'],
        },
      ],
      nextPageToken: 'Chdtb2RlbHMvZ2VtaW5pLWVtYmVkZGluZw==',
    });
    assert.deepEqual(page, {
      models: [
        {
          id: 'gemini-2.5-flash',
          name: 'Gemini 2.5 Flash',
          description: 'Stable version of Gemini 2.5 Flash',
          max_input_tokens: 1048576,
          context_length: 1048576,
          max_output_tokens: 65536,
        },
        { id: 'gemini-embedding-001', name: 'Gemini Embedding 001', max_input_tokens: 2048, context_length: 2048, max_output_tokens: 1 },
      ],
      nextPageToken: 'Chdtb2RlbHMvZ2VtaW5pLWVtYmVkZGluZw==',
    });
  });

  it('ends paging without a token and tolerates odd bodies', () => {
    assert.deepEqual(fromGeminiModels({ models: [{ name: 'models/aqa' }] }), { models: [{ id: 'aqa' }] });
    assert.deepEqual(fromGeminiModels({}), { models: [] });
    assert.deepEqual(fromGeminiModels(null), { models: [] });
    assert.deepEqual(fromGeminiModels({ models: [{ displayName: 'nameless' }, 'junk'], nextPageToken: '' }), { models: [] });
  });
});
