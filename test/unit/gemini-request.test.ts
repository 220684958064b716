import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest, Message } from '../../proxy/src/unified/chat.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';
import { SKIP_SIGNATURE, toGeminiRequest } from '../../proxy/src/providers/gemini/request.ts';

const chat = (messages: Message[], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gemini/gemini-2.5-flash',
  messages,
  ...extra,
});

function assertInvalid(fn: () => unknown, param: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.param, param);
    return true;
  });
}

describe('toGeminiRequest: conversation', () => {
  it('moves system and developer messages to systemInstruction and maps roles', () => {
    const body = toGeminiRequest(
      chat([
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Bonjour' },
        { role: 'user', content: 'Weather?' },
      ]),
    );
    assert.deepEqual(body, {
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
        { role: 'user', parts: [{ text: 'Weather?' }] },
      ],
    });
  });

  it('merges consecutive same-role turns and skips empty ones', () => {
    const body = toGeminiRequest(
      chat([
        { role: 'user', content: 'one' },
        { role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'three' },
        { role: 'assistant', content: 'a' },
        { role: 'assistant', content: 'b' },
      ]),
    );
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] },
      { role: 'model', parts: [{ text: 'a' }, { text: 'b' }] },
    ]);
    assert.equal(body.systemInstruction, undefined);
    assert.equal(body.generationConfig, undefined);
  });

  it('turns tool calls and tool results into functionCall / functionResponse parts', () => {
    const body = toGeminiRequest(
      chat([
        { role: 'user', content: 'Weather in Paris and London?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/London"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"temp_c":21,"sky":"clear"}' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '14:05' }] },
        { role: 'user', content: 'Thanks' },
      ]),
    );
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'Weather in Paris and London?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP_SIGNATURE },
          { functionCall: { name: 'get_time', args: { tz: 'Europe/London' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp_c: 21, sky: 'clear' } } },
          { functionResponse: { name: 'get_time', response: { content: '14:05' } } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('wraps non-object JSON tool results and finds names of reused ids in the closest call', () => {
    const call = (id: string, name: string) => ({
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id, type: 'function' as const, function: { name, arguments: '' } }],
    });
    const body = toGeminiRequest(
      chat([
        { role: 'user', content: 'go' },
        call('call_0_0', 'first'),
        { role: 'tool', tool_call_id: 'call_0_0', content: '[1,2]' },
        call('call_0_0', 'second'),
        { role: 'tool', tool_call_id: 'call_0_0', content: '42' },
      ]),
    );
    assert.deepEqual(body.contents[1].parts[0].functionCall, { name: 'first', args: {} });
    assert.deepEqual(body.contents[2].parts, [{ functionResponse: { name: 'first', response: { content: '[1,2]' } } }]);
    assert.deepEqual(body.contents[4].parts, [{ functionResponse: { name: 'second', response: { content: '42' } } }]);
  });

  it('falls back to the tool message name, and rejects a result it cannot name', () => {
    const named = toGeminiRequest(chat([{ role: 'tool', tool_call_id: 'x', name: 'lookup', content: 'ok' }]));
    assert.deepEqual(named.contents, [
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'ok' } } }] },
    ]);
    assertInvalid(
      () => toGeminiRequest(chat([{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'ghost', content: 'ok' }])),
      'messages[1].tool_call_id',
    );
  });

  it('rejects tool call arguments that are not a JSON object, naming the field', () => {
    const withArgs = (args: string): Message[] => [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'ok', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'bad', type: 'function', function: { name: 'f', arguments: args } },
        ],
      },
    ];
    assertInvalid(() => toGeminiRequest(chat(withArgs('{"city": '))), 'messages[1].tool_calls[1].function.arguments');
    assertInvalid(() => toGeminiRequest(chat(withArgs('[1]'))), 'messages[1].tool_calls[1].function.arguments');
  });
});

describe('toGeminiRequest: thought signatures', () => {
  it('replays each signature on the part it came from', () => {
    const body = toGeminiRequest(
      chat([
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: 'Checking both.',
          reasoning: 'Need two lookups.',
          reasoning_details: [
            { type: 'reasoning.text', text: 'Need two lookups.', signature: 'c2lnLXRob3VnaHQ=' },
            { type: 'reasoning.text', text: 'unsigned summary' },
            { type: 'reasoning.encrypted', data: 'c2lnLXRleHQ=' },
            { type: 'reasoning.encrypted', id: 'call_2', data: 'c2lnLWNhbGwy' },
            { type: 'reasoning.encrypted', id: 'call_1', data: 'c2lnLWNhbGwx' },
          ],
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{}' } },
            { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
          ],
        },
      ]),
    );
    assert.deepEqual(body.contents[1], {
      role: 'model',
      parts: [
        { text: 'Need two lookups.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' },
        { text: 'Checking both.', thoughtSignature: 'c2lnLXRleHQ=' },
        { functionCall: { name: 'a', args: {} }, thoughtSignature: 'c2lnLWNhbGwx' },
        { functionCall: { name: 'b', args: { x: 1 } }, thoughtSignature: 'c2lnLWNhbGwy' },
      ],
    });
  });

  it("reads the signature from Gemini's OpenAI-compatible extra_content", () => {
    const toolCall = {
      id: 'c',
      type: 'function' as const,
      function: { name: 'f', arguments: '{}' },
      extra_content: { google: { thought_signature: 'Y29tcGF0' } },
    };
    const body = toGeminiRequest(chat([{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [toolCall] }]));
    assert.deepEqual(body.contents[1].parts, [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'Y29tcGF0' }]);
  });

  it('leaves a plain text answer unsigned', () => {
    const body = toGeminiRequest(chat([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }]));
    assert.deepEqual(body.contents[1].parts, [{ text: 'a' }]);
  });
});

describe('toGeminiRequest: media', () => {
  it('sends data URLs inline and other URLs as fileData with a guessed MIME type', () => {
    const body = toGeminiRequest(
      chat([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?sig=abc#x', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render' } },
            { type: 'image_url', image_url: { url: 'https://example.com/photo.JPG' } },
          ],
        },
      ]),
    );
    assert.deepEqual(body.contents[0].parts, [
      { text: 'Compare these' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?sig=abc#x' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photo.JPG' } },
    ]);
  });

  it('maps audio and file parts, and rejects an empty file part', () => {
    const body = toGeminiRequest(
      chat([
        {
          role: 'user',
          content: [
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', filename: 'notes.txt' } },
          ],
        },
      ]),
    );
    assert.deepEqual(body.contents[0].parts, [
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { fileData: { mimeType: 'text/plain', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
    ]);
    assertInvalid(
      () => toGeminiRequest(chat([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'file', file: {} }] }])),
      'messages[0].content[1].file',
    );
  });
});

describe('toGeminiRequest: tools and options', () => {
  it('declares tools with parametersJsonSchema, dropping only $schema', () => {
    const body = toGeminiRequest(
      chat([{ role: 'user', content: 'q' }], {
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Current weather',
              strict: true,
              parameters: {
                $schema: 'http://json-schema.org/draft-07/schema#',
                type: 'object',
                properties: { city: { type: 'string' }, unit: { anyOf: [{ const: 'c' }, { const: 'f' }] } },
                required: ['city'],
                additionalProperties: false,
              },
            },
          },
          { type: 'function', function: { name: 'ping' } },
        ],
      }),
    );
    assert.deepEqual(body.tools, [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather',
            parametersJsonSchema: {
              type: 'object',
              properties: { city: { type: 'string' }, unit: { anyOf: [{ const: 'c' }, { const: 'f' }] } },
              required: ['city'],
              additionalProperties: false,
            },
          },
          { name: 'ping' },
        ],
      },
    ]);
    assert.equal(body.toolConfig, undefined);
  });

  it('maps every tool_choice form', () => {
    const config = (tool_choice: ChatRequest['tool_choice']) =>
      toGeminiRequest(chat([{ role: 'user', content: 'q' }], { tool_choice })).toolConfig;
    assert.deepEqual(config('auto'), { functionCallingConfig: { mode: 'AUTO' } });
    assert.deepEqual(config('required'), { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual(config('none'), { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual(config({ type: 'function', function: { name: 'get_weather' } }), {
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
  });

  it('maps sampling options into generationConfig', () => {
    const body = toGeminiRequest(
      chat([{ role: 'user', content: 'q' }], {
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 100,
        max_completion_tokens: 250,
        stop: 'END',
        n: 2,
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
      }),
    );
    assert.deepEqual(body.generationConfig, {
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 250,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
    });
    const fallback = toGeminiRequest(chat([{ role: 'user', content: 'q' }], { max_tokens: 100, stop: ['a', 'b'] }));
    assert.deepEqual(fallback.generationConfig, { maxOutputTokens: 100, stopSequences: ['a', 'b'] });
  });

  it('maps response_format to JSON mode and responseJsonSchema', () => {
    const config = (response_format: Record<string, unknown>) =>
      toGeminiRequest(chat([{ role: 'user', content: 'q' }], { response_format })).generationConfig;
    assert.equal(config({ type: 'text' }), undefined);
    assert.deepEqual(config({ type: 'json_object' }), { responseMimeType: 'application/json' });
    assert.deepEqual(
      config({
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
        },
      }),
      {
        responseMimeType: 'application/json',
        responseJsonSchema: {
          type: 'object',
          properties: { name: { type: 'string' } },
          required: ['name'],
          additionalProperties: false,
        },
      },
    );
  });

  it('maps reasoning settings to thinkingConfig', () => {
    const thinking = (extra: Partial<ChatRequest>) =>
      toGeminiRequest(chat([{ role: 'user', content: 'q' }], extra)).generationConfig?.thinkingConfig;
    assert.deepEqual(thinking({ reasoning: { max_tokens: 2048 } }), { thinkingBudget: 2048, includeThoughts: true });
    assert.deepEqual(thinking({ reasoning: { max_tokens: 0 } }), { thinkingBudget: 0 });
    assert.deepEqual(thinking({ reasoning: { max_tokens: 300, effort: 'high' } }), { thinkingBudget: 300, includeThoughts: true });
    assert.deepEqual(thinking({ reasoning_effort: 'none' }), { thinkingBudget: 0 });
    assert.deepEqual(thinking({ reasoning_effort: 'minimal' }), { thinkingBudget: 512, includeThoughts: true });
    assert.deepEqual(thinking({ reasoning_effort: 'low' }), { thinkingBudget: 1024, includeThoughts: true });
    assert.deepEqual(thinking({ reasoning: { effort: 'medium' }, reasoning_effort: 'low' }), {
      thinkingBudget: 8192,
      includeThoughts: true,
    });
    assert.deepEqual(thinking({ reasoning_effort: 'high' }), { thinkingBudget: 24576, includeThoughts: true });
    assert.equal(thinking({}), undefined);
  });
});
