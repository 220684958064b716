// Token counting through the gateway with the official SDKs: OpenAI's responses.inputTokens.count,
// Anthropic's messages.countTokens and GenAI's models.countTokens, each reaching every upstream
// format's own count endpoint; a provider without one answers the unsupported-operation 400.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, ApiError } from '@google/genai';
import { FORMATS, MODELS, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
let anthropic: Anthropic;
let ai: GoogleGenAI;
before(async () => {
  // mistral speaks OpenAI's format but has no count endpoint.
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u),
      mistral: { keys: [{ name: 'm', value: 'sk-mistral-test', weight: 1 }], network_config: { base_url: `${u}/openai` } },
    },
  }));
  anthropic = new Anthropic({ baseURL: `${stack.gateway.url}/anthropic`, apiKey: 'not-needed', maxRetries: 0 });
  ai = new GoogleGenAI({ apiKey: 'not-needed', httpOptions: { baseUrl: `${stack.gateway.url}/genai` } });
});
after(() => stack.close());

/** Where each format's count endpoint lives on the mock. */
const COUNT_PATH: Record<(typeof FORMATS)[number], RegExp> = {
  openai: /^\/openai\/v1\/responses\/input_tokens$/,
  anthropic: /^\/anthropic\/v1\/messages\/count_tokens$/,
  gemini: /^\/gemini\/v1beta\/models\/gemini-2\.5-flash:countTokens$/,
};

function lastUpstream() {
  const r = stack.mock.requests.at(-1);
  assert.ok(r, 'the upstream was called');
  return r;
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('OpenAI SDK responses.inputTokens.count (/v1/responses/input_tokens)', () => {
  for (const format of FORMATS) {
    test(`counts on the ${format}-format provider's own endpoint ${compat('/v1', 'responses.inputTokens.count', format)}`, async () => {
      // 2 words of instructions + 4 of input, as every mock format counts them.
      const res = await stack.client.responses.inputTokens.count({ model: MODELS[format], instructions: 'Be brief.', input: 'count these four words' });
      assert.equal(res.object, 'response.input_tokens');
      assert.equal(res.input_tokens, 6);
      const up = lastUpstream();
      assert.equal(up.format, format);
      assert.match(up.path, COUNT_PATH[format]);
      assert.equal(up.status, 200);
      assert.equal((res as unknown as { extra_fields: { provider: string; request_type: string } }).extra_fields.provider, format);
    });

    test(`a tool-call history translates for ${format} and counts the same`, async () => {
      const res = await stack.client.responses.inputTokens.count({
        model: MODELS[format],
        tools: [weatherTool],
        input: [
          { role: 'user', content: 'weather in Lima please' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Lima"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny and warm' },
        ],
      });
      // 4 words of question, the arguments as one word, 3 words of result.
      assert.equal(res.input_tokens, 8);
      assert.match(lastUpstream().path, COUNT_PATH[format]);
    });
  }

  test('OpenAI gets the Responses body as sent (model replaced, nothing the endpoint refuses)', async () => {
    await stack.client.responses.inputTokens.count({ model: MODELS.openai, input: 'hello there', truncation: 'auto' });
    assert.deepEqual(lastUpstream().body, { model: 'gpt-4o', input: 'hello there', truncation: 'auto' });
  });

  test("the reference gateway's `messages` is accepted for `input`", async () => {
    const res = await fetch(`${stack.gateway.url}/v1/responses/input_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'three little words' }] }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { input_tokens: number; model: string };
    assert.equal(body.input_tokens, 3);
    assert.equal(body.model, MODELS.anthropic);
  });

  test(`served under /openai too ${compat('/openai', 'responses.inputTokens.count', 'gemini')}`, async () => {
    const client = new OpenAI({ baseURL: `${stack.gateway.url}/openai`, apiKey: 'x', maxRetries: 0 });
    const res = await client.responses.inputTokens.count({ model: MODELS.gemini, input: 'two words' });
    assert.equal(res.input_tokens, 2);
  });

  test('no input is a 400 naming it', async () => {
    const err = await stack.client.responses.inputTokens.count({ model: MODELS.openai }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal((err.error as { param?: string }).param, 'input');
  });

  test('a provider without a count endpoint is the unsupported-operation 400', async () => {
    const before = stack.mock.requests.length;
    const err = await stack.client.responses.inputTokens.count({ model: 'mistral/mistral-small', input: 'x' }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.equal(err.type, 'unsupported_operation');
    assert.match(err.message, /count_tokens.*mistral/);
    assert.equal(stack.mock.requests.length, before, 'nothing was sent upstream');
  });
});

describe('Anthropic SDK messages.countTokens (/anthropic/v1/messages/count_tokens)', () => {
  for (const format of FORMATS) {
    test(`counts a ${format} model ${compat('/anthropic', 'messages.countTokens', format)}`, async () => {
      const res = await anthropic.messages.countTokens({
        model: MODELS[format],
        system: 'Answer in French.',
        messages: [{ role: 'user', content: 'how are you today' }],
      });
      assert.equal(res.input_tokens, 7);
      const up = lastUpstream();
      assert.equal(up.format, format);
      assert.match(up.path, COUNT_PATH[format]);
    });
  }

  test('a Gemini model gets the whole request, tools and system instruction, as generateContentRequest', async () => {
    const res = await anthropic.messages.countTokens({
      model: MODELS.gemini,
      system: 'Be brief.',
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'weather in Oslo' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'cold' }] },
      ],
    });
    assert.ok(res.input_tokens >= 6, `counted ${res.input_tokens}`);
    const body = lastUpstream().body as { generateContentRequest: { model: string; systemInstruction: unknown; tools: unknown[]; contents: unknown[] } };
    assert.equal(body.generateContentRequest.model, 'models/gemini-2.5-flash');
    assert.ok(body.generateContentRequest.systemInstruction);
    assert.equal(body.generateContentRequest.tools.length, 1);
    assert.equal(body.generateContentRequest.contents.length, 3);
  });

  test('Anthropic gets no generation fields (the count endpoint refuses them)', async () => {
    await anthropic.messages.countTokens({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(Object.keys(lastUpstream().body as object).sort(), ['messages', 'model']);
  });

  test('a provider without a count endpoint is an Anthropic-shaped 400', async () => {
    const err = await anthropic.messages.countTokens({ model: 'mistral/mistral-small', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    const body = err.error as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /count_tokens/);
  });

  test('missing messages is a 400 naming them', async () => {
    const res = await fetch(`${stack.gateway.url}/anthropic/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.anthropic }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { message: string } };
    assert.match(body.error.message, /messages/);
  });
});

describe('GenAI SDK models.countTokens (/genai/v1beta/models/{model}:countTokens)', () => {
  for (const format of FORMATS) {
    test(`counts a ${format} model ${compat('/genai', 'countTokens', format)}`, async () => {
      const res = await ai.models.countTokens({ model: MODELS[format], contents: 'five words to count here' });
      assert.equal(res.totalTokens, 5);
      assert.match(lastUpstream().path, COUNT_PATH[format]);
    });
  }

  test('the REST form with a whole generateContentRequest counts its system instruction too', async () => {
    const res = await fetch(`${stack.gateway.url}/genai/v1beta/models/${MODELS.anthropic}:countTokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'x' },
      body: JSON.stringify({
        generateContentRequest: {
          model: 'models/whatever',
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
          contents: [{ role: 'user', parts: [{ text: 'three more words' }] }],
        },
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { totalTokens: number }).totalTokens, 5);
    const up = lastUpstream();
    assert.match(up.path, COUNT_PATH.anthropic);
    assert.equal((up.body as { model: string }).model, 'claude-sonnet-4-5');
  });

  test('a provider without a count endpoint is a Gemini-shaped 400', async () => {
    const err = await ai.models.countTokens({ model: 'mistral/mistral-small', contents: 'x' }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 400);
    assert.match(err.message, /count_tokens/);
  });
});
