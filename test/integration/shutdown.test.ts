// Graceful shutdown and readiness: on SIGTERM the gateway stops taking connections, fails readiness,
// lets a stream in flight finish, then exits 0; /ready answers 200 once a configuration is served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
before(async () => {
  // 150 ms between stream events: a stream of a dozen words takes about two seconds.
  mock = await startMockProvider({ chunkDelayMs: 150 });
});
after(async () => {
  await mock?.close();
});

test('/ready answers 200 with the served configuration', async () => {
  const g = await startGateway({ providers: mockProviders(mock.url) });
  try {
    const res = await fetch(`${g.url}/ready`);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'ready');
  } finally {
    await g.stop();
  }
});

test('SIGTERM: new connections are refused, a stream in flight finishes whole, then the process exits 0', async () => {
  const g = await startGateway({ providers: mockProviders(mock.url) }, { args: ['--shutdown-grace', '20'] });
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', stream: true, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }] }),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value);
  const exited = once(g.process, 'exit');
  const signalled = Date.now();
  g.process.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  await assert.rejects(fetch(`${g.url}/health`), 'the listener is closed');
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  assert.match(text, /data: \[DONE\]/, 'the stream ran to its end');
  assert.match(text, /ten/);
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
  assert.ok(Date.now() - signalled < 15_000, 'exited once the stream ended, well inside the grace period');
  assert.match(g.logs(), /shutting down: finishing requests in flight/);
});
