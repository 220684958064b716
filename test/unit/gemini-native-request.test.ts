import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
import type { ChatRequest } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { fromGeminiRequest } from '../../proxy/src/providers/gemini/native/request.ts';
import { fromGeminiEmbedRequest } from '../../proxy/src/providers/gemini/native/embeddings.ts';
import { toGeminiRequest } from '../../proxy/src/providers/gemini/request.ts';
import { toGeminiEmbedRequest } from '../../proxy/src/providers/gemini/embeddings.ts';
import type { GeminiGenerateContentRequest } from '../../proxy/src/providers/gemini/types.ts';

function assertInvalid(fn: () => unknown, param: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.param, param);
    return true;
  });
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A multi-turn agent conversation as @google/genai sends it. */
const fullRequest: GeminiGenerateContentRequest = {
  systemInstruction: { role: 'user', parts: [{ text: 'You are a travel assistant.' }] },
  contents: [
    {
      role: 'user',
      parts: [
        { text: 'Where is this, and what is the weather and time there?' },
        { inlineData: { mimeType: 'image/png', data: PNG } },
        { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/tower.jpg' } },
      ],
    },
    {
      role: 'model',
      parts: [
        { text: 'The photo shows the Eiffel Tower, so Paris.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' },
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLWNhbGw=' },
        { functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } } },
      ],
    },
    {
      role: 'user',
      parts: [
        // Answered out of order: matched by name.
        { functionResponse: { name: 'get_time', response: { time: '14:05' } } },
        { functionResponse: { name: 'get_weather', response: { temp_c: 21, sky: 'clear' } } },
      ],
    },
    { role: 'model', parts: [{ text: 'Paris: 21°C, clear, 14:05.', thoughtSignature: 'c2lnLXRleHQ=' }] },
    { role: 'user', parts: [{ text: 'And tomorrow?' }] },
  ],
  tools: [
    {
      functionDeclarations: [
        {
          name: 'get_weather',
          description: 'Weather forecast for a city',
          parameters: {
            type: 'OBJECT',
            properties: {
              city: { type: 'STRING', description: 'City name' },
              unit: { type: 'STRING', enum: ['c', 'f'], nullable: true },
              days: { type: 'ARRAY', items: { type: 'INTEGER' } },
            },
            required: ['city'],
            propertyOrdering: ['city', 'unit', 'days'],
          },
        },
        {
          name: 'get_time',
          description: 'Local time',
          parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'], additionalProperties: false },
        },
      ],
    },
  ],
  toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
  generationConfig: {
    temperature: 0.4,
    topP: 0.9,
    topK: 40,
    maxOutputTokens: 2048,
    stopSequences: ['END'],
    candidateCount: 1,
    seed: 7,
    presencePenalty: 0.1,
    frequencyPenalty: 0.2,
    responseMimeType: 'application/json',
    responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING' } }, required: ['answer'] },
    thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
  },
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
};

const expectedUnified: ChatRequest = {
  model: 'anthropic/claude-sonnet-4',
  messages: [
    { role: 'system', content: 'You are a travel assistant.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Where is this, and what is the weather and time there?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: 'https://example.com/photos/tower.jpg' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_1_1', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
      ],
      reasoning: 'The photo shows the Eiffel Tower, so Paris.',
      reasoning_details: [
        { type: 'reasoning.text', text: 'The photo shows the Eiffel Tower, so Paris.', signature: 'c2lnLXRob3VnaHQ=' },
        { type: 'reasoning.encrypted', id: 'call_1_0', data: 'c2lnLWNhbGw=' },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1_1', content: '{"time":"14:05"}' },
    { role: 'tool', tool_call_id: 'call_1_0', content: '{"temp_c":21,"sky":"clear"}' },
    {
      role: 'assistant',
      content: 'Paris: 21°C, clear, 14:05.',
      reasoning_details: [{ type: 'reasoning.encrypted', data: 'c2lnLXRleHQ=' }],
    },
    { role: 'user', content: 'And tomorrow?' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather forecast for a city',
        parameters: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name' },
            unit: { type: ['string', 'null'], enum: ['c', 'f'] },
            days: { type: 'array', items: { type: 'integer' } },
          },
          required: ['city'],
        },
      },
    },
    {
      type: 'function',
      function: {
        name: 'get_time',
        description: 'Local time',
        parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'], additionalProperties: false },
      },
    },
  ],
  tool_choice: 'auto',
  temperature: 0.4,
  top_p: 0.9,
  max_tokens: 2048,
  stop: ['END'],
  n: 1,
  seed: 7,
  presence_penalty: 0.1,
  frequency_penalty: 0.2,
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'response', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } },
  },
  reasoning: { max_tokens: 1024 },
};

describe('fromGeminiRequest: full request', () => {
  it('maps a multi-turn agent conversation with images, tools, config and thinking', () => {
    assert.deepEqual(fromGeminiRequest(fullRequest, 'anthropic/claude-sonnet-4'), expectedUnified);
  });

  it('strips a models/ prefix from the model', () => {
    const req = fromGeminiRequest({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, 'models/gemini-2.5-flash');
    assert.deepEqual(req, { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
  });
});

describe('fromGeminiRequest: conversation', () => {
  it('uses functionCall ids and matches responses by id before name', () => {
    const req = fromGeminiRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'Two lookups' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { id: 'fc-a', name: 'lookup', args: { q: 'a' } } },
              { functionCall: { id: 'fc-b', name: 'lookup', args: { q: 'b' } } },
              { functionCall: { name: 'lookup', args: { q: 'c' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { id: 'fc-b', name: 'lookup', response: { r: 'B' } } },
              // No id: the first unanswered call of that name.
              { functionResponse: { name: 'lookup', response: { r: 'A' } } },
              { functionResponse: { name: 'lookup', response: { r: 'C' } } },
              { text: 'Summarise.' },
            ],
          },
        ],
      },
      'm',
    );
    assert.deepEqual(
      req.messages.map((m) => [m.role, m.tool_call_id, m.content]),
      [
        ['user', undefined, 'Two lookups'],
        ['assistant', undefined, null],
        ['tool', 'fc-b', '{"r":"B"}'],
        ['tool', 'fc-a', '{"r":"A"}'],
        ['tool', 'call_1_2', '{"r":"C"}'],
        ['user', undefined, 'Summarise.'],
      ],
    );
    assert.deepEqual(
      req.messages[1].tool_calls?.map((c) => c.id),
      ['fc-a', 'fc-b', 'call_1_2'],
    );
  });

  it('keeps the name on a functionResponse that answers no call', () => {
    const req = fromGeminiRequest(
      { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'orphan', response: { ok: true } } }] }] },
      'm',
    );
    assert.deepEqual(req.messages, [{ role: 'tool', tool_call_id: 'call_0_0', name: 'orphan', content: '{"ok":true}' }]);
  });

  it('maps audio, documents, file references and multiple system parts', () => {
    const req = fromGeminiRequest(
      {
        systemInstruction: { parts: [{ text: 'Rule one.' }, { text: 'Rule two.' }] },
        contents: [
          {
            parts: [
              { inlineData: { mimeType: 'audio/mpeg', data: 'SUQz' } },
              { inlineData: { mimeType: 'audio/wav', data: 'UklG' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
              { fileData: { mimeType: 'video/mp4', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
              { fileData: { fileUri: 'gs://bucket/cat.png' } },
              { text: '' },
            ],
          },
        ],
      },
      'm',
    );
    assert.deepEqual(req.messages, [
      { role: 'system', content: 'Rule one.' },
      { role: 'system', content: 'Rule two.' },
      {
        role: 'user',
        content: [
          { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE' } },
          { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
          { type: 'image_url', image_url: { url: 'gs://bucket/cat.png' } },
        ],
      },
    ]);
  });

  it('gives an empty model turn empty content and ignores signature-only parts', () => {
    const req = fromGeminiRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'model', parts: [{ thoughtSignature: 'c2ln' }] },
        ],
      },
      'm',
    );
    assert.deepEqual(req.messages[1], { role: 'assistant', content: '' });
  });

  it('rejects parts, roles, tools and options the unified API cannot carry', () => {
    const user = (parts: GeminiGenerateContentRequest['contents'][number]['parts']): GeminiGenerateContentRequest => ({
      contents: [{ role: 'user', parts }],
    });
    assertInvalid(() => fromGeminiRequest(user([{ text: 'x' }, { executableCode: { code: 'print(1)' } }]), 'm'), 'contents[0].parts[1]');
    assertInvalid(() => fromGeminiRequest(user([{ text: 'x', thought: true }]), 'm'), 'contents[0].parts[0]');
    assertInvalid(() => fromGeminiRequest(user([{}]), 'm'), 'contents[0].parts[0]');
    assertInvalid(
      () =>
        fromGeminiRequest(
          {
            contents: [
              { role: 'user', parts: [{ text: 'draw' }] },
              { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }] },
            ],
          },
          'm',
        ),
      'contents[1].parts[0]',
    );
    assertInvalid(
      () => fromGeminiRequest({ contents: [{ role: 'system' as 'user', parts: [{ text: 'x' }] }] }, 'm'),
      'contents[0].role',
    );
    assertInvalid(() => fromGeminiRequest({ ...user([{ text: 'x' }]), tools: [{ googleSearch: {} }] }, 'm'), 'tools[0].googleSearch');
    assertInvalid(() => fromGeminiRequest({ ...user([{ text: 'x' }]), cachedContent: 'cachedContents/abc' }, 'm'), 'cachedContent');
    assertInvalid(
      () => fromGeminiRequest({ ...user([{ text: 'x' }]), generationConfig: { responseMimeType: 'text/x.enum' } }, 'm'),
      'generationConfig.responseMimeType',
    );
    assertInvalid(() => fromGeminiRequest({ contents: [] }, 'm'), 'contents');
    assertInvalid(() => fromGeminiRequest({} as GeminiGenerateContentRequest, 'm'), 'contents');
    assertInvalid(
      () => fromGeminiRequest({ systemInstruction: { parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }] }, contents: [] }, 'm'),
      'systemInstruction.parts[0]',
    );
  });
});

describe('fromGeminiRequest: options', () => {
  const base: GeminiGenerateContentRequest = {
    contents: [{ role: 'user', parts: [{ text: 'x' }] }],
    tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }],
  };
  const choice = (mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED', allowedFunctionNames?: string[]) =>
    fromGeminiRequest({ ...base, toolConfig: { functionCallingConfig: { mode, ...(allowedFunctionNames && { allowedFunctionNames }) } } }, 'm');

  it('maps function calling modes to tool_choice', () => {
    assert.equal(choice('AUTO').tool_choice, 'auto');
    assert.equal(choice('VALIDATED').tool_choice, 'auto');
    assert.equal(choice('NONE').tool_choice, 'none');
    assert.equal(choice('ANY').tool_choice, 'required');
    assert.deepEqual(choice('ANY', ['b']).tool_choice, { type: 'function', function: { name: 'b' } });
    assert.equal(choice('ANY', ['b']).tools?.length, 3);
    const restricted = choice('ANY', ['a', 'c']);
    assert.equal(restricted.tool_choice, 'required');
    assert.deepEqual(
      restricted.tools?.map((t) => t.function.name),
      ['a', 'c'],
    );
    assert.deepEqual(fromGeminiRequest(base, 'm').tools?.[0], { type: 'function', function: { name: 'a' } });
  });

  it('maps thinking budgets and levels', () => {
    const thinking = (thinkingConfig: NonNullable<GeminiGenerateContentRequest['generationConfig']>['thinkingConfig']) =>
      fromGeminiRequest({ ...base, generationConfig: { thinkingConfig } }, 'm').reasoning;
    assert.deepEqual(thinking({ thinkingBudget: 0 }), { max_tokens: 0 });
    assert.deepEqual(thinking({ thinkingBudget: 4096, includeThoughts: true }), { max_tokens: 4096 });
    assert.equal(thinking({ thinkingBudget: -1 }), undefined);
    assert.deepEqual(thinking({ thinkingLevel: 'HIGH' }), { effort: 'high' });
  });

  it('maps JSON mode with and without a schema', () => {
    const format = (generationConfig: GeminiGenerateContentRequest['generationConfig']) =>
      fromGeminiRequest({ ...base, generationConfig }, 'm').response_format;
    assert.deepEqual(format({ responseMimeType: 'application/json' }), { type: 'json_object' });
    assert.deepEqual(format({ responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: {} } }), {
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: {} } },
    });
    assert.equal(format({ responseMimeType: 'text/plain' }), undefined);
  });
});

describe('fromGeminiRequest → toGeminiRequest round trip', () => {
  it('reproduces a representative native request', () => {
    const native: GeminiGenerateContentRequest = {
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Where is this?' },
            { inlineData: { mimeType: 'image/png', data: PNG } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/tower.jpg' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Eiffel Tower.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLWNhbGw=' },
            { functionCall: { name: 'get_time', args: { tz: 'Europe/Paris' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp_c: 21 } } },
            { functionResponse: { name: 'get_time', response: { time: '14:05' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'Paris: 21°C at 14:05.', thoughtSignature: 'c2lnLXRleHQ=' }] },
        { role: 'user', parts: [{ text: 'And tomorrow?' }] },
      ],
      systemInstruction: { parts: [{ text: 'You are a travel assistant.' }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather for a city',
              parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
            { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { tz: { type: 'string' } } } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        temperature: 0.4,
        topP: 0.9,
        maxOutputTokens: 2048,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { answer: { type: 'string' } } },
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      },
    };
    assert.deepEqual(toGeminiRequest(fromGeminiRequest(native, 'gemini-2.5-flash')), native);
  });
});

describe('fromGeminiRequest: what @google/genai sends', () => {
  it('translates the body the SDK posts for generateContent', async () => {
    let captured: { url?: string; body?: unknown } = {};
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        captured = { url: req.url, body: JSON.parse(body) };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: `http://127.0.0.1:${port}/genai` } });
      await ai.models.generateContent({
        model: 'openai/gpt-4o',
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] },
        ],
        config: {
          systemInstruction: 'Be brief.',
          temperature: 0.2,
          maxOutputTokens: 256,
          tools: [
            {
              functionDeclarations: [
                { name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } },
              ],
            },
          ],
          toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } },
          thinkingConfig: { thinkingBudget: 512, includeThoughts: true },
        },
      });
      assert.equal(captured.url, '/genai/v1beta/models/openai/gpt-4o:generateContent');
      assert.deepEqual(fromGeminiRequest(captured.body as GeminiGenerateContentRequest, 'openai/gpt-4o'), {
        model: 'openai/gpt-4o',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1_0', content: '{"temp_c":21}' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        temperature: 0.2,
        max_tokens: 256,
        reasoning: { max_tokens: 512 },
      });
    } finally {
      server.close();
    }
  });
});

describe('fromGeminiEmbedRequest', () => {
  it('maps embedContent to a single input', () => {
    assert.deepEqual(
      fromGeminiEmbedRequest(
        'embedContent',
        { content: { parts: [{ text: 'hello' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 256 },
        'openai/text-embedding-3-small',
      ),
      { model: 'openai/text-embedding-3-small', input: 'hello', dimensions: 256 },
    );
  });

  it('maps batchEmbedContents (as the SDK sends it) to a list, and round-trips through toGeminiEmbedRequest', () => {
    const body = {
      requests: [
        { model: 'models/text-embedding-004', content: { role: 'user', parts: [{ text: 'a' }] }, outputDimensionality: 8 },
        { model: 'models/text-embedding-004', content: { role: 'user', parts: [{ text: 'b' }] }, outputDimensionality: 8 },
      ],
    };
    const req = fromGeminiEmbedRequest('batchEmbedContents', body, 'text-embedding-004');
    assert.deepEqual(req, { model: 'text-embedding-004', input: ['a', 'b'], dimensions: 8 });
    const back = toGeminiEmbedRequest(req, 'text-embedding-004');
    assert.equal(back.method, 'batchEmbedContents');
    assert.deepEqual(back.body, {
      requests: body.requests.map(({ content, ...rest }) => ({ ...rest, content: { parts: content.parts } })),
    });
  });

  it('rejects non-text parts, empty batches and mixed dimensions', () => {
    assertInvalid(
      () => fromGeminiEmbedRequest('embedContent', { content: { parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }] } }, 'm'),
      'content.parts[0]',
    );
    assertInvalid(() => fromGeminiEmbedRequest('batchEmbedContents', { requests: [] }, 'm'), 'requests');
    assertInvalid(
      () =>
        fromGeminiEmbedRequest(
          'batchEmbedContents',
          {
            requests: [
              { content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 },
              { content: { parts: [{ text: 'b' }] }, outputDimensionality: 16 },
            ],
          },
          'm',
        ),
      'requests[1].outputDimensionality',
    );
  });
});
