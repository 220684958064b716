// The official AWS Bedrock Runtime SDK, unchanged but for its endpoint (and throwaway credentials:
// the gateway does not check client SigV4), through /bedrock to OpenAI-, Anthropic- and
// Bedrock-format upstreams. The SDK speaks HTTP/2 only, so this also exercises the gateway's h2c.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ModelStreamErrorException,
  ThrottlingException,
  ValidationException,
  type ContentBlock,
  type ConverseStreamOutput,
  type Message,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { MODELS, mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
let client: BedrockRuntimeClient;

function bedrockClient(endpoint: string): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client-secret' },
    maxAttempts: 1,
  });
}

before(async () => {
  stack = await startStack((u) => ({
    providers: {
      ...mockProviders(u),
      bedrock: { keys: [{ name: 'aws', value: 'bedrock-api-key', weight: 1 }], network_config: { base_url: `${u}/bedrock`, max_retries: 0 } },
    },
  }));
  client = bedrockClient(`${stack.gateway.url}/bedrock`);
});
after(async () => {
  client?.destroy();
  await stack?.close();
});

const weather: Tool = {
  toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } },
};

const textOf = (content: ContentBlock[] | undefined) => (content ?? []).map((b) => b.text ?? '').join('');

/** Drains a ConverseStream into what a client assembles from it. */
async function collect(stream: AsyncIterable<ConverseStreamOutput> | undefined) {
  const seen: string[] = [];
  let text = '';
  let stopReason: string | undefined;
  let usage: { inputTokens?: number; outputTokens?: number } | undefined;
  const tools = new Map<number, { toolUseId: string; name: string; input: string }>();
  for await (const ev of stream ?? []) {
    const kind = Object.keys(ev).find((k) => k !== '$unknown' && (ev as unknown as Record<string, unknown>)[k] !== undefined) ?? '';
    seen.push(kind);
    if (ev.contentBlockStart?.start?.toolUse) {
      const t = ev.contentBlockStart.start.toolUse;
      tools.set(ev.contentBlockStart.contentBlockIndex!, { toolUseId: t.toolUseId!, name: t.name!, input: '' });
    }
    const d = ev.contentBlockDelta;
    if (d?.delta?.text) text += d.delta.text;
    if (d?.delta?.toolUse?.input) tools.get(d.contentBlockIndex!)!.input += d.delta.toolUse.input;
    if (ev.messageStop) stopReason = ev.messageStop.stopReason;
    if (ev.metadata) usage = ev.metadata.usage;
  }
  return { seen, text, stopReason, usage, tools: [...tools.values()] };
}

for (const format of ['openai', 'anthropic'] as const) {
  const modelId = MODELS[format];
  describe(`Bedrock SDK to a ${format}-format upstream`, () => {
    test(`Converse ${compat('/bedrock', 'Converse', format)}`, async () => {
      const res = await client.send(
        new ConverseCommand({
          modelId,
          system: [{ text: 'Be brief.' }],
          messages: [{ role: 'user', content: [{ text: 'Hello from bedrock' }] }],
          inferenceConfig: { maxTokens: 100 },
        }),
      );
      assert.equal(res.output?.message?.role, 'assistant');
      assert.equal(textOf(res.output?.message?.content), 'Mock reply to: Hello from bedrock');
      assert.equal(res.stopReason, 'end_turn');
      assert.ok((res.usage?.inputTokens ?? 0) > 0 && (res.usage?.outputTokens ?? 0) > 0);
      assert.equal(res.usage?.totalTokens, res.usage!.inputTokens! + res.usage!.outputTokens!);
      const seen = stack.mock.requests.at(-1)!;
      assert.equal(seen.format, format);
    });

    test(`ConverseStream with text ${compat('/bedrock', 'ConverseStream', format)}`, async () => {
      const res = await client.send(new ConverseStreamCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'stream via bedrock' }] }] }));
      const out = await collect(res.stream);
      assert.equal(out.text, 'Mock reply to: stream via bedrock');
      assert.ok(out.seen.filter((k) => k === 'contentBlockDelta').length >= 2, out.seen.join(','));
      assert.equal(out.seen[0], 'messageStart');
      assert.deepEqual(out.seen.slice(-3), ['contentBlockStop', 'messageStop', 'metadata']);
      assert.equal(out.stopReason, 'end_turn');
      assert.ok((out.usage?.outputTokens ?? 0) > 0);
    });

    test(`tool use, streamed, then the tool result answered ${compat('/bedrock', 'ConverseStream.tools', format)}`, async () => {
      const question: Message = { role: 'user', content: [{ text: 'weather in Lima' }] };
      const res = await client.send(new ConverseStreamCommand({ modelId, messages: [question], toolConfig: { tools: [weather] } }));
      const out = await collect(res.stream);
      assert.equal(out.stopReason, 'tool_use');
      assert.equal(out.tools.length, 1);
      const [call] = out.tools;
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.input), { query: 'weather in Lima' });
      assert.ok(call.toolUseId);

      const answer = await client.send(
        new ConverseCommand({
          modelId,
          toolConfig: { tools: [weather] },
          messages: [
            question,
            { role: 'assistant', content: [{ toolUse: { toolUseId: call.toolUseId, name: call.name, input: JSON.parse(call.input) } }] },
            { role: 'user', content: [{ toolResult: { toolUseId: call.toolUseId, content: [{ text: 'foggy' }] } }] },
          ],
        }),
      );
      assert.match(textOf(answer.output?.message?.content), /^Tool said: .*foggy/);
    });

    test(`InvokeModel with a Claude Messages body ${compat('/bedrock', 'InvokeModel', format)}`, async () => {
      const res = await client.send(
        new InvokeModelCommand({
          modelId,
          contentType: 'application/json',
          body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'invoke me' }] }),
        }),
      );
      const msg = JSON.parse(new TextDecoder().decode(res.body)) as { type: string; content: { type: string; text: string }[]; stop_reason: string; usage: { output_tokens: number } };
      assert.equal(msg.type, 'message');
      assert.equal(msg.content[0].text, 'Mock reply to: invoke me');
      assert.equal(msg.stop_reason, 'end_turn');
      assert.ok(msg.usage.output_tokens > 0);
      assert.equal(stack.mock.requests.at(-1)!.format, format);
    });
  });
}

describe('InvokeModelWithResponseStream', () => {
  test(`chunk events carry Anthropic stream events as bytes, with invocation metrics at the end ${compat('/bedrock', 'InvokeModelWithResponseStream', 'openai')}`, async () => {
    const res = await client.send(
      new InvokeModelWithResponseStreamCommand({
        modelId: MODELS.openai,
        body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'invoke stream' }] }),
      }),
    );
    const events: Record<string, unknown>[] = [];
    for await (const ev of res.body ?? []) {
      if (ev.chunk?.bytes) events.push(JSON.parse(new TextDecoder().decode(ev.chunk.bytes)) as Record<string, unknown>);
    }
    assert.equal(events[0].type, 'message_start');
    const text = events
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => (e.delta as { text?: string }).text ?? '')
      .join('');
    assert.equal(text, 'Mock reply to: invoke stream');
    const last = events.at(-1)!;
    assert.equal(last.type, 'message_stop');
    const metrics = last['amazon-bedrock-invocationMetrics'] as { inputTokenCount: number; outputTokenCount: number };
    assert.ok(metrics.inputTokenCount > 0 && metrics.outputTokenCount > 0);
  });
});

describe('Bedrock model ids', () => {
  test(`a bare Bedrock id goes to the bedrock provider ${compat('/bedrock', 'Converse', 'bedrock')}`, async () => {
    const res = await client.send(
      new ConverseCommand({ modelId: 'anthropic.claude-3-5-sonnet-20240620-v1:0', messages: [{ role: 'user', content: [{ text: 'bare id' }] }] }),
    );
    assert.equal(textOf(res.output?.message?.content), 'Mock reply to: bare id');
    const seen = stack.mock.requests.at(-1)!;
    assert.equal(seen.format, 'bedrock');
    assert.equal(seen.path, '/bedrock/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
  });

  test('InvokeModel for another model family is a ValidationException', async () => {
    const err = await client
      .send(new InvokeModelCommand({ modelId: 'amazon.titan-text-express-v1', body: JSON.stringify({ inputText: 'hi' }) }))
      .catch((e: unknown) => e);
    assert.ok(err instanceof ValidationException, String(err));
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.match(err.message, /Anthropic Claude Messages body/);
  });
});

describe('errors in Bedrock shape', () => {
  test('an upstream 429 reaches the SDK as ThrottlingException', async () => {
    stack.mock.inject({ format: 'openai', status: 429, retryAfter: 3 });
    const err = await client
      .send(new ConverseCommand({ modelId: MODELS.openai, messages: [{ role: 'user', content: [{ text: 'x' }] }] }))
      .catch((e: unknown) => e);
    assert.ok(err instanceof ThrottlingException, String(err));
    assert.equal(err.$metadata.httpStatusCode, 429);
    assert.equal(err.$response?.headers['retry-after'], '3');
  });

  test('an upstream 429 before a stream starts is a ThrottlingException too', async () => {
    stack.mock.inject({ format: 'anthropic', status: 429 });
    const err = await client
      .send(new ConverseStreamCommand({ modelId: MODELS.anthropic, messages: [{ role: 'user', content: [{ text: 'x' }] }] }))
      .catch((e: unknown) => e);
    assert.ok(err instanceof ThrottlingException, String(err));
  });

  test('an upstream that breaks mid-stream ends the stream with an exception frame', async () => {
    stack.mock.inject({ format: 'openai', resetAfterChunks: 3 });
    const res = await client.send(new ConverseStreamCommand({ modelId: MODELS.openai, messages: [{ role: 'user', content: [{ text: 'this stream will break' }] }] }));
    const err = await collect(res.stream).catch((e: unknown) => e);
    assert.ok(err instanceof ModelStreamErrorException, String(err));
  });

  test('an invalid request is a ValidationException naming the field', async () => {
    const err = await client
      .send(new ConverseCommand({ modelId: MODELS.openai, messages: [{ role: 'user', content: [{ text: 'x' }] }], guardrailConfig: { guardrailIdentifier: 'g', guardrailVersion: '1' } }))
      .catch((e: unknown) => e);
    assert.ok(err instanceof ValidationException, String(err));
    assert.match(err.message, /guardrailConfig/);
  });
});

describe('wire format', () => {
  test('HTTP/1.1 on the same port: event-stream frames with valid CRCs and the AWS content type', async () => {
    const res = await fetch(`${stack.gateway.url}/bedrock/model/${encodeURIComponent(MODELS.anthropic)}/converse-stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=00' },
      body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'raw frames' }] }] }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.amazon.eventstream');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const types: string[] = [];
    for (let at = 0; at < bytes.length; ) {
      const total = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0);
      const msg = codec.decode(bytes.subarray(at, at + total));
      types.push(String(msg.headers[':event-type'].value));
      at += total;
    }
    assert.equal(types[0], 'messageStart');
    assert.deepEqual(types.slice(-2), ['messageStop', 'metadata']);
  });
});

describe('framework prefixes', () => {
  test(`/litellm/bedrock serves Converse too ${compat('/litellm/bedrock', 'Converse', 'gemini')}`, async () => {
    const fw = bedrockClient(`${stack.gateway.url}/litellm/bedrock`);
    try {
      const res = await fw.send(new ConverseCommand({ modelId: MODELS.gemini, messages: [{ role: 'user', content: [{ text: 'framework' }] }] }));
      assert.equal(textOf(res.output?.message?.content), 'Mock reply to: framework');
      assert.equal(stack.mock.requests.at(-1)!.format, 'gemini');
    } finally {
      fw.destroy();
    }
  });
});
