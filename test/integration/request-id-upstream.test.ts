// The gateway's request id on the way out: every provider attempt carries it as `x-request-id`
// (retries, fallbacks, passthrough and one-shot calls alike; the mock records what it received),
// and the native front doors' error bodies name it where their provider's format has a place for
// one, read through each provider's official SDK: Anthropic's `request_id` (and `request-id`, the
// SDK's APIError.requestID), Google's google.rpc.RequestInfo detail, Cohere's `id`, and AWS's
// `x-amzn-requestid` header (the SDK's $metadata.requestId; Bedrock's error body has no field).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { CohereClientV2 } from 'cohere-ai';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

let mock: MockProvider;
let gw: InProcessGateway;
let bedrock: BedrockRuntimeClient | undefined;

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway({
    providers: {
      ...mockProviders(mock.url),
      cohere: mockProvider(mock.url, 'cohere'),
    },
  });
});

after(async () => {
  bedrock?.destroy();
  await gw?.stop();
  await mock?.close();
});

/** What the mock received since `from` on paths ending with `suffix`. */
const received = (from: number, suffix: string) => mock.requests.slice(from).filter((r) => r.path.endsWith(suffix));

test("each provider's attempt carries the request id the client got: kept from the client, or made", async () => {
  const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0 });
  for (const model of ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5', 'gemini/gemini-2.5-flash']) {
    const from = mock.requests.length;
    const { response } = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': `client-id-${model}` } }).withResponse();
    assert.equal(response.headers.get('x-request-id'), `client-id-${model}`);
    const sent = mock.requests.slice(from);
    assert.equal(sent.length, 1, model);
    assert.equal(sent[0].headers['x-request-id'], `client-id-${model}`, `${model}: the provider got the client's id`);
  }
  // None sent (or one not kept): the provider gets the one the gateway made and answered.
  const from = mock.requests.length;
  const { response } = await openai.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'has spaces' } }).withResponse();
  const made = response.headers.get('x-request-id');
  assert.ok(made && made !== 'has spaces');
  assert.equal(received(from, '/chat/completions')[0].headers['x-request-id'], made);
});

test('a fallback sends the same id on each attempt', async () => {
  const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0 });
  mock.inject({ format: 'openai', status: 500, times: 1 });
  const from = mock.requests.length;
  const { response } = await openai.chat.completions
    .create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fall back' }], fallbacks: ['anthropic/claude-sonnet-4-5'] } as OpenAI.ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  const id = response.headers.get('x-request-id');
  const sent = mock.requests.slice(from);
  assert.deepEqual(sent.map((r) => [r.format, r.headers['x-request-id']]), [['openai', id], ['anthropic', id]]);
});

test('a passthrough call sends the gateway id in place of the client header', async () => {
  const client = new OpenAI({ baseURL: `${gw.url}/openai_passthrough/v1`, apiKey: 'x', maxRetries: 0 });
  const from = mock.requests.length;
  const { response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'bad id;' } }).withResponse();
  const id = response.headers.get('x-request-id');
  assert.ok(id && id !== 'bad id;');
  assert.equal(received(from, '/chat/completions')[0].headers['x-request-id'], id);
});

test('Anthropic front door: the error body has request_id, and the SDK reads it as requestID', async () => {
  const client = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: 'x', maxRetries: 0 });
  const err = await client.messages.create({ model: 'nosuch/model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'anthropic-door-1' } }).then(
    () => assert.fail('expected an error'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof Anthropic.APIError, String(err));
  assert.equal(err.status, 400);
  assert.equal(err.requestID, 'anthropic-door-1');
  assert.equal((err.error as { request_id?: string }).request_id, 'anthropic-door-1');
  assert.equal((err.error as { type?: string }).type, 'error');
});

test("GenAI front door: the error's details carry a google.rpc.RequestInfo naming the id", async () => {
  const ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: `${gw.url}/genai`, headers: { 'x-request-id': 'genai-door-1' } } });
  const err = await ai.models.generateContent({ model: 'nosuch-model', contents: 'hi' }).then(
    () => assert.fail('expected an error'),
    (e: unknown) => e as { status?: number; message: string },
  );
  assert.ok(err.status !== undefined && err.status >= 400, err.message);
  // The SDK's ApiError message is the error body's JSON.
  const body = JSON.parse(err.message.slice(err.message.indexOf('{'))) as { error: { details?: { '@type': string; requestId: string }[] } };
  assert.deepEqual(body.error.details, [{ '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: 'genai-door-1' }]);
});

test("Cohere front door: the error's id is the request id", async () => {
  const co = new CohereClientV2({ token: 'x', environment: `${gw.url}/cohere`, maxRetries: 0 } as ConstructorParameters<typeof CohereClientV2>[0]);
  const err = await co.chat({ model: 'nosuch-model', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'cohere-door-1' } }).then(
    () => assert.fail('expected an error'),
    (e: unknown) => e as { statusCode?: number; body?: { id?: string } },
  );
  assert.ok(err.statusCode !== undefined && err.statusCode >= 400, JSON.stringify(err));
  assert.equal(err.body?.id, 'cohere-door-1');
});

test('Bedrock front door: AWS names the request in a header, which the SDK reads as $metadata.requestId', async () => {
  bedrock = new BedrockRuntimeClient({ endpoint: `${gw.url}/bedrock`, region: 'us-east-1', credentials: { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client-secret' }, maxAttempts: 1 });
  const err = await bedrock.send(new ConverseCommand({ modelId: 'nosuch.model-v1', messages: [{ role: 'user', content: [{ text: 'hi' }] }] })).then(
    () => assert.fail('expected an error'),
    (e: unknown) => e as { $metadata?: { httpStatusCode?: number; requestId?: string }; name: string },
  );
  assert.ok((err.$metadata?.httpStatusCode ?? 0) >= 400, err.name);
  const id = err.$metadata?.requestId;
  assert.ok(id, 'a request id');
  // The SDK sends its own amz-sdk-invocation-id, not x-request-id: the id is one the gateway made.
  assert.match(id, /^[A-Za-z0-9_-]{8}-[0-9a-z]{6,}$/);
});
