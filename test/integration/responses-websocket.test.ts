// The Responses API's WebSocket mode on /v1/responses through the official openai SDK's ResponsesWS:
// each response.create runs the normal responses pipeline (a provider's native Responses API, or one
// bridged over chat), streams its events back as frames, is governed (a bad key is refused at the
// handshake, each response admitted against the key's rate limit) and logged as a request; the
// response cache answers a repeated request (direct mode, the cache key from the handshake's
// x-bf-cache-key), and the connection's listing counts the hit as a turn that spent nothing; a bad
// frame ends only that socket with an error event.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { WebSocket } from 'ws';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import type { RealtimeSessionsAnswer } from '../../proxy/src/api/answers.ts';

const VK = 'sk-bf-responses-ws-vk-012345';
const LIMITED_VK = 'sk-bf-responses-ws-lim-01234';

let mock: MockProvider;
let gw: InProcessGateway;

before(async () => {
  mock = await startMockProvider();
  const grants = [
    { provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 },
    { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: null },
  ];
  gw = await startGateway({
    providers: mockProviders(mock.url),
    governance: {
      rate_limits: [{ id: 'two', request_max_limit: 2, request_reset_duration: '1h' }],
      virtual_keys: [
        { id: 'ws-vk', name: 'ws-vk', value: VK, provider_configs: grants },
        { id: 'ws-lim', name: 'ws-lim', value: LIMITED_VK, rate_limit_id: 'two', provider_configs: grants },
      ],
    },
    vector_store: { enabled: true, type: 'sqlite' },
    plugins: [{ name: 'semantic_cache', enabled: true, config: { dimension: 1, ttl: '5m' } }],
    client: { enable_logging: true, enforce_auth_on_inference: true },
  });
});

after(async () => {
  await gw?.stop();
  await mock?.close();
});

interface Frame {
  type: string;
  delta?: string;
  message?: string;
  code?: string;
  response?: { output_text?: string; output?: { content?: { text?: string }[] }[]; extra_fields?: { cache_debug?: { cache_hit: boolean } } };
}

/** The SDK's Responses WebSocket client on the gateway, with the handshake's extra headers. */
function connect(key: string, headers: Record<string, string> = {}): { ws: ResponsesWS; frames: Frame[]; errors: string[]; opened: Promise<void>; closed: Promise<number> } {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  const ws = new ResponsesWS(client);
  const frames: Frame[] = [];
  const errors: string[] = [];
  ws.on('event', (e) => frames.push(e as unknown as Frame));
  ws.on('error', (err) => errors.push(err.message));
  const socket = ws.socket.platformSocket;
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code: number) => resolve(code)));
  return { ws, frames, errors, opened, closed };
}

/** The open Responses WebSocket connection as GET /api/realtime/sessions lists it (one at a time in this file). */
const listedConnection = async () => ((await (await fetch(`${gw.url}/api/realtime/sessions`)).json()) as RealtimeSessionsAnswer).open.find((v) => v.transport === 'responses_ws');
const completed = (frames: Frame[]) => frames.filter((f) => f.type === 'response.completed');
const textOf = (f: Frame) => f.response?.output?.flatMap((o) => o.content ?? []).map((c) => c.text ?? '').join('') ?? '';

describe('Responses over WebSocket', () => {
  test('response.create streams the response events back, twice on one socket, natively and bridged over chat', async () => {
    const c = connect(VK);
    await c.opened;
    c.ws.send({ type: 'response.create', model: 'openai/gpt-4o', input: 'first question' });
    await eventually(() => assert.equal(completed(c.frames).length, 1), 5000);
    c.ws.send({ type: 'response.create', model: 'anthropic/claude-sonnet-4-5', input: 'second question' });
    await eventually(() => assert.equal(completed(c.frames).length, 2), 5000);
    const [first, second] = completed(c.frames);
    assert.equal(textOf(first), 'Mock reply to: first question');
    assert.equal(textOf(second), 'Mock reply to: second question');
    const deltas = c.frames.filter((f) => f.type === 'response.output_text.delta').map((f) => f.delta).join('');
    assert.equal(deltas, 'Mock reply to: first questionMock reply to: second question');
    assert.deepEqual(mock.requests.slice(-2).map((r) => r.path), ['/openai/v1/responses', '/anthropic/v1/messages']);
    assert.ok(!JSON.stringify(mock.requests.slice(-2).map((r) => r.headers)).includes(VK));
    c.ws.close();
    await c.closed;
    await eventually(async () => {
      const logs = ((await (await fetch(`${gw.url}/api/logs?limit=50&virtual_key_ids=ws-vk`)).json()) as { logs: { object: string; model: string }[] }).logs;
      assert.ok(logs.some((l) => l.model === 'claude-sonnet-4-5'), JSON.stringify(logs));
    }, 5000);
  });

  test('the response cache answers the same request again (direct, cache key from the handshake)', async () => {
    const c = connect(VK, { 'x-bf-cache-key': `ws-${Date.now()}` });
    await c.opened;
    const before = mock.requests.length;
    c.ws.send({ type: 'response.create', model: 'openai/gpt-4o', input: 'cache me over a socket' });
    await eventually(() => assert.equal(completed(c.frames).length, 1), 5000);
    await eventually(async () => assert.equal((await listedConnection())?.turns, 1));
    const missCost = (await listedConnection())!.cost;
    // The entry is written once the answer is out.
    await new Promise((r) => setTimeout(r, 300));
    c.ws.send({ type: 'response.create', model: 'openai/gpt-4o', input: 'cache me over a socket' });
    await eventually(() => assert.equal(completed(c.frames).length, 2), 5000);
    const [miss, hit] = completed(c.frames);
    assert.equal(miss.response?.extra_fields?.cache_debug?.cache_hit, false);
    assert.equal(hit.response?.extra_fields?.cache_debug?.cache_hit, true);
    assert.equal(textOf(hit), 'Mock reply to: cache me over a socket');
    assert.equal(mock.requests.length - before, 1, 'the second response came from the cache');
    // The connection's listing counts both responses; the hit spent nothing, so the cost is the miss's.
    await eventually(async () => assert.equal((await listedConnection())?.turns, 2));
    const view = (await listedConnection())!;
    assert.ok(missCost > 0, 'the miss was priced');
    assert.equal(view.cost, missCost);
    c.ws.close();
    await c.closed;
  });

  test('governance: a bad key is refused at the handshake; each response counts against the rate limit', async () => {
    const status = await new Promise<number>((resolve) => {
      const raw = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: 'Bearer sk-bf-nobody-000000000' } });
      raw.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      raw.once('error', () => undefined);
    });
    assert.equal(status, 401);
    const c = connect(LIMITED_VK);
    await c.opened;
    for (const input of ['one', 'two', 'three']) c.ws.send({ type: 'response.create', model: 'openai/gpt-4o', input });
    await eventually(() => assert.ok(c.frames.some((f) => f.type === 'error')), 5000);
    assert.equal(completed(c.frames).length, 2);
    const err = c.frames.find((f) => f.type === 'error')!;
    assert.equal(err.code, 'request_rate_limit_exceeded');
    assert.match(err.message ?? '', /rate limit 'two' reached/);
    c.ws.close();
    await c.closed;
  });

  test('a frame that is not response.create ends the socket with an error event (1008)', async () => {
    const c = connect(VK);
    await c.opened;
    c.ws.sendRaw(JSON.stringify({ type: 'response.explode' }));
    assert.equal(await c.closed, 1008);
    const err = c.frames.find((f) => f.type === 'error');
    assert.equal(err?.code, 'unknown_event');
  });
});
