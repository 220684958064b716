// The openai SDK (and the genai SDK through /genai) through the gateway to Vertex AI: Gemini on
// generateContent and Claude on rawPredict, authenticated with a service account whose OAuth token
// the gateway gets from the mock's token endpoint, caches, and refreshes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';
import { startMockProvider, type MockProvider, type RecordedRequest } from '../mock-provider/server.ts';
import { createServiceAccount, revokeTokens, type ServiceAccountKeyFile } from '../mock-provider/vertex.ts';

const GEMINI = 'vertex/gemini-2.5-flash';
const CLAUDE = 'vertex/claude-sonnet-4-5';
const SCOPE = '/vertex/v1/projects/mock-project/locations/us-east5/publishers';
const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
};

let mock: MockProvider;
let gateway: InProcessGateway;
let client: OpenAI;
let account: ServiceAccountKeyFile;

function vertexConfig(keys: unknown[]): unknown {
  return { providers: { vertex: { keys, network_config: { base_url: `${mock.url}/vertex`, max_retries: 0 } } } };
}

const saKey = (envVar: string, extra: Record<string, unknown> = {}) => ({
  name: `sa-${envVar}`,
  value: '',
  weight: 1,
  vertex_key_config: { project_id: 'mock-project', region: 'us-east5', auth_credentials: `env.${envVar}` },
  ...extra,
});

const tokenFetches = (): RecordedRequest[] => mock.requests.filter((r) => r.path === '/vertex/token');
const modelCalls = (): RecordedRequest[] => mock.requests.filter((r) => r.path.includes('/publishers/'));

before(async () => {
  mock = await startMockProvider();
  account = createServiceAccount(mock.url);
  // The key file comes from the environment through an env.VAR reference, as users configure it.
  gateway = await startGateway(vertexConfig([saKey('VERTEX_SA')]), { env: { VERTEX_SA: JSON.stringify(account) } });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
});
after(async () => {
  await gateway?.stop();
  await mock?.close();
});

async function collect(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  let text = '';
  let args = '';
  let name: string | undefined;
  let finish: string | null = null;
  let chunks = 0;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices[0];
    if (c?.delta.content) text += c.delta.content;
    for (const t of c?.delta.tool_calls ?? []) {
      if (t.function?.name) name = t.function.name;
      args += t.function?.arguments ?? '';
    }
    if (c?.finish_reason) finish = c.finish_reason;
  }
  return { text, args, name, finish, chunks, usage };
}

describe('vertex Gemini (publishers/google)', () => {
  test(`JSON reply on the project/location path with the bearer token ${compat('/v1', 'chat', 'vertex')}`, async () => {
    const res = await client.chat.completions.create({
      model: GEMINI,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there vertex' }],
      max_tokens: 100,
    });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello there vertex');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.ok(res.usage && res.usage.prompt_tokens > 0 && res.usage.completion_tokens === 6);
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'vertex');
    const seen = modelCalls().at(-1)!;
    assert.equal(seen.path, `${SCOPE}/google/models/gemini-2.5-flash:generateContent`);
    assert.match(String(seen.headers.authorization), /^Bearer ya29\./);
    assert.deepEqual((seen.body as { systemInstruction: unknown }).systemInstruction, { parts: [{ text: 'Be brief.' }] });
  });

  test(`streaming reply in several chunks with usage ${compat('/v1', 'chat.stream', 'vertex')}`, async () => {
    const out = await collect(await client.chat.completions.create({
      model: GEMINI, messages: [{ role: 'user', content: 'Stream me a vertex reply' }], stream: true, stream_options: { include_usage: true },
    }));
    assert.equal(out.text, 'Mock reply to: Stream me a vertex reply');
    assert.ok(out.chunks > 3, `${out.chunks} chunks`);
    assert.equal(out.finish, 'stop');
    assert.equal(out.usage?.completion_tokens, 8);
    const seen = modelCalls().at(-1)!;
    assert.equal(seen.path, `${SCOPE}/google/models/gemini-2.5-flash:streamGenerateContent`);
    assert.equal(seen.query.alt, 'sse');
  });

  test(`tool call, then the tool result answered ${compat('/v1', 'chat.tools', 'vertex')}`, async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Lima' }];
    const first = await client.chat.completions.create({ model: GEMINI, messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls?.[0];
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.ok(call && call.type === 'function');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'Weather in Lima' });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'cloudy' });
    const second = await client.chat.completions.create({ model: GEMINI, messages, tools: [weatherTool] });
    assert.equal(second.choices[0].message.content, 'Tool said: cloudy');
  });

  test(`embeddings through :predict ${compat('/v1', 'embeddings', 'vertex')}`, async () => {
    const res = await client.embeddings.create({ model: 'vertex/text-embedding-005', input: ['first text', 'second one here'], dimensions: 16 });
    assert.equal(res.data.length, 2);
    assert.equal(res.data[0].embedding.length, 16);
    assert.equal(res.usage.prompt_tokens, 5);
    assert.equal(modelCalls().at(-1)!.path, `${SCOPE}/google/models/text-embedding-005:predict`);
  });
});

describe('vertex Claude (publishers/anthropic)', () => {
  test(`JSON reply through rawPredict: no model in the body, anthropic_version vertex-2023-10-16 ${compat('/v1', 'chat', 'vertex')}`, async () => {
    const res = await client.chat.completions.create({
      model: CLAUDE, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there claude' }], max_tokens: 100,
    });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello there claude');
    assert.equal(res.choices[0].finish_reason, 'stop');
    const seen = modelCalls().at(-1)!;
    assert.equal(seen.path, `${SCOPE}/anthropic/models/claude-sonnet-4-5:rawPredict`);
    const body = seen.body as Record<string, unknown>;
    assert.equal(body.model, undefined);
    assert.equal(body.anthropic_version, 'vertex-2023-10-16');
    assert.equal(body.max_tokens, 100);
    assert.equal(seen.headers['anthropic-version'], undefined);
  });

  test(`streaming reply through streamRawPredict ${compat('/v1', 'chat.stream', 'vertex')}`, async () => {
    const out = await collect(await client.chat.completions.create({
      model: CLAUDE, messages: [{ role: 'user', content: 'Stream claude on vertex' }], stream: true, stream_options: { include_usage: true },
    }));
    assert.equal(out.text, 'Mock reply to: Stream claude on vertex');
    assert.ok(out.chunks > 3);
    assert.equal(out.finish, 'stop');
    assert.ok((out.usage?.completion_tokens ?? 0) > 0);
    assert.equal(modelCalls().at(-1)!.path, `${SCOPE}/anthropic/models/claude-sonnet-4-5:streamRawPredict`);
  });

  test(`streamed tool call, then the tool result answered ${compat('/v1', 'chat.tools.stream', 'vertex')} ${compat('/v1', 'chat.tools', 'vertex')}`, async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo' }];
    const out = await collect(await client.chat.completions.create({ model: CLAUDE, messages, tools: [weatherTool], tool_choice: 'required', stream: true }));
    assert.equal(out.name, 'get_weather');
    assert.deepEqual(JSON.parse(out.args), { query: 'Weather in Oslo' });
    assert.equal(out.finish, 'tool_calls');
    const first = await client.chat.completions.create({ model: CLAUDE, messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls![0];
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'snowing' });
    const second = await client.chat.completions.create({ model: CLAUDE, messages, tools: [weatherTool] });
    assert.equal(second.choices[0].message.content, 'Tool said: snowing');
  });

  test(`the GenAI SDK through /genai reaches Claude on Vertex ${compat('/genai', 'generateContent', 'vertex')}`, async () => {
    const ai = new GoogleGenAI({ apiKey: 'not-needed', httpOptions: { baseUrl: `${gateway.url}/genai` } });
    const res = await ai.models.generateContent({ model: CLAUDE, contents: 'Hello from genai' });
    assert.equal(res.text, 'Mock reply to: Hello from genai');
    assert.equal(modelCalls().at(-1)!.path, `${SCOPE}/anthropic/models/claude-sonnet-4-5:rawPredict`);
  });
});

describe('vertex OAuth token lifecycle', () => {
  test('one token was fetched and reused for every request so far', () => {
    assert.ok(modelCalls().length >= 10, `${modelCalls().length} model calls`);
    assert.equal(tokenFetches().length, 1);
    assert.equal(new Set(modelCalls().map((r) => r.headers.authorization)).size, 1);
  });

  test('a token Vertex rejects (revoked) is replaced and the request still succeeds', async () => {
    const before = modelCalls().length;
    revokeTokens(account.client_email);
    const res = await client.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'after revocation' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: after revocation');
    const calls = modelCalls().slice(before);
    assert.deepEqual(calls.map((r) => r.status), [401, 200]);
    assert.notEqual(calls[0].headers.authorization, calls[1].headers.authorization);
    assert.equal(tokenFetches().length, 2);
  });

  test('upstream errors keep their status and message', async () => {
    const missing = await client.chat.completions.create({ model: 'vertex/nonexistent-model', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.APIError && missing.status === 404 && /Publisher Model/.test(missing.message), String(missing));
    mock.inject({ format: 'vertex', status: 429, message: 'Quota exceeded for aiplatform.googleapis.com' });
    const limited = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(limited instanceof OpenAI.APIError && limited.status === 429 && /Quota exceeded/.test(limited.message), String(limited));
  });
});

describe('vertex short-lived tokens and API keys', () => {
  let shortLived: InProcessGateway;
  let sdk: OpenAI;
  let sa: ServiceAccountKeyFile;
  before(async () => {
    sa = createServiceAccount(mock.url, { tokenLifetimeSeconds: 2 });
    shortLived = await startGateway(vertexConfig([
      saKey('SHORT_SA', { models: ['gemini-2.5-flash'] }),
      // No credentials: the value is a Vertex API key, which reaches Google's models.
      { name: 'api-key', value: 'env.VERTEX_KEY', weight: 1, models: ['gemini-2.0-flash'], vertex_key_config: { project_id: 'keyed', region: 'global' } },
    ]), { env: { SHORT_SA: JSON.stringify(sa), VERTEX_KEY: 'AIza-vertex-test' } });
    sdk = new OpenAI({ baseURL: `${shortLived.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  });
  after(() => shortLived?.stop());

  test('an expired token is refreshed before the next call', async () => {
    const start = tokenFetches().length;
    const ask = async (text: string) => {
      const res = await sdk.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: text }] });
      assert.equal(res.choices[0].message.content, `Mock reply to: ${text}`);
      return modelCalls().at(-1)!;
    };
    const a = await ask('first');
    const b = await ask('second');
    assert.equal(a.headers.authorization, b.headers.authorization);
    assert.equal(tokenFetches().length - start, 1);
    await new Promise((r) => setTimeout(r, 2100));
    // The old token is now expired at the mock too: the gateway must not send it.
    const stale = await fetch(`${mock.url}${a.path}`, { method: 'POST', headers: { authorization: String(a.headers.authorization), 'content-type': 'application/json' }, body: JSON.stringify(a.body) });
    assert.equal(stale.status, 401);
    const c = await ask('third');
    assert.notEqual(c.headers.authorization, a.headers.authorization);
    assert.equal(c.status, 200);
    assert.equal(tokenFetches().length - start, 2);
  });

  test('a key without credentials sends its value as a Vertex API key', async () => {
    const fetches = tokenFetches().length;
    const res = await sdk.chat.completions.create({ model: 'vertex/gemini-2.0-flash', messages: [{ role: 'user', content: 'keyed call' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: keyed call');
    const seen = modelCalls().at(-1)!;
    assert.equal(seen.path, '/vertex/v1/projects/keyed/locations/global/publishers/google/models/gemini-2.0-flash:generateContent');
    assert.equal(seen.headers['x-goog-api-key'], 'AIza-vertex-test');
    assert.equal(seen.headers.authorization, undefined);
    assert.equal(tokenFetches().length, fetches);
  });
});
