// The openai SDK, unchanged but for its base URL, talking through the gateway to OpenAI-,
// Anthropic- and Gemini-format upstreams.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type OpenAI from 'openai';
import { FORMATS, MODELS } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
};

// A 1x1 PNG.
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

for (const format of FORMATS) {
  describe(`chat through a ${format}-format upstream`, () => {
    test(`non-streaming reply, usage and provider ${compat('/v1', 'chat', format)}`, async () => {
      const res = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there gateway' },
        ],
      });
      assert.equal(res.object, 'chat.completion');
      assert.equal(res.choices[0].message.role, 'assistant');
      assert.equal(res.choices[0].message.content, 'Mock reply to: Hello there gateway');
      assert.equal(res.choices[0].finish_reason, 'stop');
      assert.ok(res.usage && res.usage.prompt_tokens > 0 && res.usage.completion_tokens > 0);
      assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
      assert.equal((res as unknown as { extra_fields: { provider: string } }).extra_fields.provider, format);
      // The upstream saw its own wire format with the bare model name.
      const seen = stack.mock.requests.at(-1)!;
      assert.equal(seen.format, format);
    });

    test(`streaming reply arrives in several chunks and ends with stop ${compat('/v1', 'chat.stream', format)}`, async () => {
      const stream = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [{ role: 'user', content: 'Stream me a reply please' }],
        stream: true,
      });
      let text = '';
      let chunks = 0;
      let finish: string | null = null;
      let sawUsage = false;
      for await (const chunk of stream) {
        chunks++;
        if (chunk.usage) sawUsage = true;
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta.content ?? '';
        if (choice.finish_reason) finish = choice.finish_reason;
        assert.equal((chunk as unknown as { extra_fields: { provider: string } }).extra_fields.provider, format);
      }
      assert.equal(text, 'Mock reply to: Stream me a reply please');
      assert.ok(chunks >= 3, `expected several chunks, got ${chunks}`);
      assert.equal(finish, 'stop');
      assert.equal(sawUsage, false, 'no usage chunk unless stream_options.include_usage');
    });

    test('stream_options.include_usage adds a final usage chunk with empty choices', async () => {
      const stream = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [{ role: 'user', content: 'count my tokens' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
      for await (const c of stream) chunks.push(c);
      const last = chunks.at(-1)!;
      assert.deepEqual(last.choices, []);
      assert.ok(last.usage && last.usage.prompt_tokens > 0 && last.usage.completion_tokens > 0);
    });

    test(`tool call and tool result round trip ${compat('/v1', 'chat.tools', format)}`, async () => {
      const first = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [{ role: 'user', content: 'weather in Paris' }],
        tools: [weatherTool],
      });
      const msg = first.choices[0].message;
      assert.equal(first.choices[0].finish_reason, 'tool_calls');
      assert.equal(msg.tool_calls?.length, 1);
      const call = msg.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { query: 'weather in Paris' });
      assert.ok(call.id);

      const second = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [
          { role: 'user', content: 'weather in Paris' },
          msg,
          { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
        ],
        tools: [weatherTool],
      });
      assert.match(second.choices[0].message.content ?? '', /^Tool said: .*sunny, 21C/);
    });

    test(`streamed tool call reassembles to the same arguments ${compat('/v1', 'chat.tools.stream', format)}`, async () => {
      const stream = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [{ role: 'user', content: 'weather in Rome' }],
        tools: [weatherTool],
        stream: true,
      });
      let name = '';
      let args = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        for (const tc of choice.delta.tool_calls ?? []) {
          assert.ok(tc.function, 'every tool call delta carries function');
          name += tc.function.name ?? '';
          args += tc.function.arguments ?? '';
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      assert.equal(name, 'get_weather');
      assert.deepEqual(JSON.parse(args), { query: 'weather in Rome' });
      assert.equal(finish, 'tool_calls');
    });

    test(`images in messages reach the upstream ${compat('/v1', 'chat.images', format)}`, async () => {
      const res = await stack.client.chat.completions.create({
        model: MODELS[format],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this' },
              { type: 'image_url', image_url: { url: PIXEL } },
            ],
          },
        ],
      });
      assert.match(res.choices[0].message.content ?? '', /\[images: 1\]/);
    });
  });
}

describe('reasoning', () => {
  test(`anthropic thinking comes back as reasoning with a signature ${compat('/v1', 'chat.reasoning', 'anthropic')}`, async () => {
    const res = await stack.client.chat.completions.create({
      model: MODELS.anthropic,
      messages: [{ role: 'user', content: 'think about it' }],
      reasoning_effort: 'low',
    });
    const msg = res.choices[0].message as OpenAI.Chat.ChatCompletionMessage & { reasoning?: string; reasoning_details?: { signature?: string }[] };
    assert.ok(msg.reasoning && msg.reasoning.length > 0);
    assert.ok(msg.reasoning_details?.some((d) => d.signature));
    const sent = stack.mock.requests.at(-1)!.body as { thinking?: { type: string; budget_tokens: number } };
    assert.equal(sent.thinking?.type, 'enabled');
  });

  test(`gemini thoughts stream as delta.reasoning ${compat('/v1', 'chat.reasoning.stream', 'gemini')}`, async () => {
    const stream = await stack.client.chat.completions.create({
      model: MODELS.gemini,
      messages: [{ role: 'user', content: 'think about it' }],
      reasoning_effort: 'medium',
      stream: true,
    });
    let reasoning = '';
    let content = '';
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as { reasoning?: string; content?: string | null } | undefined;
      reasoning += d?.reasoning ?? '';
      content += d?.content ?? '';
    }
    assert.ok(reasoning.length > 0, 'reasoning streamed');
    assert.equal(content, 'Mock reply to: think about it');
  });
});
