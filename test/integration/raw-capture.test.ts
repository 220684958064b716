// send_back_raw_request / send_back_raw_response, with the spec's streaming rules: payloads joined
// by a blank line, no `data:` prefix, no [DONE], content-less frames carried by the next chunk, and
// trailing finish/usage frames on the terminal chunk.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mockProviders } from '../helpers/providers.ts';
import { startStack, type Stack } from '../helpers/in-process-gateway.ts';

interface Extra {
  provider: string;
  raw_request?: Record<string, unknown>;
  raw_response?: unknown;
}

let stack: Stack;
before(async () => {
  stack = await startStack((u) => ({
    providers: mockProviders(u, {
      openai: { send_back_raw_request: true, send_back_raw_response: true },
      anthropic: { send_back_raw_response: true },
    }),
  }));
});
after(() => stack.close());

async function sse(body: Record<string, unknown>): Promise<{ chunks: Record<string, unknown>[]; text: string }> {
  const res = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  assert.equal(res.status, 200);
  const text = await res.text();
  const chunks = text
    .split('\n\n')
    .filter((b) => b.startsWith('data: ') && b !== 'data: [DONE]')
    .map((b) => JSON.parse(b.slice(6)) as Record<string, unknown>);
  return { chunks, text };
}

/** What the mock actually streamed, as data payloads. */
function upstreamPayloads(stack: Stack): string[] {
  const last = stack.mock.requests.at(-1)!;
  return (last.responseBody ?? '')
    .split(/\r?\n\r?\n/)
    .flatMap((block) => block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()))
    .filter((d) => d !== '[DONE]');
}

describe('raw capture', () => {
  test('non-streaming: raw_request is the body sent, raw_response the body received', async () => {
    const res = await stack.client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'raw please' }] });
    const extra = (res as unknown as { extra_fields: Extra }).extra_fields;
    assert.equal(extra.raw_request?.model, 'gpt-4o');
    assert.deepEqual(extra.raw_request?.messages, [{ role: 'user', content: 'raw please' }]);
    assert.deepEqual(extra.raw_response, JSON.parse(stack.mock.requests.at(-1)!.responseBody!));
  });

  test('without the setting nothing raw is returned', async () => {
    const res = await stack.client.chat.completions.create({ model: 'gemini/gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] });
    const extra = (res as unknown as { extra_fields: Extra }).extra_fields;
    assert.equal(extra.raw_request, undefined);
    assert.equal(extra.raw_response, undefined);
  });

  for (const includeUsage of [false, true]) {
    test(`openai stream (include_usage ${includeUsage}): every upstream payload exactly once, in order, trailing frames on the last chunk`, async () => {
      const { chunks, text } = await sse({
        model: 'openai/gpt-4o',
        messages: [{ role: 'user', content: 'one two three' }],
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      });
      const carried = chunks.flatMap((c) => {
        const raw = (c.extra_fields as Extra).raw_response;
        return typeof raw === 'string' ? raw.split('\n\n') : [];
      });
      const upstream = upstreamPayloads(stack);
      assert.deepEqual(carried, upstream);
      assert.ok(!text.includes('"raw_response":"data:'), 'no data: prefix');
      assert.ok(!carried.includes('[DONE]'));
      const last = chunks.at(-1)!;
      const lastRaw = ((last.extra_fields as Extra).raw_response as string).split('\n\n');
      // The usage frame (empty choices) is the final upstream payload and rides on the last chunk.
      assert.equal(lastRaw.at(-1), upstream.at(-1));
      assert.ok((JSON.parse(upstream.at(-1)!) as { usage?: unknown }).usage);
      // raw_request rides on the first chunk only.
      assert.equal((chunks[0].extra_fields as Extra).raw_request?.model, 'gpt-4o');
      assert.equal((chunks[1].extra_fields as Extra).raw_request, undefined);
    });
  }

  test('anthropic stream: ping and message_stop frames are carried, message_stop on the terminal chunk', async () => {
    const { chunks } = await sse({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'alpha beta' }] });
    const carried = chunks.flatMap((c) => {
      const raw = (c.extra_fields as Extra).raw_response;
      return typeof raw === 'string' ? raw.split('\n\n') : [];
    });
    assert.deepEqual(carried, upstreamPayloads(stack));
    const lastRaw = ((chunks.at(-1)!.extra_fields as Extra).raw_response as string).split('\n\n');
    assert.equal((JSON.parse(lastRaw.at(-1)!) as { type: string }).type, 'message_stop');
  });
});
