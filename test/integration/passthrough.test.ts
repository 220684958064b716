// /<provider>_passthrough/...: forwarded untouched, auth injected from the key pool.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/setup.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack.close());

test('GET is forwarded with the provider key instead of the client credentials', async () => {
  const res = await fetch(`${stack.gateway.url}/openai_passthrough/v1/models?limit=5`, { headers: { authorization: 'Bearer client-secret', 'x-custom': 'kept' } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: { id: string }[] };
  assert.ok(body.data.some((m) => m.id === 'gpt-4o'));
  const seen = stack.mock.requests.at(-1)!;
  assert.equal(seen.path, '/openai/v1/models');
  assert.equal(seen.headers.authorization, 'Bearer sk-openai-test');
  assert.equal(seen.headers['x-custom'], 'kept');
});

test('a native streaming POST streams back untouched', async () => {
  const res = await fetch(`${stack.gateway.url}/anthropic_passthrough/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'raw stream' }] }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const text = await res.text();
  assert.equal(text, stack.mock.requests.at(-1)!.responseBody);
  assert.equal(stack.mock.requests.at(-1)!.headers['x-api-key'], 'sk-anthropic-test');
});

test('upstream errors keep their status and body; unknown providers are 404', async () => {
  stack.mock.inject({ format: 'gemini', status: 429, retryAfter: 3 });
  const res = await fetch(`${stack.gateway.url}/gemini_passthrough/v1beta/models`);
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(((await res.json()) as { error: { status: string } }).error.status, 'RESOURCE_EXHAUSTED');
  const missing = await fetch(`${stack.gateway.url}/groq_passthrough/v1/models`);
  assert.equal(missing.status, 404);
});
