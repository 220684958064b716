// Azure OpenAI both ways, with the official `openai` package:
// (a) an OpenAI client through /v1 to `azure/<model>` upstreams (the mock's Azure wire format);
// (b) an AzureOpenAI client pointed at `{gateway}/openai`, through the deployment routes, to
//     OpenAI- and Anthropic-format upstreams;
// (c) the mock's Azure format itself, with AzureOpenAI talking to it directly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';
import { mockProvider } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider, type RecordedRequest } from '../mock-provider/server.ts';

const API_VERSION = '2024-10-21';
const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
};

let mock: MockProvider;
/** A second Azure resource (another origin), for a key with its own endpoint. */
let mockEu: MockProvider;
let gateway: InProcessGateway;
let client: OpenAI;
let azureClient: AzureOpenAI;

before(async () => {
  mock = await startMockProvider();
  mockEu = await startMockProvider();
  gateway = await startGateway(
    {
      providers: {
        azure: {
          keys: [
            {
              name: 'primary',
              value: 'env.AZURE_TEST_KEY',
              weight: 1,
              models: ['gpt-4o', 'gpt-35-turbo-instruct', 'text-embedding-3-small', 'nonexistent-model'],
              azure_key_config: { endpoint: `${mock.url}/azure/`, deployments: { 'gpt-4o': 'chat-prod' }, api_version: API_VERSION },
            },
            {
              name: 'entra-eu',
              value: 'entra-token-eu',
              weight: 1,
              models: ['gpt-4o-eu'],
              azure_key_config: { endpoint: `${mockEu.url}/azure`, api_version: '2025-04-01-preview', auth_type: 'bearer' },
            },
          ],
          network_config: { max_retries: 0 },
        },
        openai: mockProvider(mock.url, 'openai'),
        anthropic: mockProvider(mock.url, 'anthropic'),
      },
    },
    { env: { AZURE_TEST_KEY: 'azure-key-1' } },
  );
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  azureClient = new AzureOpenAI({ endpoint: `${gateway.url}/openai`, apiKey: 'gateway-accepts-any', apiVersion: API_VERSION, maxRetries: 0 });
});
after(async () => {
  await gateway?.stop();
  await mock?.close();
  await mockEu?.close();
});

const last = (m: MockProvider = mock): RecordedRequest => m.requests.at(-1)!;
const extraFields = (v: unknown) => (v as { extra_fields: { provider: string } }).extra_fields;

describe('(a) OpenAI client to an azure upstream', () => {
  test(`chat: deployment path, api-version, api-key, mapped deployment ${compat('/v1', 'chat', 'azure')}`, async () => {
    const res = await client.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'Hello Azure' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello Azure');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.equal(extraFields(res).provider, 'azure');
    const seen = last();
    assert.equal(seen.format, 'azure');
    assert.equal(seen.path, '/azure/openai/deployments/chat-prod/chat/completions');
    assert.equal(seen.query['api-version'], API_VERSION);
    assert.equal(seen.headers['api-key'], 'azure-key-1');
    assert.equal(seen.headers.authorization, undefined);
  });

  test(`streaming: the content-filter chunk Azure sends first is not passed on ${compat('/v1', 'chat.stream', 'azure')}`, async () => {
    const stream = await client.chat.completions.create({
      model: 'azure/gpt-4o',
      messages: [{ role: 'user', content: 'Stream from Azure please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0];
      if (c?.delta.content) text += c.delta.content;
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(text, 'Mock reply to: Stream from Azure please');
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 7);
    assert.ok(chunks.length > 3);
    assert.ok(chunks.every((c) => c.choices.length > 0 || c.usage), 'no chunk without choices or usage');
    assert.match(String(last().responseBody), /prompt_filter_results/, 'the mock did send the filter chunk');
    assert.equal(last().path, '/azure/openai/deployments/chat-prod/chat/completions');
  });

  test(`tool call, then the tool result answered ${compat('/v1', 'chat.tools', 'azure')}`, async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo' }];
    const first = await client.chat.completions.create({ model: 'azure/gpt-4o', messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls?.[0];
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.ok(call && call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'Weather in Oslo' });
    const second = await client.chat.completions.create({
      model: 'azure/gpt-4o',
      tools: [weatherTool],
      messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'snowing' }],
    });
    assert.equal(second.choices[0].message.content, 'Tool said: snowing');
  });

  test('upstream errors keep their status: DeploymentNotFound 404, throttling 429', async () => {
    const notFound = await client.chat.completions.create({ model: 'azure/nonexistent-model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(notFound instanceof OpenAI.NotFoundError, String(notFound));
    assert.equal(notFound.status, 404);
    assert.match(notFound.message, /deployment for this resource does not exist/);
    assert.equal(notFound.code, 'DeploymentNotFound');
    mock.inject({ format: 'azure', status: 429, retryAfter: 1 });
    const limited = await client.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
    assert.equal(limited.status, 429);
    assert.match(limited.message, /exceeded the token rate limit/);
  });

  test(`embeddings and native text completion on their deployment paths ${compat('/v1', 'embeddings', 'azure')} ${compat('/v1', 'completions', 'azure')}`, async () => {
    const emb = await client.embeddings.create({ model: 'azure/text-embedding-3-small', input: ['one', 'two'] });
    assert.equal(emb.data.length, 2);
    assert.equal(emb.data[0].embedding.length, 8);
    assert.equal(last().path, '/azure/openai/deployments/text-embedding-3-small/embeddings');
    assert.equal(last().query['api-version'], API_VERSION);
    const text = await client.completions.create({ model: 'azure/gpt-35-turbo-instruct', prompt: 'Say this is a test' });
    assert.equal(text.choices[0].text, 'Mock reply to: Say this is a test');
    assert.equal(last().path, '/azure/openai/deployments/gpt-35-turbo-instruct/completions');
  });

  test(`responses: Azure v1 API, the deployment in the body, no api-version ${compat('/v1', 'responses', 'azure')} ${compat('/v1', 'responses.stream', 'azure')}`, async () => {
    const res = await client.responses.create({ model: 'azure/gpt-4o', input: 'Respond from Azure' });
    assert.equal(res.output_text, 'Mock reply to: Respond from Azure');
    assert.equal(last().path, '/azure/openai/v1/responses');
    assert.equal(last().query['api-version'], undefined);
    assert.equal((last().body as { model: string }).model, 'chat-prod');
    const stream = await client.responses.create({ model: 'azure/gpt-4o', input: 'Stream a response', stream: true });
    let text = '';
    for await (const ev of stream) if (ev.type === 'response.output_text.delta') text += ev.delta;
    assert.equal(text, 'Mock reply to: Stream a response');
  });

  test('models list asks the resource with its api-version', async () => {
    const page = await client.models.list({ query: { provider: 'azure' } } as OpenAI.RequestOptions);
    assert.ok(page.data.length > 0);
    assert.ok(page.data.every((m) => m.id.startsWith('azure/')));
    const seen = mock.requests.filter((r) => r.format === 'azure').at(-1)!;
    assert.equal(seen.path, '/azure/openai/models');
    assert.equal(seen.query['api-version'], API_VERSION);
  });

  test('a key with its own endpoint and bearer auth: its resource, token and api-version', async () => {
    const before = mock.requests.length;
    const res = await client.chat.completions.create({ model: 'azure/gpt-4o-eu', messages: [{ role: 'user', content: 'Hello EU' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello EU');
    assert.equal(mock.requests.length, before, 'the first resource was not called');
    const seen = last(mockEu);
    assert.equal(seen.path, '/azure/openai/deployments/gpt-4o-eu/chat/completions');
    assert.equal(seen.query['api-version'], '2025-04-01-preview');
    assert.equal(seen.headers.authorization, 'Bearer entra-token-eu');
    assert.equal(seen.headers['api-key'], undefined);
  });
});

const UPSTREAMS = [
  { format: 'openai', model: 'openai/gpt-4o' },
  { format: 'anthropic', model: 'anthropic/claude-sonnet-4-5' },
] as const;

describe('(b) AzureOpenAI client to the gateway deployment routes', () => {
  for (const { format, model } of UPSTREAMS) {
    test(`chat JSON to a ${format}-format upstream; the deployment names the model ${compat('/openai/deployments', 'chat', format)}`, async () => {
      const res = await azureClient.chat.completions.create({ model, messages: [{ role: 'user', content: `Hello ${format} via Azure route` }] });
      assert.equal(res.choices[0].message.content, `Mock reply to: Hello ${format} via Azure route`);
      assert.equal(extraFields(res).provider, format);
      assert.equal(last().format, format);
    });

    test(`chat streaming to a ${format}-format upstream ${compat('/openai/deployments', 'chat.stream', format)}`, async () => {
      const stream = await azureClient.chat.completions.create({ model, messages: [{ role: 'user', content: `Stream ${format} via Azure` }], stream: true });
      let text = '';
      let chunks = 0;
      let finish: string | null = null;
      for await (const chunk of stream) {
        chunks++;
        const c = chunk.choices[0];
        if (c?.delta.content) text += c.delta.content;
        if (c?.finish_reason) finish = c.finish_reason;
      }
      assert.equal(text, `Mock reply to: Stream ${format} via Azure`);
      assert.equal(finish, 'stop');
      assert.ok(chunks > 2);
      assert.equal(last().format, format);
    });
  }

  test('a client-wide deployment wins over the body model', async () => {
    const pinned = new AzureOpenAI({ endpoint: `${gateway.url}/openai`, apiKey: 'x', apiVersion: API_VERSION, deployment: 'anthropic/claude-sonnet-4-5', maxRetries: 0 });
    const res = await pinned.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'pinned' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: pinned');
    assert.equal(last().format, 'anthropic');
    assert.equal((last().body as { model: string }).model, 'claude-sonnet-4-5');
  });

  test(`embeddings, text completion, responses and models through the Azure routes ${compat('/openai/deployments', 'embeddings', 'openai')} ${compat('/openai/deployments', 'completions', 'openai')} ${compat('/openai/deployments', 'responses', 'anthropic')}`, async () => {
    const emb = await azureClient.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'vector me' });
    assert.equal(emb.data[0].embedding.length, 8);
    assert.equal(last().path, '/openai/v1/embeddings');
    const text = await azureClient.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'complete me' });
    assert.equal(text.choices[0].text, 'Mock reply to: complete me');
    assert.equal(last().path, '/openai/v1/completions');
    const res = await azureClient.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'respond via Azure client' });
    assert.equal(res.output_text, 'Mock reply to: respond via Azure client');
    assert.equal(last().format, 'anthropic');
    const models = await azureClient.models.list();
    assert.ok(models.data.some((m) => m.id.startsWith('anthropic/')) && models.data.some((m) => m.id.startsWith('azure/')));
  });

  test('the deployments form of responses and models, as the reference gateway serves them', async () => {
    const q = `?api-version=${API_VERSION}`;
    const res = await fetch(`${gateway.url}/openai/openai/deployments/${encodeURIComponent('openai/gpt-4o')}/responses${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'x' },
      body: JSON.stringify({ input: 'deployment responses' }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { output_text?: string; output: { content: { text: string }[] }[] }).output[0].content[0].text, 'Mock reply to: deployment responses');
    assert.equal((last().body as { model: string }).model, 'gpt-4o');
    const models = await fetch(`${gateway.url}/openai/openai/deployments/any/models${q}`, { headers: { 'api-key': 'x' } });
    assert.equal(models.status, 200);
    assert.ok(((await models.json()) as { data: unknown[] }).data.length > 0);
  });

  test(`an Azure client reaches an azure upstream too; errors come back with their status ${compat('/openai/deployments', 'chat', 'azure')}`, async () => {
    const res = await azureClient.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'Azure to Azure' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Azure to Azure');
    assert.equal(last().path, '/azure/openai/deployments/chat-prod/chat/completions');
    const bad = await azureClient.chat.completions.create({ model: 'nope/model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(bad instanceof OpenAI.BadRequestError, String(bad));
    assert.match(bad.message, /unknown provider 'nope' in model 'nope\/model'/);
  });
});

describe('(c) the mock speaks Azure: AzureOpenAI against it directly', () => {
  const direct = (opts: { apiKey?: string; azureADTokenProvider?: () => Promise<string> } = { apiKey: 'azure-direct-key' }) =>
    new AzureOpenAI({ endpoint: `${mock.url}/azure`, apiVersion: API_VERSION, maxRetries: 0, ...opts });

  test('chat with api-key: deployment path, content-filter annotations', async () => {
    const res = await direct().chat.completions.create({ model: 'my-deployment', messages: [{ role: 'user', content: 'direct hello' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: direct hello');
    assert.equal(res.model, 'my-deployment');
    const raw = res as unknown as { prompt_filter_results: unknown[]; choices: { content_filter_results: unknown }[] };
    assert.equal(raw.prompt_filter_results.length, 1);
    assert.ok(raw.choices[0].content_filter_results);
    assert.equal(last().path, '/azure/openai/deployments/my-deployment/chat/completions');
    assert.equal(last().headers['api-key'], 'azure-direct-key');
  });

  test('streaming starts with the prompt-filter chunk; Entra ID bearer tokens are accepted', async () => {
    const stream = await direct({ azureADTokenProvider: async () => 'entra-token' }).chat.completions.create({
      model: 'my-deployment',
      messages: [{ role: 'user', content: 'direct stream' }],
      stream: true,
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);
    assert.equal(chunks[0].choices.length, 0);
    assert.ok((chunks[0] as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Mock reply to: direct stream');
    assert.equal(last().headers.authorization, 'Bearer entra-token');
  });

  test('api-version is required: without it, 404 Resource not found', async () => {
    const err = await direct()
      .chat.completions.create({ model: 'my-deployment', messages: [{ role: 'user', content: 'hi' }] }, { query: { 'api-version': undefined } })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.equal(last().query['api-version'], undefined);
    assert.deepEqual(JSON.parse(String(last().responseBody)), { error: { code: '404', message: 'Resource not found' } });
  });

  test('auth: a wrong key and a missing key are 401 in Azure shape', async () => {
    const wrong = await direct({ apiKey: 'invalid-key' }).chat.completions.create({ model: 'd', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    assert.ok(wrong instanceof OpenAI.AuthenticationError, String(wrong));
    assert.match(wrong.message, /Access denied due to invalid subscription key/);
    const none = await fetch(`${mock.url}/azure/openai/deployments/d/chat/completions?api-version=${API_VERSION}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(none.status, 401);
    assert.deepEqual(await none.json(), { error: { code: '401', message: 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.' } });
  });

  test('responses (dated API), models list and a missing deployment', async () => {
    const res = await direct().responses.create({ model: 'my-deployment', input: 'direct response' });
    assert.equal(res.output_text, 'Mock reply to: direct response');
    assert.equal(last().path, '/azure/openai/responses');
    const models = await direct().models.list();
    assert.ok(models.data.length > 0);
    const missing = await direct().embeddings.create({ model: 'nonexistent-embedder', input: 'x' }).catch((e: unknown) => e);
    assert.ok(missing instanceof OpenAI.NotFoundError, String(missing));
    assert.equal(missing.code, 'DeploymentNotFound');
  });
});
