// The mock's Bedrock dialect, checked with the official `@aws-sdk/client-bedrock-runtime`
// (SigV4 signing and event-stream decoding done by the SDK itself).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type Message, type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { postRaw } from './mock-provider-helpers.ts';

let mock: MockProvider;
let client: BedrockRuntimeClient;

const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const weather: Tool = { toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { query: { type: 'string' } } } } } };

function sdk(accessKeyId: string): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    endpoint: `${mock.url}/bedrock`,
    region: 'us-east-1',
    credentials: { accessKeyId, secretAccessKey: 'secret' },
    maxAttempts: 1,
    // The client defaults to HTTP/2 (for bidirectional streams); the mock speaks HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
  });
}

before(async () => {
  mock = await startMockProvider();
  client = sdk('AKIDMOCK');
});
after(() => {
  client.destroy();
  return mock.close();
});

describe('bedrock converse', () => {
  test('non-streaming reply with end_turn and usage; signed request seen by the mock', async () => {
    const res = await client.send(new ConverseCommand({
      modelId: MODEL,
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
    }));
    assert.equal(res.output?.message?.content?.[0].text, 'Mock reply to: Hello there');
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(res.usage?.outputTokens, 5);
    assert.ok((res.usage?.inputTokens ?? 0) > 0);
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.format, 'bedrock');
    assert.equal(seen.path, `/bedrock/model/${encodeURIComponent(MODEL)}/converse`);
    assert.match(String(seen.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDMOCK\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  });

  test('tool call, then a reply to the tool result', async () => {
    const messages: Message[] = [{ role: 'user', content: [{ text: 'Weather in Paris' }] }];
    const first = await client.send(new ConverseCommand({ modelId: MODEL, messages, toolConfig: { tools: [weather] } }));
    assert.equal(first.stopReason, 'tool_use');
    const use = first.output?.message?.content?.[0].toolUse;
    assert.equal(use?.name, 'get_weather');
    assert.deepEqual(use?.input, { query: 'Weather in Paris' });
    messages.push(first.output!.message!);
    messages.push({ role: 'user', content: [{ toolResult: { toolUseId: use!.toolUseId, content: [{ text: 'sunny' }], status: 'success' } }] });
    const second = await client.send(new ConverseCommand({ modelId: MODEL, messages, toolConfig: { tools: [weather] } }));
    assert.equal(second.output?.message?.content?.[0].text, 'Tool said: sunny');
    assert.equal(second.stopReason, 'end_turn');
  });

  test('maxTokens truncates with max_tokens', async () => {
    const res = await client.send(new ConverseCommand({
      modelId: MODEL,
      messages: [{ role: 'user', content: [{ text: 'one two three four' }] }],
      inferenceConfig: { maxTokens: 2 },
    }));
    assert.equal(res.output?.message?.content?.[0].text, 'Mock reply');
    assert.equal(res.stopReason, 'max_tokens');
  });

  test('streaming: event-stream frames decoded by the SDK', async () => {
    const res = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'Stream this' }] }] }));
    const kinds: string[] = [];
    let text = '';
    let stop: string | undefined;
    let usage: number | undefined;
    for await (const ev of res.stream!) {
      kinds.push(Object.keys(ev).filter((k) => (ev as unknown as Record<string, unknown>)[k] !== undefined)[0]);
      if (ev.contentBlockDelta?.delta?.text) text += ev.contentBlockDelta.delta.text;
      if (ev.messageStop) stop = ev.messageStop.stopReason;
      if (ev.metadata) usage = ev.metadata.usage?.outputTokens;
    }
    assert.equal(text, 'Mock reply to: Stream this');
    assert.equal(stop, 'end_turn');
    assert.equal(usage, 5);
    assert.equal(kinds[0], 'messageStart');
    assert.ok(kinds.filter((k) => k === 'contentBlockDelta').length > 1);
    assert.deepEqual(kinds.slice(-3), ['contentBlockStop', 'messageStop', 'metadata']);
  });

  test('streaming tool call arrives as contentBlockStart plus input pieces', async () => {
    const res = await client.send(new ConverseStreamCommand({
      modelId: MODEL,
      messages: [{ role: 'user', content: [{ text: 'Weather in Oslo' }] }],
      toolConfig: { tools: [weather], toolChoice: { tool: { name: 'get_weather' } } },
    }));
    let name: string | undefined;
    let input = '';
    let stop: string | undefined;
    for await (const ev of res.stream!) {
      if (ev.contentBlockStart?.start?.toolUse) name = ev.contentBlockStart.start.toolUse.name;
      if (ev.contentBlockDelta?.delta?.toolUse) input += ev.contentBlockDelta.delta.toolUse.input ?? '';
      if (ev.messageStop) stop = ev.messageStop.stopReason;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(input), { query: 'Weather in Oslo' });
    assert.equal(stop, 'tool_use');
  });
});

describe('bedrock errors and faults', () => {
  test('missing or malformed authorization is a 403', async () => {
    const path = `${mock.url}/bedrock/model/${encodeURIComponent(MODEL)}/converse`;
    const body = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
    const none = await postRaw(path, body, {});
    assert.equal(none.status, 403);
    assert.match(none.headers.get('x-amzn-errortype') ?? '', /^AccessDeniedException/);
    const wrong = await postRaw(path, body, { authorization: 'AWS4-HMAC-SHA256 Credential=AK/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=abc' });
    assert.equal(wrong.status, 403);
    assert.ok(JSON.parse(wrong.text).message);
  });

  test('an invalid access key is rejected by the SDK with the AWS exception name', async () => {
    const bad = sdk('invalid-key');
    try {
      await assert.rejects(
        bad.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] })),
        (e: Error & { $metadata?: { httpStatusCode?: number } }) => e.name === 'UnrecognizedClientException' && e.$metadata?.httpStatusCode === 403,
      );
    } finally {
      bad.destroy();
    }
  });

  test('injected 429 comes back as ThrottlingException', async () => {
    mock.inject({ format: 'bedrock', status: 429, message: 'slow down' });
    await assert.rejects(
      client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }] })),
      (e: Error) => e.name === 'ThrottlingException' && e.message === 'slow down',
    );
  });

  test('validation: a conversation must start with a user message', async () => {
    await assert.rejects(
      client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'assistant', content: [{ text: 'hi' }] }] })),
      (e: Error) => e.name === 'ValidationException',
    );
  });
});
