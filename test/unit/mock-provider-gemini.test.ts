// The mock's Gemini dialect, checked with the official `@google/genai` SDK (and raw HTTP for the SSE framing).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI, type GenerateContentResponse } from '@google/genai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { GEMINI_AUTH, parseSse, postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let ai: GoogleGenAI;

before(async () => {
  mock = await startMockProvider();
  ai = new GoogleGenAI({ apiKey: 'g-test', httpOptions: { baseUrl: `${mock.url}/gemini` } });
});
after(() => mock.close());

const MODEL = 'gemini-2.5-flash';
const weatherTool = { functionDeclarations: [{ name: 'get_weather', description: 'Weather', parametersJsonSchema: { type: 'object' } }] };

async function rejects(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => assert.fail('expected an error'), (e: unknown) => e);
}

describe('gemini generateContent', () => {
  test('non-streaming reply with usageMetadata', async () => {
    const res = await ai.models.generateContent({
      model: MODEL, contents: 'Hello there mock', config: { systemInstruction: 'Be brief.' },
    });
    assert.equal(res.text, 'Mock reply to: Hello there mock');
    assert.equal(res.candidates?.[0].finishReason, 'STOP');
    assert.equal(res.candidates?.[0].content?.role, 'model');
    assert.deepEqual(
      [res.usageMetadata?.promptTokenCount, res.usageMetadata?.candidatesTokenCount, res.usageMetadata?.totalTokenCount],
      [5, 6, 11],
    );
    assert.equal(res.modelVersion, MODEL);
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.path, `/gemini/v1beta/models/${MODEL}:generateContent`);
    assert.equal(seen.headers['x-goog-api-key'], 'g-test');
  });

  test('streaming over SSE: several chunks, CRLF-separated, last one has finishReason and usage', async () => {
    const chunks: GenerateContentResponse[] = [];
    for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'stream it now' })) chunks.push(c);
    assert.equal(chunks.map((c) => c.text ?? '').join(''), 'Mock reply to: stream it now');
    assert.ok(chunks.length >= 5);
    assert.equal(chunks.at(-1)?.candidates?.[0].finishReason, 'STOP');
    assert.equal(chunks.at(-1)?.usageMetadata?.candidatesTokenCount, 6);
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.query.alt, 'sse');
    assert.ok(seen.responseBody!.startsWith('data: {'));
    assert.equal(seen.responseBody!.split('\r\n\r\n').length - 1, chunks.length, 'events end with CRLF CRLF');
  });

  test('streamGenerateContent without alt=sse answers one JSON array', async () => {
    const raw = await postRaw(`${mock.url}/gemini/v1beta/models/${MODEL}:streamGenerateContent`, { contents: [{ parts: [{ text: 'arr' }] }] }, GEMINI_AUTH);
    assert.equal(raw.status, 200);
    const arr = JSON.parse(raw.text) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    assert.ok(Array.isArray(arr) && arr.length > 1);
    assert.equal(arr.map((r) => r.candidates[0].content.parts[0].text).join(''), 'Mock reply to: arr');
  });

  test('function calling, then "Tool said" after a functionResponse', async () => {
    const first = await ai.models.generateContent({ model: MODEL, contents: 'weather in Paris', config: { tools: [weatherTool] } });
    const call = first.functionCalls?.[0];
    assert.equal(call?.name, 'get_weather');
    assert.deepEqual(call?.args, { query: 'weather in Paris' });
    const second = await ai.models.generateContent({
      model: MODEL,
      config: { tools: [weatherTool] },
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { query: 'weather in Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'sunny, 21C' } } }] },
      ],
    });
    assert.equal(second.text, 'Tool said: sunny, 21C');
    const streamed: GenerateContentResponse[] = [];
    for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'weather in Rome', config: { tools: [weatherTool] } })) streamed.push(c);
    assert.deepEqual(streamed.flatMap((c) => c.functionCalls ?? []).map((c) => c.args), [{ query: 'weather in Rome' }]);
  });

  test('includeThoughts: a thought part first and thoughtsTokenCount', async () => {
    const res = await ai.models.generateContent({
      model: MODEL, contents: 'ponder this', config: { thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } },
    });
    const parts = res.candidates?.[0].content?.parts ?? [];
    assert.equal(parts[0].thought, true);
    assert.equal(parts[0].text, 'Thinking about: ponder this');
    assert.equal(res.text, 'Mock reply to: ponder this');
    assert.equal(res.usageMetadata?.thoughtsTokenCount, 4);
    assert.equal(res.usageMetadata?.totalTokenCount, 2 + 5 + 4);
  });

  test('inlineData and fileData images are counted', async () => {
    const res = await ai.models.generateContent({
      model: MODEL,
      contents: [{
        role: 'user',
        parts: [
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/x.png' } },
          { text: 'what are these' },
        ],
      }],
    });
    assert.equal(res.text, 'Mock reply to: what are these [images: 2]');
  });

  test('snake_case proto-JSON field names are accepted, as by the real API', async () => {
    const raw = await postRaw(`${mock.url}/gemini/v1beta/models/${MODEL}:generateContent`, {
      system_instruction: { parts: [{ text: 'sys' }] },
      contents: [{ role: 'user', parts: [{ text: 'snake' }] }],
      generation_config: { max_output_tokens: 2 },
    }, GEMINI_AUTH);
    assert.equal(raw.status, 200);
    const body = JSON.parse(raw.text) as { candidates: { finishReason: string; content: { parts: { text: string }[] } }[] };
    assert.equal(body.candidates[0].finishReason, 'MAX_TOKENS');
    assert.equal(body.candidates[0].content.parts[0].text, 'Mock reply');
  });
});

describe('gemini embeddings, models, validation, errors', () => {
  test('embedContent and batchEmbedContents give the same deterministic vectors', async () => {
    const res = await ai.models.embedContent({ model: 'text-embedding-004', contents: ['first text', 'second text'] });
    assert.equal(mock.requests.at(-1)!.path, '/gemini/v1beta/models/text-embedding-004:batchEmbedContents');
    assert.equal(res.embeddings?.length, 2);
    assert.equal(res.embeddings?.[0].values?.length, 8);
    assert.notDeepEqual(res.embeddings?.[0].values, res.embeddings?.[1].values);
    const one = await postRaw(`${mock.url}/gemini/v1beta/models/text-embedding-004:embedContent`, { content: { parts: [{ text: 'first text' }] } }, GEMINI_AUTH);
    assert.equal(one.status, 200);
    assert.deepEqual((JSON.parse(one.text) as { embedding: { values: number[] } }).embedding.values, res.embeddings?.[0].values);
  });

  test('models list pages with pageSize / nextPageToken', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list({ config: { pageSize: 2 } })) names.push(m.name ?? '');
    assert.ok(names.includes('models/gemini-2.5-flash') && names.includes('models/gemini-2.5-pro') && names.includes('models/text-embedding-004'));
    assert.ok(names.length >= 5);
    assert.ok(mock.requests.filter((r) => r.path === '/gemini/v1beta/models').length >= 3, 'several pages fetched');
    const model = await ai.models.get({ model: MODEL });
    assert.equal(model.name, 'models/gemini-2.5-flash');
    assert.equal(model.displayName, 'Gemini 2.5 Flash');
  });

  test('a system role in contents, unknown fields and orphan function responses are 400 INVALID_ARGUMENT', async () => {
    const url = `${mock.url}/gemini/v1beta/models/${MODEL}:generateContent`;
    const cases: [unknown, RegExp][] = [
      [{ contents: [{ role: 'system', parts: [{ text: 'x' }] }, { role: 'user', parts: [{ text: 'y' }] }] }, /valid role: user, model/],
      [{ contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { max_tokens: 5 } }, /Unknown name "max_tokens" at 'generation_config'/],
      [{ contents: [{ role: 'user', content: 'x' }] }, /Unknown name "content" at 'contents\[0\]'/],
      [{ messages: [{ role: 'user', parts: [{ text: 'x' }] }] }, /Unknown name "messages"/],
      [{ contents: [] }, /contents is not specified/],
      [{ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: 'r' } } }] }] }, /function response turn comes immediately after a function call turn/],
      [{ contents: [{ role: 'user', parts: [{}] }] }, /required oneof field 'data'/],
    ];
    for (const [body, re] of cases) {
      const raw = await postRaw(url, body, GEMINI_AUTH);
      assert.equal(raw.status, 400, JSON.stringify(body));
      const err = JSON.parse(raw.text) as { error: { code: number; status: string; message: string } };
      assert.equal(err.error.code, 400);
      assert.equal(err.error.status, 'INVALID_ARGUMENT');
      assert.match(err.error.message, re);
    }
    const viaSdk = await rejects(ai.models.generateContent({ model: MODEL, contents: [{ role: 'system', parts: [{ text: 'x' }] }] }));
    assert.ok(viaSdk instanceof ApiError);
    assert.equal(viaSdk.status, 400);
  });

  test('an injected 429 raises ApiError with RESOURCE_EXHAUSTED and Retry-After', async () => {
    mock.inject({ format: 'gemini', model: MODEL, status: 429, retryAfter: 2 });
    const err = await rejects(ai.models.generateContent({ model: MODEL, contents: 'x' }));
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 429);
    assert.match(err.message, /RESOURCE_EXHAUSTED/);
    assert.equal(mock.requests.filter((r) => r.format === 'gemini').at(-1)!.status, 429);
    const body = JSON.parse(mock.requests.at(-1)!.responseBody!) as { error: { details: { retryDelay: string }[] } };
    assert.equal(body.error.details[0].retryDelay, '2s');
  });

  test('auth: missing and invalid keys are 401; the key query parameter works', async () => {
    const url = `${mock.url}/gemini/v1beta/models/${MODEL}:generateContent`;
    const body = { contents: [{ parts: [{ text: 'x' }] }] };
    assert.equal((await postRaw(url, body, {})).status, 401);
    assert.equal((await postRaw(`${url}?key=g-test`, body, {})).status, 200);
    const bad = new GoogleGenAI({ apiKey: 'invalid-key', httpOptions: { baseUrl: `${mock.url}/gemini` } });
    const err = await rejects(bad.models.generateContent({ model: MODEL, contents: 'x' }));
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 401);
    const sse = await postRaw(`${url.replace(':generateContent', ':streamGenerateContent')}?alt=sse`, body, GEMINI_AUTH);
    assert.ok(parseSse(sse.text).length >= 4);
  });
});
