// The openai SDK through the gateway to a Bedrock-format (Converse, SigV4, event-stream) upstream.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';
import { startGateway } from '../helpers/in-process-gateway.ts';
import { startMockProvider } from '../mock-provider/server.ts';

const MODEL = 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0';
const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
};

let stack: Stack;
before(async () => {
  const mock = await startMockProvider();
  // The secret comes from the environment through an env.VAR reference, as users configure it.
  const gateway = await startGateway({
    providers: {
      bedrock: {
        keys: [{ name: 'aws', value: '', weight: 1, bedrock_key_config: { access_key: 'AKIDGATEWAY', secret_key: 'env.BEDROCK_TEST_SECRET', region: 'eu-west-1' } }],
        network_config: { base_url: `${mock.url}/bedrock`, max_retries: 0 },
      },
    },
  }, { env: { BEDROCK_TEST_SECRET: 'shh' } });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
  stack = { mock, gateway, client, close: async () => { await gateway.stop(); await mock.close(); } };
});
after(() => stack?.close());

describe('chat through a bedrock upstream', () => {
  test(`non-streaming reply, usage, signed request with the encoded model id ${compat('/v1', 'chat', 'bedrock')}`, async () => {
    const res = await stack.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there gateway' }],
      max_tokens: 100,
    });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello there gateway');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.ok(res.usage && res.usage.prompt_tokens > 0 && res.usage.completion_tokens === 6);
    assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, 'bedrock');
    const seen = stack.mock.requests.at(-1)!;
    assert.equal(seen.format, 'bedrock');
    assert.equal(seen.path, '/bedrock/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    assert.match(String(seen.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDGATEWAY\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=[^ ]*host[^ ]*, Signature=[0-9a-f]{64}$/);
    assert.deepEqual((seen.body as { system: unknown }).system, [{ text: 'Be brief.' }]);
    assert.deepEqual((seen.body as { inferenceConfig: unknown }).inferenceConfig, { maxTokens: 100 });
  });

  test(`streaming reply arrives in several chunks, ends with stop and usage ${compat('/v1', 'chat.stream', 'bedrock')}`, async () => {
    const stream = await stack.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Stream me a reply please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0];
      if (c?.delta.content) text += c.delta.content;
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(text, 'Mock reply to: Stream me a reply please');
    assert.ok(chunks > 3);
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 8);
    assert.equal(stack.mock.requests.at(-1)!.path, '/bedrock/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  });

  test(`tool call, then the tool result answered ${compat('/v1', 'chat.tools', 'bedrock')}`, async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris' }];
    const first = await stack.client.chat.completions.create({ model: MODEL, messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls?.[0];
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.ok(call && call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'Weather in Paris' });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await stack.client.chat.completions.create({ model: MODEL, messages, tools: [weatherTool] });
    assert.equal(second.choices[0].message.content, 'Tool said: sunny');
  });

  test(`streamed tool call ${compat('/v1', 'chat.tools.stream', 'bedrock')}`, async () => {
    const stream = await stack.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Oslo' }],
      tools: [weatherTool],
      tool_choice: 'required',
      stream: true,
    });
    let args = '';
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      for (const t of c?.delta.tool_calls ?? []) {
        if (t.function?.name) name = t.function.name;
        args += t.function?.arguments ?? '';
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { query: 'Weather in Oslo' });
    assert.equal(finish, 'tool_calls');
    assert.deepEqual((stack.mock.requests.at(-1)!.body as { toolConfig: { toolChoice: unknown } }).toolConfig.toolChoice, { any: {} });
  });

  test('upstream throttling maps to a 429 with the AWS message', async () => {
    stack.mock.inject({ format: 'bedrock', status: 429, message: 'Too many tokens' });
    await assert.rejects(
      stack.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      (e: InstanceType<typeof OpenAI.APIError>) => e.status === 429 && /Too many tokens/.test(e.message),
    );
  });
});
