// The inbound front under hostile clients: malformed paths, deep JSON, slow or oversized bodies on
// HTTP/1.1 and h2c, worker processes that must survive, and an access log that names the request
// but none of its secrets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';

let mock: MockProvider;
let g: RunningGateway;
const VK = 'sk-bf-front-0123456789abcdef';
const UPSTREAM_KEY = 'sk-openai-test';

before(async () => {
  mock = await startMockProvider();
  g = await startGateway(
    {
      providers: mockProviders(mock.url),
      client: { max_request_body_size_mb: 1 },
      governance: {
        virtual_keys: [{ id: 'vk-front', name: 'front', value: VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }] }],
      },
    },
    { args: ['--request-timeout', '1.5', '--headers-timeout', '1'] },
  );
});
after(async () => {
  await g?.stop();
  await mock?.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  rstCode?: number;
}

function h2(session: ClientHttp2Session, headers: Record<string, string>, body?: string, end = true): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let status = 0;
    let text = '';
    let got: Answer['headers'] = {};
    stream.on('response', (h) => {
      status = Number(h[':status']);
      got = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => (text += d));
    stream.on('error', () => undefined);
    stream.once('close', () => (status ? resolve({ status, headers: got, text, rstCode: stream.rstCode }) : reject(new Error(`stream closed without an answer (${stream.rstCode})`))));
    if (body !== undefined) stream.write(body);
    if (end) stream.end();
  });
}

/** Writes raw bytes on a fresh connection and collects everything until the server closes it. */
function raw(port: number, chunks: (string | Buffer)[], waitMs = 5000): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = netConnect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false, ms: performance.now() - started });
    }, waitMs);
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true, ms: performance.now() - started });
    });
    for (const c of chunks) socket.write(c);
  });
}

async function healthy(url: string): Promise<void> {
  const t = performance.now();
  const res = await fetch(`${url}/health`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  assert.ok(performance.now() - t < 1000, '/health answers promptly');
}

const MALFORMED = ['/v1/files/%', '/v1/files/%zz/content', '/v1/batches/%E0%A4%A/cancel', '/genai/v1beta/models/%:generateContent', '/openai/openai/deployments/%/chat/completions'];

test('a malformed percent-escape in a path is a 400 naming the path, on HTTP/1.1 and h2c alike', async () => {
  for (const path of MALFORMED) {
    const method = path.endsWith('content') && !path.endsWith('Content') ? 'GET' : path.startsWith('/v1/files') ? 'GET' : 'POST';
    const res = await fetch(`${g.url}${path}`, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    const body = (await res.json()) as { error: { message: string; param?: string } };
    assert.equal(res.status, 400, `${method} ${path}`);
    assert.match(body.error.message, /malformed percent-encoding/);
    assert.ok(body.error.message.includes(path), body.error.message);
  }
  const session = h2connect(g.url);
  try {
    const res = await h2(session, { ':method': 'GET', ':path': '/v1/files/%' });
    assert.equal(res.status, 400);
    assert.match((JSON.parse(res.text) as { error: { message: string } }).error.message, /malformed percent-encoding in path '\/v1\/files\/%'/);
  } finally {
    session.close();
  }
  assert.equal(g.process.exitCode, null);
  await healthy(g.url);
});

test('JSON nested 20,000 levels deep is a 400, not a stack overflow, on every body-parsing route kind', async () => {
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const cases: [string, string][] = [
    ['/v1/chat/completions', `{"model":"openai/gpt-4o","messages":${deep}}`],
    ['/anthropic/v1/messages', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":${deep}}]}`],
    ['/v1/batches', `{"input_file_id":${deep}}`],
    ['/v1/embeddings', deep],
  ];
  for (const [path, body] of cases) {
    const res = await fetch(`${g.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': VK }, body });
    const text = await res.text();
    assert.equal(res.status, 400, `${path}: ${text.slice(0, 200)}`);
    assert.match(text, /nested deeper than 128 levels/);
  }
  await healthy(g.url);
});

test('an HTTP/2 stream that never finishes its body is answered 408 after the request timeout; its session serves on', async () => {
  const session = h2connect(g.url);
  try {
    const started = performance.now();
    const slow = h2(session, { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', 'x-bf-vk': VK }, '{"model":', false);
    // Meanwhile other streams of the same connection are unaffected.
    assert.equal((await h2(session, { ':method': 'GET', ':path': '/health' })).status, 200);
    const res = await slow;
    const ms = performance.now() - started;
    assert.equal(res.status, 408);
    assert.match((JSON.parse(res.text) as { error: { message: string } }).error.message, /request body not received within 1.5 s/);
    assert.ok(ms >= 1400 && ms < 4000, `cut after ${ms} ms`);
    assert.equal((await h2(session, { ':method': 'GET', ':path': '/health' })).status, 200);
  } finally {
    session.close();
  }
});

test('an HTTP/1.1 request whose body never finishes is cut after the request timeout', async () => {
  const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-bf-vk: ${VK}\r\ncontent-length: 100\r\n\r\n{"model":`;
  const res = await raw(g.port, [head], 6000);
  assert.ok(res.closed, 'the connection is closed by the gateway');
  assert.match(res.text, /^HTTP\/1\.1 408/);
  assert.ok(res.ms < 5000, `closed after ${res.ms} ms`);
});

test('slow or silent clients are cut after the header timeout (HTTP/1.1 trickled headers, a connection that never speaks)', async () => {
  const trickle = await raw(g.port, ['GET /health HTTP/1.1\r\nhost: x\r\nx-slow: '], 6000);
  assert.ok(trickle.closed, 'a request whose headers never end is closed');
  assert.match(trickle.text, /^HTTP\/1\.1 408/);
  assert.ok(trickle.ms < 4000, `closed after ${trickle.ms} ms`);
  const silent = await raw(g.port, [], 6000);
  assert.ok(silent.closed && silent.ms < 4000, `a silent connection is closed (after ${silent.ms} ms)`);
});

test('h2c sessions advertise the stream and header-size limits', async () => {
  const session = h2connect(g.url);
  try {
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
    assert.equal(session.remoteSettings.maxConcurrentStreams, 100);
    assert.equal(session.remoteSettings.maxHeaderListSize, 16 * 1024);
  } finally {
    session.close();
  }
});

test('a 413 stops reading: the connection closes without the rest of the body (declared or chunked)', async () => {
  const declared = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-bf-vk: ${VK}\r\ncontent-length: ${50 * 1024 * 1024}\r\n\r\n`;
  const a = await raw(g.port, [declared, Buffer.alloc(64 * 1024, 0x20)]);
  assert.ok(a.closed, 'closed although 50 MB were announced');
  assert.match(a.text, /^HTTP\/1\.1 413/);
  assert.match(a.text, /\r\nconnection: close\r\n/i);
  assert.match(a.text, /request body exceeds the limit of 1048576 bytes/);

  const chunked = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-bf-vk: ${VK}\r\ntransfer-encoding: chunked\r\n\r\n`;
  const chunk = Buffer.concat([Buffer.from(`${(256 * 1024).toString(16)}\r\n`), Buffer.alloc(256 * 1024, 0x20), Buffer.from('\r\n')]);
  const b = await raw(g.port, [chunked, ...Array.from({ length: 6 }, () => chunk)]);
  assert.ok(b.closed, 'closed while the chunked body was still open');
  assert.match(b.text, /^HTTP\/1\.1 413/);

  // The same over h2: the 413 arrives and the stream ends while the client has not finished.
  const session = h2connect(g.url);
  try {
    const res = await h2(session, { ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', 'x-bf-vk': VK, 'content-length': String(50 * 1024 * 1024) }, ' '.repeat(1024), false);
    assert.equal(res.status, 413);
  } finally {
    session.close();
  }
  await healthy(g.url);
});

test('request headers over the size limit are refused with 431 (HTTP/1.1) and the process serves on', async () => {
  const res = await raw(g.port, [`GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20 * 1024)}\r\n\r\n`]);
  assert.match(res.text, /^HTTP\/1\.1 431/);
  await healthy(g.url);
});

test('one access-log line per request: method, path, status, latency, provider, model and VK id; never the key, query or body', async () => {
  const secretQuery = 'key=AIzaSECRETQUERY123';
  const res = await fetch(`${g.url}/v1/chat/completions?${secretQuery}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${VK}` },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'BODYSECRET-42' }] }),
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 40 && !line; i++) {
    line = g
      .logs()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('"/v1/chat/completions"') && l.includes('"status":200'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .at(-1);
    if (!line) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(line, 'an access log line was written');
  assert.equal(line.level, 'info');
  assert.equal(line.method, 'POST');
  assert.equal(line.path, '/v1/chat/completions');
  assert.equal(typeof line.latency_ms, 'number');
  assert.equal(line.vk, 'vk-front');
  assert.equal(line.provider, 'openai');
  assert.equal(line.model, 'gpt-4o');
  const all = g.logs();
  for (const secret of [VK, UPSTREAM_KEY, 'AIzaSECRETQUERY123', 'BODYSECRET-42']) assert.ok(!all.includes(secret), `the log never contains ${secret}`);
});

test('with --workers 2, a flood of hostile requests leaves both workers running', async () => {
  const w = await startGateway({ providers: mockProviders(mock.url) }, { args: ['--workers', '2'] });
  try {
    const listening = () => w.logs().match(/"msg":"skybridge listening"/g)?.length ?? 0;
    await eventually(() => assert.equal(listening(), 2, 'both workers are up'), 20_000);
    // Each on its own connection, so both workers get some.
    const one = (path: string, method = 'GET') =>
      new Promise<number>((resolve) => {
        const r = httpRequest(`${w.url}${path}`, { method, agent: false }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
        });
        r.on('error', () => resolve(0));
        r.end(method === 'POST' ? '['.repeat(30_000) : undefined);
      });
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => one(MALFORMED[i % MALFORMED.length], i % 2 ? 'POST' : 'GET')));
    for (const s of statuses) assert.ok(s >= 400 && s < 500, `status ${s}`);
    await healthy(w.url);
    const logs = w.logs();
    assert.ok(!/worker exited/.test(logs), 'no worker died');
    assert.ok(!/uncaught exception|unhandled promise rejection/.test(logs), 'nothing slipped past the handlers');
    assert.equal(listening(), 2, 'no worker was started again');
  } finally {
    await w.stop();
  }
});
