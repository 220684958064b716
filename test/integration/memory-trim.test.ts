// After a burst of traffic, a gateway that goes quiet gives back the heap the burst grew
// (proxy/src/memory-trim.ts): its young generation, as /metrics reports it, is back to its start
// size and the log says how much was given back. The gateway runs as users run it (its own process).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Pool, request } from 'undici';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProvider } from '../helpers/providers.ts';
import { eventually } from '../helpers/patience.ts';

const MB = 2 ** 20;
let mock: MockProvider;
let gateway: RunningGateway;
before(async () => {
  mock = await startMockProvider();
  gateway = await startGateway({ providers: { openai: mockProvider(mock.url, 'openai') }, client: { enable_logging: false } }, { args: ['--memory-trim', '0.5'] });
});
after(async () => {
  await gateway?.stop();
  await mock?.close();
});

/** Bytes V8 has committed for the young generation, from the gateway's own /metrics. */
async function newSpaceBytes(): Promise<number> {
  const res = await request(`${gateway.url}/metrics`);
  const text = await res.body.text();
  assert.equal(res.statusCode, 200);
  const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(text);
  assert.ok(m, 'the new space size is in /metrics');
  return Number(m[1]);
}

const trims = (from = 0) => [...gateway.logs().slice(from).matchAll(/memory trimmed after traffic.*?"committed_mb_before":(\d+),"committed_mb_after":(\d+)/g)].map((m) => ({ before: Number(m[1]), after: Number(m[2]) }));

test('a burst of chats grows the young generation; once the gateway is quiet it is given back', async () => {
  const pool = new Pool(gateway.url, { connections: 32 });
  const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
  try {
    // Enough allocation to grow the young generation from its start size (1 MB) to several MB.
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = 0; i < 25; i++) {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
          await res.body.dump();
          assert.equal(res.statusCode, 200);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  // Only a trim logged after the burst counts (the gateway also trims once after its start).
  const mark = gateway.logs().length;
  await eventually(() => assert.ok(trims(mark).length > 0, 'the gateway logged a trim after the burst'), 10_000);
  const last = trims(mark)[0];
  assert.ok(last.after < last.before, `the heap committed less after the trim (${last.before} → ${last.after} MB)`);
  // Read after the trim (the scrape is itself a request, but a small one): back to a few MB.
  const young = await newSpaceBytes();
  assert.ok(young <= 4 * MB, `the young generation is back near its start size (${(young / MB).toFixed(1)} MB)`);
});

test('a gateway started without --memory-trim gives back what its start grew, and once what its first requests grew', async () => {
  const plain = await startGateway({ providers: { openai: mockProvider(mock.url, 'openai') }, client: { enable_logging: false } });
  try {
    assert.match(plain.logs(), /memory trimmed after start/);
    const res = await request(`${plain.url}/metrics`);
    const text = await res.body.text();
    const m = /^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(text);
    assert.ok(m, 'the new space size is in /metrics');
    // Loading the modules and compiling the configuration grow it to its largest (16 MB or more) otherwise.
    assert.ok(Number(m[1]) <= 4 * MB, `the young generation is at its start size (${(Number(m[1]) / MB).toFixed(1)} MB)`);
    // The first requests grow it again (they load and compile what they use): given back once, after 30 s quiet, and only once.
    const burst = async () => {
      for (let i = 0; i < 20; i++) {
        const r = await request(`${plain.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2000) }] }) });
        await r.body.dump();
        assert.equal(r.statusCode, 200);
      }
    };
    const afterTraffic = () => plain.logs().match(/memory trimmed after traffic/g)?.length ?? 0;
    await burst();
    // Not within a short pause (a trim deoptimizes compiled code: bursty traffic must not pay for one)...
    await new Promise((r) => setTimeout(r, 10_000));
    assert.equal(afterTraffic(), 0, 'a pause of 10 s between bursts does not collect');
    // ...but once the gateway is idle (30 s quiet).
    await eventually(() => assert.equal(afterTraffic(), 1), 30_000);
    await burst();
    await new Promise((r) => setTimeout(r, 32_000));
    assert.equal(afterTraffic(), 1, 'a second quiet moment does not collect again');
  } finally {
    await plain.stop();
  }
});

test('no trim while a realtime session is open: its events are traffic too; once it ends, the quiet gateway trims', async () => {
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=openai/gpt-realtime`);
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const mark = gateway.logs().length;
  try {
    // A burst that grows the heap past the trim's threshold, while the session is open.
    const pool = new Pool(gateway.url, { connections: 32 });
    const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = 0; i < 25; i++) {
          const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
          await res.body.dump();
        }
      }),
    );
    await pool.close();
    // Four times the quiet the gateway waits for (0.5 s), with nothing but the session open.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(trims(mark).length, 0, 'no trim while the realtime session was open');
  } finally {
    ws.close();
    await closed;
  }
  await eventually(() => assert.ok(trims(mark).length > 0, 'the gateway trimmed once the session ended'), 10_000);
});
