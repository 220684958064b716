// The compatibility matrix (docs/compatibility.md): every SDK prefix against every upstream wire format
// the mock speaks, with the official SDKs unchanged but for their base URL: a reply, a streamed reply,
// a tool call answered with its result, and a streamed tool call. Then each provider's own SDK
// through its /<provider>_passthrough prefix (not Bedrock's: passthrough does not sign for it yet).
// Each test names its cell with compat().
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, Type, type Content } from '@google/genai';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ContentBlock,
  type ConverseStreamOutput,
  type Message,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { Cohere, CohereClientV2 } from 'cohere-ai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { compat, UPSTREAMS, type Upstream } from '../helpers/compat.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { createServiceAccount } from '../mock-provider/vertex.ts';

/** The model each upstream format answers for. */
const MODEL: Record<Upstream, string> = {
  openai: 'openai/gpt-4o',
  anthropic: 'anthropic/claude-sonnet-4-5',
  gemini: 'gemini/gemini-2.5-flash',
  bedrock: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0',
  cohere: 'cohere/command-r-plus',
  azure: 'azure/gpt-4o',
  vertex: 'vertex/gemini-2.5-flash',
};

const OPENAI_PREFIXES = ['/openai', '/openai/deployments', '/litellm/v1', '/langchain/v1', '/pydanticai/v1'] as const;
const AZURE_API_VERSION = '2024-10-21';

let mock: MockProvider;
let gateway: InProcessGateway;
const bedrockClients: BedrockRuntimeClient[] = [];

before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway(
    {
      providers: {
        ...mockProviders(mock.url),
        bedrock: { keys: [{ name: 'aws', value: 'bedrock-api-key', weight: 1 }], network_config: { base_url: `${mock.url}/bedrock`, max_retries: 0 } },
        cohere: mockProvider(mock.url, 'cohere'),
        azure: {
          keys: [{ name: 'az', value: 'azure-key', weight: 1, azure_key_config: { endpoint: `${mock.url}/azure`, api_version: AZURE_API_VERSION } }],
          network_config: { max_retries: 0 },
        },
        vertex: {
          keys: [{ name: 'sa', value: '', weight: 1, vertex_key_config: { project_id: 'mock-project', region: 'us-east5', auth_credentials: 'env.VERTEX_SA' } }],
          network_config: { base_url: `${mock.url}/vertex`, max_retries: 0 },
        },
      },
    },
    { env: { VERTEX_SA: JSON.stringify(createServiceAccount(mock.url)) } },
  );
});
after(async () => {
  for (const c of bedrockClients) c.destroy();
  await gateway?.stop();
  await mock?.close();
});

/** The last model call reached a provider of this format (not, say, a fallback). */
function reached(upstream: Upstream): void {
  const last = mock.requests.filter((r) => r.path !== '/vertex/token').at(-1);
  assert.equal(last?.format, upstream, `last upstream call: ${last?.method} ${last?.path}`);
}

const FOGGY = /^Tool said: .*foggy/;

// ------------------------------------------------------------------ OpenAI SDK (and AzureOpenAI)

const openaiTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
};

function openaiClient(prefix: string): OpenAI {
  if (prefix === '/openai/deployments') return new AzureOpenAI({ endpoint: `${gateway.url}/openai`, apiKey: 'x', apiVersion: AZURE_API_VERSION, maxRetries: 0 });
  return new OpenAI({ baseURL: `${gateway.url}${prefix}`, apiKey: 'x', maxRetries: 0 });
}

const openaiCases = {
  async chat(client: OpenAI, model: string): Promise<void> {
    const res = await client.chat.completions.create({ model, max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello matrix' }] });
    assert.equal(res.choices[0].message.content, 'Mock reply to: Hello matrix');
    assert.equal(res.choices[0].finish_reason, 'stop');
    assert.ok((res.usage?.prompt_tokens ?? 0) > 0 && (res.usage?.completion_tokens ?? 0) > 0);
  },

  async stream(client: OpenAI, model: string): Promise<void> {
    const stream = await client.chat.completions.create({ model, stream: true, messages: [{ role: 'user', content: 'stream the matrix' }] });
    let text = '';
    let deltas = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (c?.delta.content) {
        deltas++;
        text += c.delta.content;
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(text, 'Mock reply to: stream the matrix');
    assert.ok(deltas >= 2, `${deltas} content deltas`);
    assert.equal(finish, 'stop');
  },

  async tools(client: OpenAI, model: string): Promise<void> {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Lima' }];
    const first = await client.chat.completions.create({ model, messages, tools: [openaiTool] });
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const call = first.choices[0].message.tool_calls?.[0];
    assert.ok(call && call.type === 'function', JSON.stringify(first.choices[0].message));
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { query: 'weather in Lima' });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'foggy' });
    const second = await client.chat.completions.create({ model, messages, tools: [openaiTool] });
    assert.match(second.choices[0].message.content ?? '', FOGGY);
  },

  async toolsStream(client: OpenAI, model: string): Promise<void> {
    const stream = await client.chat.completions.create({ model, stream: true, tools: [openaiTool], messages: [{ role: 'user', content: 'weather in Rome' }] });
    let name = '';
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      for (const t of c?.delta.tool_calls ?? []) {
        name += t.function?.name ?? '';
        args += t.function?.arguments ?? '';
      }
      if (c?.finish_reason) finish = c.finish_reason;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
    assert.equal(finish, 'tool_calls');
  },
};

for (const prefix of OPENAI_PREFIXES) {
  describe(`${prefix === '/openai/deployments' ? 'AzureOpenAI client' : 'OpenAI SDK'} at ${prefix}`, () => {
    let client: OpenAI;
    before(() => {
      client = openaiClient(prefix);
    });
    for (const upstream of UPSTREAMS) {
      test(`chat to ${upstream} ${compat(prefix, 'chat', upstream)}`, async () => {
        await openaiCases.chat(client, MODEL[upstream]);
        reached(upstream);
      });
      test(`streamed chat to ${upstream} ${compat(prefix, 'chat.stream', upstream)}`, async () => {
        await openaiCases.stream(client, MODEL[upstream]);
        reached(upstream);
      });
      test(`tool call to ${upstream} ${compat(prefix, 'chat.tools', upstream)}`, async () => {
        await openaiCases.tools(client, MODEL[upstream]);
        reached(upstream);
      });
      test(`streamed tool call to ${upstream} ${compat(prefix, 'chat.tools.stream', upstream)}`, async () => {
        await openaiCases.toolsStream(client, MODEL[upstream]);
        reached(upstream);
      });
    }
  });
}

// ------------------------------------------------------------------ Anthropic SDK

const anthropicTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

const textOfMessage = (msg: Anthropic.Message): string => msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

const anthropicCases = {
  async create(client: Anthropic, model: string): Promise<void> {
    const msg = await client.messages.create({ model, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello matrix' }] });
    assert.equal(textOfMessage(msg), 'Mock reply to: Hello matrix');
    assert.equal(msg.stop_reason, 'end_turn');
    assert.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0);
  },

  async stream(client: Anthropic, model: string): Promise<void> {
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'stream the matrix' }] });
    let deltas = 0;
    stream.on('text', () => deltas++);
    const final = await stream.finalMessage();
    assert.equal(textOfMessage(final), 'Mock reply to: stream the matrix');
    assert.ok(deltas >= 2, `${deltas} text deltas`);
    assert.equal(final.stop_reason, 'end_turn');
    assert.ok(final.usage.output_tokens > 0);
  },

  async tools(client: Anthropic, model: string): Promise<void> {
    const question: Anthropic.MessageParam = { role: 'user', content: 'weather in Lima' };
    const first = await client.messages.create({ model, max_tokens: 100, tools: [anthropicTool], messages: [question] });
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', JSON.stringify(first.content));
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { query: 'weather in Lima' });
    const second = await client.messages.create({
      model,
      max_tokens: 100,
      tools: [anthropicTool],
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'foggy' }] }],
    });
    assert.match(textOfMessage(second), FOGGY);
  },

  async toolsStream(client: Anthropic, model: string): Promise<void> {
    const final = await client.messages.stream({ model, max_tokens: 100, tools: [anthropicTool], messages: [{ role: 'user', content: 'weather in Rome' }] }).finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', JSON.stringify(final.content));
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { query: 'weather in Rome' });
  },
};

describe('Anthropic SDK at /anthropic', () => {
  let client: Anthropic;
  before(() => {
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: 'x', maxRetries: 0 });
  });
  for (const upstream of UPSTREAMS) {
    test(`messages.create to ${upstream} ${compat('/anthropic', 'messages.create', upstream)}`, async () => {
      await anthropicCases.create(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`messages.stream to ${upstream} ${compat('/anthropic', 'messages.stream', upstream)}`, async () => {
      await anthropicCases.stream(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`tool use to ${upstream} ${compat('/anthropic', 'messages.tools', upstream)}`, async () => {
      await anthropicCases.tools(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`streamed tool use to ${upstream} ${compat('/anthropic', 'messages.tools.stream', upstream)}`, async () => {
      await anthropicCases.toolsStream(client, MODEL[upstream]);
      reached(upstream);
    });
  }
});

// ------------------------------------------------------------------ Google GenAI SDK

const genaiTools = [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather for a city', parameters: { type: Type.OBJECT, properties: { query: { type: Type.STRING } } } }] }];

const genaiCases = {
  async generate(ai: GoogleGenAI, model: string): Promise<void> {
    const res = await ai.models.generateContent({ model, contents: 'Hello matrix', config: { systemInstruction: 'Be brief.' } });
    assert.equal(res.text, 'Mock reply to: Hello matrix');
    assert.equal(res.candidates?.[0].finishReason, 'STOP');
    assert.ok((res.usageMetadata?.promptTokenCount ?? 0) > 0 && (res.usageMetadata?.candidatesTokenCount ?? 0) > 0);
  },

  async stream(ai: GoogleGenAI, model: string): Promise<void> {
    let text = '';
    let chunks = 0;
    for await (const chunk of await ai.models.generateContentStream({ model, contents: 'stream the matrix' })) {
      chunks++;
      text += chunk.text ?? '';
    }
    assert.equal(text, 'Mock reply to: stream the matrix');
    assert.ok(chunks >= 2, `${chunks} chunks`);
  },

  async tools(ai: GoogleGenAI, model: string): Promise<void> {
    const question: Content = { role: 'user', parts: [{ text: 'weather in Lima' }] };
    const first = await ai.models.generateContent({ model, contents: [question], config: { tools: genaiTools } });
    const call = first.functionCalls?.[0];
    assert.equal(call?.name, 'get_weather');
    assert.deepEqual(call?.args, { query: 'weather in Lima' });
    const answer = await ai.models.generateContent({
      model,
      config: { tools: genaiTools },
      contents: [
        question,
        first.candidates![0].content!,
        { role: 'user', parts: [{ functionResponse: { id: call?.id, name: 'get_weather', response: { output: 'foggy' } } }] },
      ],
    });
    assert.match(answer.text ?? '', FOGGY);
  },

  async toolsStream(ai: GoogleGenAI, model: string): Promise<void> {
    const calls = [];
    for await (const chunk of await ai.models.generateContentStream({ model, contents: 'weather in Rome', config: { tools: genaiTools } })) calls.push(...(chunk.functionCalls ?? []));
    assert.equal(calls.length, 1, JSON.stringify(calls));
    assert.equal(calls[0].name, 'get_weather');
    assert.deepEqual(calls[0].args, { query: 'weather in Rome' });
  },
};

describe('GenAI SDK at /genai', () => {
  let ai: GoogleGenAI;
  before(() => {
    ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: `${gateway.url}/genai` } });
  });
  for (const upstream of UPSTREAMS) {
    test(`generateContent to ${upstream} ${compat('/genai', 'generateContent', upstream)}`, async () => {
      await genaiCases.generate(ai, MODEL[upstream]);
      reached(upstream);
    });
    test(`generateContentStream to ${upstream} ${compat('/genai', 'generateContentStream', upstream)}`, async () => {
      await genaiCases.stream(ai, MODEL[upstream]);
      reached(upstream);
    });
    test(`function call to ${upstream} ${compat('/genai', 'generateContent.tools', upstream)}`, async () => {
      await genaiCases.tools(ai, MODEL[upstream]);
      reached(upstream);
    });
    test(`streamed function call to ${upstream} ${compat('/genai', 'generateContentStream.tools', upstream)}`, async () => {
      await genaiCases.toolsStream(ai, MODEL[upstream]);
      reached(upstream);
    });
  }
});

// ------------------------------------------------------------------ AWS Bedrock Runtime SDK

const bedrockTool: Tool = {
  toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } },
};

function bedrockClient(endpoint: string): BedrockRuntimeClient {
  // Throwaway credentials: the gateway does not check the client's SigV4.
  const client = new BedrockRuntimeClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client-secret' }, maxAttempts: 1 });
  bedrockClients.push(client);
  return client;
}

const textOfBlocks = (content: ContentBlock[] | undefined): string => (content ?? []).map((b) => b.text ?? '').join('');

/** What a client assembles from a ConverseStream. */
async function drain(stream: AsyncIterable<ConverseStreamOutput> | undefined) {
  let text = '';
  let deltas = 0;
  let stopReason: string | undefined;
  const tools = new Map<number, { toolUseId: string; name: string; input: string }>();
  for await (const ev of stream ?? []) {
    const start = ev.contentBlockStart?.start?.toolUse;
    if (start) tools.set(ev.contentBlockStart!.contentBlockIndex!, { toolUseId: start.toolUseId!, name: start.name!, input: '' });
    const d = ev.contentBlockDelta;
    if (d?.delta?.text) {
      deltas++;
      text += d.delta.text;
    }
    if (d?.delta?.toolUse?.input) tools.get(d.contentBlockIndex!)!.input += d.delta.toolUse.input;
    if (ev.messageStop) stopReason = ev.messageStop.stopReason;
  }
  return { text, deltas, stopReason, tools: [...tools.values()] };
}

const bedrockCases = {
  async converse(client: BedrockRuntimeClient, modelId: string): Promise<void> {
    const res = await client.send(new ConverseCommand({ modelId, system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'Hello matrix' }] }], inferenceConfig: { maxTokens: 100 } }));
    assert.equal(textOfBlocks(res.output?.message?.content), 'Mock reply to: Hello matrix');
    assert.equal(res.stopReason, 'end_turn');
    assert.ok((res.usage?.inputTokens ?? 0) > 0 && (res.usage?.outputTokens ?? 0) > 0);
  },

  async stream(client: BedrockRuntimeClient, modelId: string): Promise<void> {
    const res = await client.send(new ConverseStreamCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'stream the matrix' }] }] }));
    const out = await drain(res.stream);
    assert.equal(out.text, 'Mock reply to: stream the matrix');
    assert.ok(out.deltas >= 2, `${out.deltas} deltas`);
    assert.equal(out.stopReason, 'end_turn');
  },

  async tools(client: BedrockRuntimeClient, modelId: string): Promise<void> {
    const question: Message = { role: 'user', content: [{ text: 'weather in Lima' }] };
    const first = await client.send(new ConverseCommand({ modelId, messages: [question], toolConfig: { tools: [bedrockTool] } }));
    assert.equal(first.stopReason, 'tool_use');
    const use = first.output?.message?.content?.find((b) => b.toolUse)?.toolUse;
    assert.ok(use, JSON.stringify(first.output));
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { query: 'weather in Lima' });
    const answer = await client.send(
      new ConverseCommand({
        modelId,
        toolConfig: { tools: [bedrockTool] },
        messages: [question, first.output!.message!, { role: 'user', content: [{ toolResult: { toolUseId: use.toolUseId, content: [{ text: 'foggy' }] } }] }],
      }),
    );
    assert.match(textOfBlocks(answer.output?.message?.content), FOGGY);
  },

  async toolsStream(client: BedrockRuntimeClient, modelId: string): Promise<void> {
    const res = await client.send(new ConverseStreamCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'weather in Rome' }] }], toolConfig: { tools: [bedrockTool] } }));
    const out = await drain(res.stream);
    assert.equal(out.stopReason, 'tool_use');
    assert.equal(out.tools.length, 1);
    assert.equal(out.tools[0].name, 'get_weather');
    assert.deepEqual(JSON.parse(out.tools[0].input), { query: 'weather in Rome' });
  },
};

describe('Bedrock Runtime SDK at /bedrock', () => {
  let client: BedrockRuntimeClient;
  before(() => {
    client = bedrockClient(`${gateway.url}/bedrock`);
  });
  for (const upstream of UPSTREAMS) {
    test(`Converse to ${upstream} ${compat('/bedrock', 'Converse', upstream)}`, async () => {
      await bedrockCases.converse(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`ConverseStream to ${upstream} ${compat('/bedrock', 'ConverseStream', upstream)}`, async () => {
      await bedrockCases.stream(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`tool use to ${upstream} ${compat('/bedrock', 'Converse.tools', upstream)}`, async () => {
      await bedrockCases.tools(client, MODEL[upstream]);
      reached(upstream);
    });
    test(`streamed tool use to ${upstream} ${compat('/bedrock', 'ConverseStream.tools', upstream)}`, async () => {
      await bedrockCases.toolsStream(client, MODEL[upstream]);
      reached(upstream);
    });
  }
});

// ------------------------------------------------------------------ Cohere SDK (v2)

const cohereTool: Cohere.ToolV2 = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
};

const textOfCohere = (content: Cohere.AssistantMessageResponseContentItem[] | undefined): string => (content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

const cohereCases = {
  async chat(co: CohereClientV2, model: string): Promise<void> {
    const res = await co.chat({ model, maxTokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello matrix' }] });
    assert.equal(textOfCohere(res.message.content), 'Mock reply to: Hello matrix');
    assert.equal(res.finishReason, 'COMPLETE');
    assert.ok((res.usage?.tokens?.inputTokens ?? 0) > 0 && (res.usage?.tokens?.outputTokens ?? 0) > 0);
  },

  async stream(co: CohereClientV2, model: string): Promise<void> {
    let text = '';
    let deltas = 0;
    let finish: string | undefined;
    for await (const ev of await co.chatStream({ model, messages: [{ role: 'user', content: 'stream the matrix' }] })) {
      if (ev.type === 'content-delta') {
        deltas++;
        text += ev.delta?.message?.content?.text ?? '';
      }
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    assert.equal(text, 'Mock reply to: stream the matrix');
    assert.ok(deltas >= 2, `${deltas} deltas`);
    assert.equal(finish, 'COMPLETE');
  },

  async tools(co: CohereClientV2, model: string): Promise<void> {
    const first = await co.chat({ model, tools: [cohereTool], messages: [{ role: 'user', content: 'weather in Lima' }] });
    assert.equal(first.finishReason, 'TOOL_CALL');
    const call = first.message.toolCalls?.[0];
    assert.equal(call?.function?.name, 'get_weather');
    assert.deepEqual(JSON.parse(call?.function?.arguments ?? ''), { query: 'weather in Lima' });
    const second = await co.chat({
      model,
      tools: [cohereTool],
      messages: [
        { role: 'user', content: 'weather in Lima' },
        { role: 'assistant', toolCalls: first.message.toolCalls, toolPlan: first.message.toolPlan },
        { role: 'tool', toolCallId: call!.id!, content: 'foggy' },
      ],
    });
    assert.match(textOfCohere(second.message.content), FOGGY);
  },

  async toolsStream(co: CohereClientV2, model: string): Promise<void> {
    let name = '';
    let args = '';
    let finish: string | undefined;
    for await (const ev of await co.chatStream({ model, tools: [cohereTool], messages: [{ role: 'user', content: 'weather in Rome' }] })) {
      if (ev.type === 'tool-call-start') name = ev.delta?.message?.toolCalls?.function?.name ?? '';
      if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
    assert.equal(finish, 'TOOL_CALL');
  },
};

describe('Cohere SDK at /cohere', () => {
  let co: CohereClientV2;
  before(() => {
    co = new CohereClientV2({ token: 'x', environment: `${gateway.url}/cohere`, maxRetries: 0 });
  });
  for (const upstream of UPSTREAMS) {
    test(`chat to ${upstream} ${compat('/cohere', 'chat', upstream)}`, async () => {
      await cohereCases.chat(co, MODEL[upstream]);
      reached(upstream);
    });
    test(`chatStream to ${upstream} ${compat('/cohere', 'chatStream', upstream)}`, async () => {
      await cohereCases.stream(co, MODEL[upstream]);
      reached(upstream);
    });
    test(`tool call to ${upstream} ${compat('/cohere', 'chat.tools', upstream)}`, async () => {
      await cohereCases.tools(co, MODEL[upstream]);
      reached(upstream);
    });
    test(`streamed tool call to ${upstream} ${compat('/cohere', 'chatStream.tools', upstream)}`, async () => {
      await cohereCases.toolsStream(co, MODEL[upstream]);
      reached(upstream);
    });
  }
});

// ------------------------------------------------------------------ passthrough: each provider's own SDK

describe('OpenAI SDK at /openai_passthrough/v1', () => {
  let client: OpenAI;
  before(() => {
    client = new OpenAI({ baseURL: `${gateway.url}/openai_passthrough/v1`, apiKey: 'x', maxRetries: 0 });
  });
  test(`chat ${compat('/openai_passthrough', 'chat', 'openai')}`, async () => {
    await openaiCases.chat(client, 'gpt-4o');
    reached('openai');
  });
  test(`streamed chat ${compat('/openai_passthrough', 'chat.stream', 'openai')}`, async () => {
    await openaiCases.stream(client, 'gpt-4o');
    reached('openai');
  });
  test(`tool call ${compat('/openai_passthrough', 'chat.tools', 'openai')}`, async () => {
    await openaiCases.tools(client, 'gpt-4o');
    reached('openai');
  });
});

describe('Anthropic SDK at /anthropic_passthrough', () => {
  let client: Anthropic;
  before(() => {
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic_passthrough`, apiKey: 'x', maxRetries: 0 });
  });
  test(`messages.create ${compat('/anthropic_passthrough', 'messages.create', 'anthropic')}`, async () => {
    await anthropicCases.create(client, 'claude-sonnet-4-6');
    reached('anthropic');
  });
  test(`messages.stream ${compat('/anthropic_passthrough', 'messages.stream', 'anthropic')}`, async () => {
    await anthropicCases.stream(client, 'claude-sonnet-4-6');
    reached('anthropic');
  });
  test(`tool use ${compat('/anthropic_passthrough', 'messages.tools', 'anthropic')}`, async () => {
    await anthropicCases.tools(client, 'claude-sonnet-4-6');
    reached('anthropic');
  });
});

describe('GenAI SDK at /gemini_passthrough', () => {
  let ai: GoogleGenAI;
  before(() => {
    ai = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: `${gateway.url}/gemini_passthrough` } });
  });
  test(`generateContent ${compat('/gemini_passthrough', 'generateContent', 'gemini')}`, async () => {
    await genaiCases.generate(ai, 'gemini-2.5-flash');
    reached('gemini');
  });
  test(`generateContentStream ${compat('/gemini_passthrough', 'generateContentStream', 'gemini')}`, async () => {
    await genaiCases.stream(ai, 'gemini-2.5-flash');
    reached('gemini');
  });
  test(`function call ${compat('/gemini_passthrough', 'generateContent.tools', 'gemini')}`, async () => {
    await genaiCases.tools(ai, 'gemini-2.5-flash');
    reached('gemini');
  });
});

describe('Cohere SDK at /cohere_passthrough', () => {
  let co: CohereClientV2;
  before(() => {
    co = new CohereClientV2({ token: 'x', environment: `${gateway.url}/cohere_passthrough`, maxRetries: 0 });
  });
  test(`chat ${compat('/cohere_passthrough', 'chat', 'cohere')}`, async () => {
    await cohereCases.chat(co, 'command-r-plus');
    reached('cohere');
  });
  test(`chatStream ${compat('/cohere_passthrough', 'chatStream', 'cohere')}`, async () => {
    await cohereCases.stream(co, 'command-r-plus');
    reached('cohere');
  });
  test(`tool call ${compat('/cohere_passthrough', 'chat.tools', 'cohere')}`, async () => {
    await cohereCases.tools(co, 'command-r-plus');
    reached('cohere');
  });
});

describe('AzureOpenAI client at /azure_passthrough', () => {
  let client: AzureOpenAI;
  before(() => {
    client = new AzureOpenAI({ endpoint: `${gateway.url}/azure_passthrough`, apiKey: 'x', apiVersion: AZURE_API_VERSION, maxRetries: 0 });
  });
  test(`chat ${compat('/azure_passthrough', 'chat', 'azure')}`, async () => {
    await openaiCases.chat(client, 'gpt-4o');
    reached('azure');
  });
  test(`streamed chat ${compat('/azure_passthrough', 'chat.stream', 'azure')}`, async () => {
    await openaiCases.stream(client, 'gpt-4o');
    reached('azure');
  });
});
