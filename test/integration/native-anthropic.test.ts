// The official Anthropic SDK, unchanged but for its base URL, through /anthropic to every upstream format.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { FORMATS, MODELS } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';
import { compat } from '../helpers/compat.ts';

let stack: Stack;
let client: Anthropic;
before(async () => {
  stack = await startStack();
  client = new Anthropic({ baseURL: `${stack.gateway.url}/anthropic`, apiKey: 'not-needed', maxRetries: 0 });
});
after(() => stack.close());

const tool = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { query: { type: 'string' } }, required: ['query'] } };

for (const format of FORMATS) {
  describe(`Anthropic SDK to a ${format}-format upstream`, () => {
    test(`messages.create ${compat('/anthropic', 'messages.create', format)}`, async () => {
      const msg = await client.messages.create({ model: MODELS[format], max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello from anthropic' }] });
      assert.equal(msg.type, 'message');
      assert.equal(msg.role, 'assistant');
      const text = msg.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      assert.equal(text, 'Mock reply to: Hello from anthropic');
      assert.equal(msg.stop_reason, 'end_turn');
      assert.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0);
      assert.equal(stack.mock.requests.at(-1)!.format, format);
    });

    test(`messages.stream ${compat('/anthropic', 'messages.stream', format)}`, async () => {
      const stream = client.messages.stream({ model: MODELS[format], max_tokens: 100, messages: [{ role: 'user', content: 'stream via anthropic' }] });
      let deltas = 0;
      stream.on('text', () => deltas++);
      const final = await stream.finalMessage();
      const text = final.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      assert.equal(text, 'Mock reply to: stream via anthropic');
      assert.ok(deltas >= 2, `text arrived in ${deltas} deltas`);
      assert.equal(final.stop_reason, 'end_turn');
      assert.ok(final.usage.output_tokens > 0);
    });

    test(`tool use round trip ${compat('/anthropic', 'messages.tools', format)}`, async () => {
      const first = await client.messages.create({ model: MODELS[format], max_tokens: 100, tools: [tool], messages: [{ role: 'user', content: 'weather in Lima' }] });
      assert.equal(first.stop_reason, 'tool_use');
      const use = first.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: unknown } | undefined;
      assert.ok(use);
      assert.equal(use.name, 'get_weather');
      assert.deepEqual(use.input, { query: 'weather in Lima' });
      const second = await client.messages.create({
        model: MODELS[format],
        max_tokens: 100,
        tools: [tool],
        messages: [
          { role: 'user', content: 'weather in Lima' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'foggy' }] },
        ],
      });
      const text = second.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
      assert.match(text, /^Tool said: .*foggy/);
    });
  });
}

describe('errors in Anthropic shape', () => {
  test('an upstream 429 reaches the SDK as RateLimitError', async () => {
    stack.mock.inject({ format: 'openai', status: 429, retryAfter: 7 });
    const err = await client.messages.create({ model: MODELS.openai, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.RateLimitError, String(err));
    assert.equal(err.headers?.get('retry-after'), '7');
  });

  test('a missing max_tokens is a 400 invalid_request_error', async () => {
    const res = await fetch(`${stack.gateway.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /max_tokens/);
  });

  test(`the framework prefixes serve it too ${compat('/langchain/anthropic', 'messages.create', 'gemini')}`, async () => {
    const fw = new Anthropic({ baseURL: `${stack.gateway.url}/langchain/anthropic`, apiKey: 'x', maxRetries: 0 });
    const msg = await fw.messages.create({ model: MODELS.gemini, max_tokens: 50, messages: [{ role: 'user', content: 'framework' }] });
    assert.equal((msg.content[0] as { text: string }).text, 'Mock reply to: framework');
  });
});

describe('Anthropic models list', () => {
  test('models.list shows every provider as provider/model', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.ok(ids.includes('anthropic/claude-sonnet-4-5'));
    assert.ok(ids.includes('openai/gpt-4o'));
    assert.ok(ids.includes('gemini/gemini-2.5-flash'));
  });
});
