// The official @google/genai SDK, unchanged but for its base URL, through /genai to every upstream format.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI, ApiError, Type } from '@google/genai';
import { FORMATS, MODELS } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
let ai: GoogleGenAI;
before(async () => {
  stack = await startStack();
  ai = new GoogleGenAI({ apiKey: 'not-needed', httpOptions: { baseUrl: `${stack.gateway.url}/genai` } });
});
after(() => stack.close());

for (const format of FORMATS) {
  describe(`GenAI SDK to a ${format}-format upstream`, () => {
    test(`generateContent ${compat('/genai', 'generateContent', format)}`, async () => {
      const res = await ai.models.generateContent({ model: MODELS[format], contents: 'Hello from genai', config: { systemInstruction: 'Be brief.' } });
      assert.equal(res.text, 'Mock reply to: Hello from genai');
      assert.equal(res.candidates?.[0].finishReason, 'STOP');
      assert.ok((res.usageMetadata?.promptTokenCount ?? 0) > 0);
      assert.equal(stack.mock.requests.at(-1)!.format, format);
    });

    test(`generateContentStream ${compat('/genai', 'generateContentStream', format)}`, async () => {
      const stream = await ai.models.generateContentStream({ model: MODELS[format], contents: 'stream via genai' });
      let text = '';
      let events = 0;
      for await (const chunk of stream) {
        events++;
        text += chunk.text ?? '';
      }
      assert.equal(text, 'Mock reply to: stream via genai');
      assert.ok(events >= 2, `${events} events`);
    });

    test(`function call ${compat('/genai', 'generateContent.tools', format)}`, async () => {
      const res = await ai.models.generateContent({
        model: MODELS[format],
        contents: 'weather in Quito',
        config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { query: { type: Type.STRING } } } }] }] },
      });
      const call = res.functionCalls?.[0];
      assert.equal(call?.name, 'get_weather');
      assert.deepEqual(call?.args, { query: 'weather in Quito' });
    });
  });
}

describe('GenAI embeddings and errors', () => {
  test(`embedContent through an OpenAI-format upstream ${compat('/genai', 'embedContent', 'openai')}`, async () => {
    const res = await ai.models.embedContent({ model: 'openai/text-embedding-3-small', contents: ['one text', 'two text'] });
    assert.equal(res.embeddings?.length, 2);
    assert.ok((res.embeddings?.[0].values?.length ?? 0) > 0);
  });

  test('an upstream 429 reaches the SDK as an ApiError with status 429', async () => {
    stack.mock.inject({ format: 'anthropic', status: 429 });
    const err = await ai.models.generateContent({ model: MODELS.anthropic, contents: 'x' }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 429);
  });
});

describe('GenAI models list', () => {
  test('models.list shows every provider as models/provider/model', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name ?? '');
    assert.ok(names.includes('models/gemini/gemini-2.5-flash'));
    assert.ok(names.includes('models/anthropic/claude-sonnet-4-5'));
  });
});
