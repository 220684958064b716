// Graceful shutdown and readiness: on SIGTERM the gateway stops taking connections, fails readiness,
// lets a stream in flight finish, then exits 0; a stream still open when the grace period ends gets an
// error event and its log record; /ready answers 200 once a configuration is served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { eventually } from '../helpers/patience.ts';

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
  // The child closes its listener when it handles the signal, later on a loaded machine: poll
  // (a connection made before that is closed once idle, so a later attempt is refused).
  await eventually(() => assert.rejects(fetch(`${g.url}/health`), 'the listener is closed'), 5000);
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

test('SIGTERM: a stream still open when the grace period ends gets an error event the SDK raises, and its log record is kept', async () => {
  // Logging is on by default (SQLite logs.db in the app dir); 60 words at 150 ms each outlast a 1 s grace.
  const g = await startGateway({ providers: mockProviders(mock.url) }, { args: ['--shutdown-grace', '1'] });
  const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'openai/gpt-4o', stream: true, messages: [{ role: 'user', content: words }] });
  const exited = once(g.process, 'exit');
  let text = '';
  let signalled = false;
  const failure = await (async () => {
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        if (!signalled) {
          signalled = true;
          g.process.kill('SIGTERM');
        }
      }
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  assert.ok(failure instanceof OpenAI.APIError, `the stream ended with the SDK's error, not a cut connection: ${String(failure)}`);
  assert.match(failure.message, /shutting down/);
  assert.ok(text.length > 0 && !text.includes('w59'), 'the stream was cut part way');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0);
  assert.match(g.logs(), /shutdown grace period over: ending the streams/);
  const db = new DatabaseSync(join(g.appDir, 'logs.db'), { readOnly: true });
  try {
    const rows = db.prepare('SELECT object, status, stream, error_details FROM logs').all() as { status: string; error_details: string | null }[];
    assert.equal(rows.length, 1, `the cut stream has its log record: ${JSON.stringify(rows)}\n${g.logs()}`);
    assert.equal(rows[0].status, 'error');
    assert.match(rows[0].error_details ?? '', /gateway_shutdown/);
  } finally {
    db.close();
  }
});
