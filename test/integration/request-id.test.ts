// Request ids, end to end on the gateway as users run it (a child process, its own output read):
// a client's x-request-id is kept when it is a plain token and replaced otherwise, one is made when
// none came; every answer names it (successes, errors, streams, 404s, /api), error bodies carry it
// as error.request_id (what the official openai SDK reads as APIError.requestID comes from the
// header), the request log stores it and /api/logs finds records by it, the access line names it
// with the error code of a failure, async jobs keep their submit's, and a provider's own id is
// relayed as x-upstream-request-id, never in the gateway's header.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { errorOf } from '../helpers/openai-errors.ts';

const VK = 'sk-bf-request-id-vk-0123456789';
/** The shape of a made id: 8 random base64url characters, a dash, a base-36 counter. */
const MADE = /^[A-Za-z0-9_-]{8}-[0-9a-z]{6,}$/;

let mock: MockProvider;
let g: RunningGateway;

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enable_logging: true, enforce_auth_on_inference: true },
    governance: {
      virtual_keys: [{ id: 'rid', name: 'rid', value: VK, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] }],
    },
  });
});

after(async () => {
  await g?.stop();
  await mock?.close();
});

const client = (headers: Record<string, string> = { 'x-bf-vk': VK }) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'none', maxRetries: 0, defaultHeaders: headers });

interface Entry {
  id: string;
  request_id?: string;
  status: string;
}

async function logsOf(requestId: string): Promise<Entry[]> {
  const res = await fetch(`${g.url}/api/logs?request_id=${encodeURIComponent(requestId)}`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { logs: Entry[] }).logs;
}

/** The access lines (JSON) the gateway wrote for a request id. */
function accessLines(requestId: string): Record<string, unknown>[] {
  return g
    .logs()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.request_id === requestId);
}

test("a client's x-request-id is kept: answered, stored in the request log, found by /api/logs, named in the access line", async () => {
  const id = `client-${Date.now()}-abc.DEF_9`;
  const { data, response } = await client({ 'x-bf-vk': VK, 'x-request-id': id })
    .chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  assert.ok(data.choices[0].message.content);
  assert.equal(response.headers.get('x-request-id'), id);
  await eventually(async () => {
    const logs = await logsOf(id);
    assert.equal(logs.length, 1);
    assert.equal(logs[0].request_id, id);
    assert.equal(logs[0].status, 'success');
    assert.notEqual(logs[0].id, id, "the record's own key stays the gateway's");
  }, 5000);
  await eventually(() => {
    const [line] = accessLines(id);
    assert.ok(line, 'an access line names the request id');
    assert.equal(line.level, 'info');
    assert.equal(line.status, 200);
    assert.equal(line.path, '/v1/chat/completions');
    assert.equal(line.error, undefined);
  });
});

test('an unacceptable id is replaced and a missing one made, unique per request', async () => {
  const sent = ['has a space', 'x'.repeat(129), 'quote"d', 'semi;colon', 'angle<script>'];
  const seen = new Set<string>();
  for (const bad of [...sent, undefined]) {
    const res = await fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-bf-vk': VK, ...(bad !== undefined && { 'x-request-id': bad }) },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id')!;
    assert.match(id, MADE, `made for ${JSON.stringify(bad)}`);
    seen.add(id);
  }
  assert.equal(seen.size, sent.length + 1);
  // 128 characters is the bound, inclusive.
  const longest = 'y'.repeat(128);
  const res = await fetch(`${g.url}/health`, { headers: { 'x-request-id': longest } });
  assert.equal(res.headers.get('x-request-id'), longest);
});

test("errors carry it: the SDK's requestID, the body's error.request_id, the access line's error code", async () => {
  // 401: no virtual key.
  const refused = await errorOf(client({}).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal(refused.status, 401);
  assert.match(refused.requestID ?? '', MADE);
  assert.equal((refused.error as { request_id?: string }).request_id, refused.requestID);
  // 400 from validation, with the client's own id.
  const mine = 'bad-request-7f3a';
  const invalid = await errorOf(client({ 'x-bf-vk': VK, 'x-request-id': mine }).chat.completions.create({ model: 'openai/gpt-4o', messages: 'nope' as never }));
  assert.equal(invalid.status, 400);
  assert.equal(invalid.requestID, mine);
  assert.equal((invalid.error as { request_id?: string }).request_id, mine);
  // A 404 (no route) and an /api error too.
  for (const [path, status] of [['/v1/no-such-thing', 404], ['/api/providers/no-such-provider', 404]] as const) {
    const res = await fetch(`${g.url}${path}`, { headers: { 'x-request-id': `probe-${status}-${path.length}` } });
    assert.equal(res.status, status, path);
    assert.equal(res.headers.get('x-request-id'), `probe-${status}-${path.length}`);
    const body = (await res.json()) as { error: { request_id?: string } };
    assert.equal(body.error.request_id, `probe-${status}-${path.length}`, path);
  }
  await eventually(() => {
    const [line] = accessLines(mine);
    assert.ok(line, 'the failed request has its access line');
    assert.equal(line.status, 400);
    assert.equal(line.level, 'info');
    assert.equal(typeof line.error, 'string');
    assert.notEqual(line.error, '');
    const [unauth] = accessLines(refused.requestID!);
    assert.equal(unauth?.status, 401);
    assert.equal(unauth?.error, (refused.error as { code?: string; type?: string }).code ?? (refused.error as { type?: string }).type);
  });
});

test('streams answer it in their headers; the log record of a stream has it', async () => {
  const id = 'stream-req-0001';
  const { data: stream, response } = await client({ 'x-bf-vk': VK, 'x-request-id': id })
    .chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true })
    .withResponse();
  assert.equal(response.headers.get('x-request-id'), id);
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.ok(text.length > 0);
  await eventually(async () => assert.equal((await logsOf(id)).length, 1), 5000);
});

test("a provider's own request id is relayed as x-upstream-request-id, never as the gateway's", async () => {
  const id = 'passthrough-0001';
  const res = await fetch(`${g.url}/openai_passthrough/v1/models`, { headers: { 'x-bf-vk': VK, 'x-request-id': id } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-request-id'), id);
  assert.match(res.headers.get('x-upstream-request-id') ?? '', /^req_mock/);
});

test("async jobs keep their submit's request id: the 202, every poll and the run's log record", async () => {
  const id = 'async-job-0001';
  const submit = await fetch(`${g.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': VK, 'x-request-id': id },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'later' }] }),
  });
  assert.equal(submit.status, 202);
  assert.equal(submit.headers.get('x-request-id'), id);
  const job = (await submit.json()) as { id: string; request_id: string };
  assert.equal(job.request_id, id);
  await eventually(async () => {
    const poll = await fetch(`${g.url}/v1/async/chat/completions/${job.id}`, { headers: { 'x-bf-vk': VK } });
    assert.equal(poll.status, 200);
    // The poll is a request of its own (its own id in the header); the job names its submit's.
    assert.notEqual(poll.headers.get('x-request-id'), id);
    const body = (await poll.json()) as { status: string; request_id: string };
    assert.equal(body.status, 'completed');
    assert.equal(body.request_id, id);
  }, 10_000);
  await eventually(async () => {
    const logs = await logsOf(id);
    assert.ok(logs.some((l) => l.status === 'success'), 'the run is logged under the submit id');
  }, 5000);
});

test('/api/logs refuses a request_id longer than any id the gateway keeps, naming the parameter', async () => {
  const res = await fetch(`${g.url}/api/logs?request_id=${'z'.repeat(129)}`);
  assert.equal(res.status, 400);
  const body = (await res.json()) as { error: { param: string; message: string } };
  assert.equal(body.error.param, 'request_id');
  assert.match(body.error.message, /128/);
});

/** The answer's head as sent: every x-request-id line in it (node's rawHeaders keep repeats apart). */
function idLines(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; ids: string[] }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const ids = res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1]!.toLowerCase() === 'x-request-id');
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode!, ids }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

test('each head names it once, whichever writer answers: a relayed chat answer, a stage refusal, a preflight, a 404, /api; HTTP/2 too', async () => {
  const chat = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const json = { 'content-type': 'application/json' };
  const cases: [string, string, Record<string, string>, string | undefined, number][] = [
    ['/v1/chat/completions', 'POST', { ...json, 'x-bf-vk': VK }, chat, 200],
    ['/v1/chat/completions', 'POST', json, chat, 401],
    ['/v1/chat/completions', 'OPTIONS', { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' }, undefined, 403],
    ['/v1/no-such-thing', 'GET', {}, undefined, 404],
    ['/api/providers', 'GET', {}, undefined, 200],
  ];
  for (const [path, method, headers, body, status] of cases) {
    const id = `head-${method}-${status}`;
    const got = await idLines(`${g.url}${path}`, method, { ...headers, 'x-request-id': id }, body);
    assert.equal(got.status, status, `${method} ${path}`);
    assert.deepEqual(got.ids, [id], `${method} ${path}`);
  }
  const session = http2Connect(g.url);
  try {
    const stream = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', ...json, 'x-bf-vk': VK, 'x-request-id': 'head-h2' });
    stream.end(chat);
    const [head] = (await once(stream, 'response')) as [Record<string, string | string[]>];
    stream.resume();
    await once(stream, 'end');
    assert.equal(head[':status'], 200);
    assert.equal(head['x-request-id'], 'head-h2');
  } finally {
    session.close();
  }
});

/** The answer's head as sent: its header lines in order, names lower-cased, the date's value left out. */
function headLines(url: string, method: string, headers: Record<string, string>, body?: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const lines: string[] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const name = res.rawHeaders[i]!.toLowerCase();
        lines.push(name === 'date' ? name : `${name}: ${res.rawHeaders[i + 1]}`);
      }
      res.resume();
      res.once('end', () => resolve(lines));
    });
    req.once('error', reject);
    req.end(body);
  });
}

test("a whole JSON answer's head: the id, its content type and length, then the answer's own headers, then node's", async () => {
  const chat = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const json = { 'content-type': 'application/json' };
  // The length's value varies (the answer's latency is in it): its line is read by its name.
  const lengthless = (lines: string[]) => lines.map((l) => (/^content-length: \d+$/.test(l) ? 'content-length' : l));
  const keepAlive = ['date', 'connection: keep-alive', 'keep-alive: timeout=65'];
  const ok = await headLines(`${g.url}/v1/chat/completions`, 'POST', { ...json, 'x-bf-vk': VK, 'x-request-id': 'head-order' }, chat);
  assert.deepEqual(lengthless(ok), ['x-request-id: head-order', 'content-type: application/json', 'content-length', ...keepAlive]);
  const refused = await headLines(`${g.url}/v1/chat/completions`, 'POST', { ...json, 'x-request-id': 'head-401' }, chat);
  assert.deepEqual(lengthless(refused), ['x-request-id: head-401', 'content-type: application/json', 'content-length', ...keepAlive]);
  // An answer's own header (here the close of a request whose body is not read) after the length.
  const missing = await headLines(`${g.url}/v1/no-such-thing`, 'GET', { 'x-request-id': 'head-404' });
  assert.deepEqual(lengthless(missing), ['x-request-id: head-404', 'content-type: application/json', 'content-length', 'connection: close', 'date']);
});
