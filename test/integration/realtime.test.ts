// Realtime over WebSocket: the official openai SDK's OpenAIRealtimeWS (which dials wss: only) through
// the gateway's TLS listener to the mock's OpenAI and Azure realtime endpoints; a browser-style
// client authenticating with the `openai-insecure-api-key.<key>` subprotocol; governance at the
// upgrade (keys, model rules, routing rules on request_type "realtime", the per-key session cap,
// rate limits on session starts, budgets charged per turn ending a session); bad frames ending only
// their session; one log record per session with its turns as children; and, on a second gateway
// over plain ws:, idle and maximum lengths, backpressure and the SIGTERM drain's close code 1001.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';
import { fetch as undiciFetch, type Agent } from 'undici';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startTlsGateway, type TlsGateway } from '../helpers/tls-gateway.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import type { TestCa } from '../helpers/test-ca.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const VK = 'sk-bf-realtime-vk-0123456789';
const MINI_VK = 'sk-bf-realtime-mini-0123456';
const BUDGET_VK = 'sk-bf-realtime-budget-01234';
const LIMITED_VK = 'sk-bf-realtime-limited-0123';
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];

let mock: MockProvider;
let gw: InProcessGateway;
let tls: TlsGateway;
let ca: TestCa;
let agent: Agent;

const grants = (models: string[]) => [
  { provider: 'openai', allowed_models: models, key_ids: ['*'], weight: 1 },
  { provider: 'gemini', allowed_models: ['gemini-live-2.5-flash'], key_ids: ['*'], weight: null },
  { provider: 'azure', allowed_models: models, key_ids: ['*'], weight: null },
  { provider: 'anthropic', allowed_models: ['claude-sonnet-4-5'], key_ids: ['*'], weight: null },
];

before(async () => {
  mock = await startMockProvider();
  tls = await startTlsGateway({
    providers: {
      ...mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }),
      azure: {
        keys: [{ name: 'azure-key', value: 'azure-provider-key', weight: 1, models: [], azure_key_config: { endpoint: `${mock.url}/azure`, deployments: { 'gpt-realtime': 'realtime-prod' } } }],
        network_config: { max_retries: 0 },
      },
    },
    governance: {
      budgets: [{ id: 'tiny', max_limit: 0.05, reset_duration: '1d' }],
      rate_limits: [{ id: 'two-starts', request_max_limit: 2, request_reset_duration: '1h' }],
      virtual_keys: [
        { id: 'rt-vk', name: 'rt-vk', value: VK, provider_configs: grants(['gpt-realtime', 'gpt-realtime-via-rule', 'nonexistent-realtime']) },
        { id: 'mini-vk', name: 'mini-vk', value: MINI_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-realtime-mini'], key_ids: ['*'], weight: 1 }] },
        { id: 'budget-vk', name: 'budget-vk', value: BUDGET_VK, budget_id: 'tiny', provider_configs: grants(['gpt-realtime']) },
        { id: 'limited-vk', name: 'limited-vk', value: LIMITED_VK, rate_limit_id: 'two-starts', provider_configs: grants(['gpt-realtime']) },
      ],
      routing_rules: [
        { name: 'realtime to azure', cel_expression: 'request_type == "realtime" && model == "gpt-realtime-via-rule"', targets: [{ provider: 'azure', model: 'gpt-realtime', weight: 1 }], priority: 1 },
      ],
    },
    websocket: { max_connections_per_user: 3, max_event_bytes: 64 * 1024 },
    client: { enable_logging: true, enforce_auth_on_inference: true },
  });
  ({ gw, ca, agent } = tls);
});

after(async () => {
  await tls?.stop();
  await mock?.close();
});

/** The SDK's realtime client on the gateway, trusting the test CA; `prefix` is the base URL's path. */
const sdk = (key: string, model: string, prefix = '/v1'): OpenAIRealtimeWS => tls.realtime(key, model, prefix);

interface Collected {
  events: { type: string; [k: string]: unknown }[];
  errors: { code?: string; message: string }[];
  closed: Promise<{ code: number; reason: string }>;
}

function collect(rt: OpenAIRealtimeWS): Collected {
  const c: Collected = { events: [], errors: [], closed: new Promise((resolve) => rt.socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }))) };
  rt.on('event', (e) => c.events.push(e as unknown as Collected['events'][number]));
  rt.on('error', (err) => c.errors.push({ code: (err as unknown as { error?: { code?: string } }).error?.code, message: err.message }));
  return c;
}

const opened = (rt: OpenAIRealtimeWS): Promise<void> =>
  new Promise((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
    rt.socket.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
  });

async function until(c: Collected, type: string, count = 1): Promise<void> {
  await eventually(() => assert.ok(c.events.filter((e) => e.type === type).length >= count, `waiting for ${count} × ${type}; got ${c.events.map((e) => e.type).join(', ')}`), 5000);
}

function say(rt: OpenAIRealtimeWS, text: string): void {
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
  rt.send({ type: 'response.create' });
}

/** A raw WebSocket handshake's outcome: 101 and the socket, or the refusal's status and body. */
function handshake(url: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<{ status: number; body: string; ws?: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers, ca: ca.pem });
    ws.once('open', () => resolve({ status: 101, body: '', ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

const wssUrl = (path: string) => `${gw.url.replace(/^https/, 'wss')}${path}`;

interface LogEntry {
  id: string;
  object: string;
  provider?: string;
  model?: string;
  status: string;
  virtual_key_id?: string;
  parent_request_id?: string;
  ttft?: number;
  cost?: number;
  token_usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  metadata?: Record<string, string>;
  error_details?: { code?: string };
}

async function logs(query: string): Promise<LogEntry[]> {
  const res = await undiciFetch(`${gw.url}/api/logs?limit=200&${query}`, { dispatcher: agent });
  return ((await res.json()) as { logs: LogEntry[] }).logs;
}

/** Waits until the sessions of earlier tests have all ended (their close handshakes are asynchronous). */
async function noSessions(): Promise<void> {
  await eventually(async () => {
    const text = await (await undiciFetch(`${gw.url}/metrics`, { dispatcher: agent })).text();
    assert.doesNotMatch(text, /skybridge_realtime_sessions_active\{[^}]*\} [1-9]/);
  }, 5000);
}

describe('realtime over WebSocket through the openai SDK (wss:)', () => {
  test('a text turn with audio out: the provider key is the gateway\'s, the events come back in order with usage', async () => {
    const rt = sdk(VK, 'openai/gpt-realtime');
    const c = collect(rt);
    await opened(rt);
    await until(c, 'session.created');
    say(rt, 'hello there gateway');
    await until(c, 'response.done');
    const transcript = c.events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('');
    assert.equal(transcript.trim(), 'Mock reply to: hello there gateway');
    assert.ok(c.events.some((e) => e.type === 'response.output_audio.delta'));
    const done = c.events.find((e) => e.type === 'response.done') as unknown as { response: { usage: { input_tokens: number; output_tokens: number } } };
    assert.deepEqual([done.response.usage.input_tokens, done.response.usage.output_tokens], [3, 6]);
    const upstream = mock.realtime.at(-1)!;
    assert.equal(upstream.path, '/openai/v1/realtime');
    assert.equal(upstream.query.model, 'gpt-realtime');
    // The provider got its own key; the virtual key never left the gateway.
    assert.equal(upstream.headers.authorization, 'Bearer sk-openai-test');
    assert.ok(!JSON.stringify(upstream.headers).includes(VK));
    assert.deepEqual(upstream.events.map((e) => e.type), ['conversation.item.create', 'response.create']);
    rt.close();
    assert.equal((await c.closed).code, 1000);
  });

  test('the /openai/v1 prefix serves the same socket, so an unchanged SDK needs only its base URL', async () => {
    const rt = sdk(VK, 'openai/gpt-realtime', '/openai/v1');
    const c = collect(rt);
    await opened(rt);
    say(rt, 'prefixed');
    await until(c, 'response.done');
    rt.close();
    await c.closed;
  });

  test('Azure OpenAI: the deployment of the key serves the model, authenticated with api-key', async () => {
    const rt = sdk(VK, 'azure/gpt-realtime');
    const c = collect(rt);
    await opened(rt);
    say(rt, 'via azure');
    await until(c, 'response.done');
    const upstream = mock.realtime.at(-1)!;
    assert.equal(upstream.path, '/azure/openai/v1/realtime');
    assert.equal(upstream.query.model, 'realtime-prod');
    assert.equal(upstream.headers['api-key'], 'azure-provider-key');
    rt.close();
    await c.closed;
  });

  test('a routing rule on request_type "realtime" picks the target', async () => {
    const rt = sdk(VK, 'gpt-realtime-via-rule');
    const c = collect(rt);
    await opened(rt);
    await until(c, 'session.created');
    assert.equal(mock.realtime.at(-1)!.path, '/azure/openai/v1/realtime');
    rt.close();
    await c.closed;
  });

  test('a browser-style client: the key as the openai-insecure-api-key subprotocol, and `realtime` is selected', async () => {
    const r = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { protocols: ['realtime', `openai-insecure-api-key.${VK}`] });
    assert.equal(r.status, 101);
    assert.equal(r.ws!.protocol, 'realtime');
    assert.ok(!JSON.stringify(mock.realtime.at(-1)!.headers).includes(VK));
    r.ws!.close();
  });
});

describe('Gemini Live behind the same client (translated)', () => {
  test('text: session.update configures the setup, a text turn comes back as output_text deltas with usage', async () => {
    const rt = sdk(VK, 'gemini/gemini-live-2.5-flash');
    const c = collect(rt);
    await opened(rt);
    await until(c, 'session.created');
    rt.send({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], instructions: 'Answer briefly.' } });
    await until(c, 'session.updated');
    say(rt, 'hello gemini');
    await until(c, 'response.done');
    const text = c.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(text.trim(), 'Mock reply to: hello gemini');
    const done = c.events.find((e) => e.type === 'response.done') as unknown as { response: { status: string; usage: { input_tokens: number; output_tokens: number } } };
    assert.equal(done.response.status, 'completed');
    assert.deepEqual([done.response.usage.input_tokens, done.response.usage.output_tokens], [2, 5]);
    const upstream = mock.realtime.at(-1)!;
    assert.equal(upstream.headers['x-goog-api-key'], 'sk-gemini-test');
    const setup = upstream.events[0] as unknown as { type: string; setup: { model: string; generationConfig: { responseModalities: string[] }; systemInstruction: { parts: { text: string }[] } } };
    assert.equal(setup.type, 'setup');
    assert.equal(setup.setup.model, 'models/gemini-live-2.5-flash');
    assert.deepEqual(setup.setup.generationConfig.responseModalities, ['TEXT']);
    assert.equal(setup.setup.systemInstruction.parts[0].text, 'Answer briefly.');
    assert.deepEqual(upstream.events.slice(1).map((e) => e.type), ['clientContent']);
    rt.close();
    await c.closed;
  });

  test('audio both ways: appended PCM16 and a commit are answered with audio deltas and a transcript', async () => {
    const rt = sdk(VK, 'gemini/gemini-live-2.5-flash');
    const c = collect(rt);
    await opened(rt);
    await until(c, 'session.created');
    // Half a second of 24 kHz PCM16, in two appends.
    for (let i = 0; i < 2; i++) rt.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(12_000).toString('base64') });
    rt.send({ type: 'input_audio_buffer.commit' });
    await until(c, 'response.done');
    assert.ok(c.events.some((e) => e.type === 'input_audio_buffer.committed'));
    const audio = c.events.filter((e) => e.type === 'response.output_audio.delta');
    assert.equal(audio.length, 6);
    assert.equal(Buffer.from(String(audio[0].delta), 'base64').length, 4800);
    const transcript = c.events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('');
    assert.equal(transcript.trim(), 'Mock reply to: [audio 500 ms]');
    const done = c.events.find((e) => e.type === 'response.done') as unknown as { response: { usage: { input_tokens: number; output_tokens: number } } };
    assert.deepEqual([done.response.usage.input_tokens, done.response.usage.output_tokens], [5, 6]);
    const sent = mock.realtime.at(-1)!.events.map((e) => e.type);
    assert.deepEqual(sent, ['setup', 'realtimeInput', 'realtimeInput', 'realtimeInput']);
    rt.close();
    await c.closed;
  });

  test('an event Gemini has no counterpart for gets an error event and the session goes on', async () => {
    const rt = sdk(VK, 'gemini/gemini-live-2.5-flash');
    const c = collect(rt);
    await opened(rt);
    rt.send({ type: 'conversation.item.delete', item_id: 'item_1' });
    await eventually(() => assert.ok(c.errors.some((e) => e.code === 'unsupported_for_provider')));
    say(rt, 'still fine');
    await until(c, 'response.done');
    rt.close();
    await c.closed;
  });
});

describe('governance at the upgrade', () => {
  test('no key: 401 with the gateway error object; an unknown key: 401', async () => {
    const none = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'));
    assert.equal(none.status, 401);
    assert.equal((JSON.parse(none.body) as { error: { type: string } }).error.type, 'authentication_error');
    const bad = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': 'sk-bf-nobody-000000000' } });
    assert.equal(bad.status, 401);
  });

  test('a model the key does not allow is 403; a provider without realtime is 400 naming the operation; no model is 400 naming the field', async () => {
    const denied = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': MINI_VK } });
    assert.equal(denied.status, 403);
    const unsupported = await handshake(wssUrl('/v1/realtime?model=anthropic/claude-sonnet-4-5'), { headers: { 'x-bf-vk': VK } });
    assert.equal(unsupported.status, 400);
    const body = JSON.parse(unsupported.body) as { error: { code: string; message: string }; extra_fields: { request_type: string } };
    assert.equal(body.error.code, 'unsupported_operation');
    assert.match(body.error.message, /realtime/);
    assert.equal(body.extra_fields.request_type, 'realtime');
    const noModel = await handshake(wssUrl('/v1/realtime'), { headers: { 'x-bf-vk': VK } });
    assert.equal(noModel.status, 400);
    assert.equal((JSON.parse(noModel.body) as { error: { param: string } }).error.param, 'model');
  });

  test('the provider refusing the model is answered with its status and message, never a key', async () => {
    const r = await handshake(wssUrl('/v1/realtime?model=openai/nonexistent-realtime'), { headers: { 'x-bf-vk': VK } });
    assert.equal(r.status, 404);
    const body = JSON.parse(r.body) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'upstream_refused');
    assert.match(body.error.message, /provider 'openai' refused the realtime session \(404\): The model 'nonexistent-realtime' does not exist/);
    assert.ok(!r.body.includes('sk-openai-test') && !r.body.includes(VK));
  });

  test('concurrent sessions per virtual key are capped (websocket.max_connections_per_user); closing one frees a place', async () => {
    await noSessions();
    const open: WebSocket[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': VK } });
      assert.equal(r.status, 101);
      open.push(r.ws!);
    }
    const fourth = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': VK } });
    assert.equal(fourth.status, 429);
    assert.equal((JSON.parse(fourth.body) as { error: { code: string } }).error.code, 'too_many_sessions');
    const closed = new Promise((r) => open[0].once('close', r));
    open[0].close();
    await closed;
    await eventually(async () => {
      const again = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': VK } });
      assert.equal(again.status, 101);
      open.push(again.ws!);
    });
    for (const ws of open) ws.close();
  });

  test('session starts count against the key\'s request rate limit', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': LIMITED_VK } });
      assert.equal(r.status, 101);
      r.ws!.close();
    }
    const third = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': LIMITED_VK } });
    assert.equal(third.status, 429);
    assert.equal((JSON.parse(third.body) as { error: { code: string } }).error.code, 'request_rate_limit_exceeded');
  });

  test('usage is charged per turn: a spent budget ends the session with an error event the SDK raises, then the next start is 402', async () => {
    const rt = sdk(BUDGET_VK, 'openai/gpt-realtime');
    const c = collect(rt);
    await opened(rt);
    // 3 + 6 tokens at a cent each: $0.09, over the $0.05 budget.
    say(rt, 'spend my budget');
    const closed = await c.closed;
    assert.equal(closed.code, 1008);
    assert.ok(c.events.some((e) => e.type === 'response.done'), 'the turn that spent the budget was delivered');
    const err = c.errors.find((e) => e.code === 'budget_exceeded');
    assert.ok(err, `errors: ${JSON.stringify(c.errors)}`);
    assert.match(err.message, /budget 'tiny' is exhausted/);
    const next = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': BUDGET_VK } });
    assert.equal(next.status, 402);
  });
});

describe('ephemeral client secrets (POST /v1/realtime/client_secrets)', () => {
  const api = (key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, fetch: ((url: string, init: object) => undiciFetch(url, { ...init, dispatcher: agent } as never)) as never });

  test('minted for the caller\'s virtual key, model and settings; a session opened with it gets the settings and is governed as the key', async () => {
    const before = Date.now();
    const secret = await api(VK).realtime.clientSecrets.create({ session: { type: 'realtime', model: 'openai/gpt-realtime', instructions: 'Speak like a pirate.' }, expires_after: { anchor: 'created_at', seconds: 60 } });
    assert.match(secret.value, /^ek_bf_/);
    assert.ok(Math.abs(secret.expires_at - Math.floor(before / 1000) - 60) <= 2);
    assert.equal((secret.session as { model: string }).model, 'openai/gpt-realtime');
    // Neither the virtual key nor a provider key is in it.
    const decoded = Buffer.from(secret.value.slice(6).split('.')[0], 'base64url').toString();
    assert.ok(!decoded.includes(VK) && !decoded.includes('sk-openai-test'), decoded);
    const rt = sdk(secret.value, 'openai/gpt-realtime');
    const c = collect(rt);
    await opened(rt);
    say(rt, 'ahoy');
    await until(c, 'response.done');
    const upstream = mock.realtime.at(-1)!;
    assert.deepEqual(upstream.events[0], { type: 'session.update', session: { type: 'realtime', instructions: 'Speak like a pirate.' } });
    assert.equal(upstream.headers.authorization, 'Bearer sk-openai-test');
    rt.close();
    await c.closed;
    // As a browser presents it: the subprotocol, with no model in the URL (the secret names it).
    const browser = await handshake(wssUrl('/v1/realtime'), { protocols: ['realtime', `openai-insecure-api-key.${secret.value}`] });
    assert.equal(browser.status, 101);
    browser.ws!.close();
  });

  test('refusals: another model, a tampered secret, no virtual key to mint with, a bad expiry', async () => {
    const secret = await api(VK).realtime.clientSecrets.create({ session: { type: 'realtime', model: 'openai/gpt-realtime' } });
    const other = await handshake(wssUrl('/v1/realtime?model=azure/gpt-realtime'), { headers: { authorization: `Bearer ${secret.value}` } });
    assert.equal(other.status, 403);
    const tampered = `${secret.value.slice(0, -3)}${secret.value.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const forged = await handshake(wssUrl('/v1/realtime'), { headers: { authorization: `Bearer ${tampered}` } });
    assert.equal(forged.status, 401);
    assert.equal((JSON.parse(forged.body) as { error: { code: string } }).error.code, 'invalid_client_secret');
    await assert.rejects(api('not-a-key').realtime.clientSecrets.create({ session: { type: 'realtime', model: 'openai/gpt-realtime' } }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 401);
    await assert.rejects(api(VK).realtime.clientSecrets.create({ session: { type: 'realtime', model: 'openai/gpt-realtime' }, expires_after: { anchor: 'created_at', seconds: 5 } }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 400 && /expires_after.seconds must be >= 10/.test(err.message));
  });
});

describe('bad frames end only their session, with an error event first', () => {
  const cases: { name: string; send: (ws: WebSocket) => void; code: string; close: number }[] = [
    { name: 'an unknown event type', send: (ws) => ws.send(JSON.stringify({ type: 'response.explode' })), code: 'unknown_event', close: 1008 },
    { name: 'a malformed JSON frame', send: (ws) => ws.send('{"type": "session.update",'), code: 'invalid_json', close: 1007 },
    { name: 'an event without a type', send: (ws) => ws.send('[1,2,3]'), code: 'invalid_event', close: 1007 },
    { name: 'a binary frame', send: (ws) => ws.send(Buffer.from([1, 2, 3])), code: 'binary_frame', close: 1003 },
    { name: 'an oversize frame', send: (ws) => ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(70_000) })), code: 'event_too_large', close: 1009 },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      await noSessions();
      const bystander = sdk(VK, 'openai/gpt-realtime');
      const seen = collect(bystander);
      await opened(bystander);
      const r = await handshake(wssUrl('/v1/realtime?model=openai/gpt-realtime'), { headers: { 'x-bf-vk': VK } });
      const ws = r.ws!;
      const events: { type: string; error?: { code: string; message: string } }[] = [];
      ws.on('message', (d: Buffer) => events.push(JSON.parse(d.toString()) as (typeof events)[number]));
      const closed = new Promise<number>((resolve) => ws.once('close', (code: number) => resolve(code)));
      await eventually(() => assert.ok(events.some((e) => e.type === 'session.created')));
      c.send(ws);
      assert.equal(await closed, c.close);
      const error = events.find((e) => e.type === 'error');
      assert.equal(error?.error?.code, c.code, JSON.stringify(events.map((e) => e.type)));
      assert.ok(error!.error!.message.length > 10);
      // The other session goes on.
      say(bystander, 'still here');
      await until(seen, 'response.done');
      bystander.close();
      await seen.closed;
    });
  }
});

describe('request logs', () => {
  test('one record per session (turn sums, end, audio seconds) and one child record per turn', async () => {
    const rt = sdk(VK, 'openai/gpt-realtime');
    const c = collect(rt);
    await opened(rt);
    say(rt, 'first turn');
    await until(c, 'response.done');
    say(rt, 'the second turn');
    await until(c, 'response.done', 2);
    rt.close();
    await c.closed;
    let session: LogEntry | undefined;
    await eventually(async () => {
      session = (await logs('objects=realtime')).find((e) => e.metadata?.realtime_turns === '2');
      assert.ok(session, 'no two-turn realtime session logged yet');
    }, 5000);
    assert.equal(session!.provider, 'openai');
    assert.equal(session!.model, 'gpt-realtime');
    assert.equal(session!.virtual_key_id, 'rt-vk');
    assert.equal(session!.status, 'success');
    // 2 + 5 and 3 + 6 tokens.
    assert.equal(session!.token_usage.total_tokens, 16);
    assert.ok(Math.abs((session!.cost ?? 0) - 0.16) < 1e-9, `cost ${session!.cost}`);
    assert.equal(session!.metadata!.realtime_end, 'client');
    // Each word is 0.1 s of audio: 5 + 6 words.
    assert.equal(session!.metadata!.audio_out_seconds, '1.1');
    assert.ok((session!.ttft ?? -1) >= 0);
    const turns = await logs(`parent_request_id=${session!.id}`);
    assert.equal(turns.length, 2);
    assert.deepEqual(turns.map((t) => t.token_usage.total_tokens).sort(), [7, 9]);
    assert.ok(turns.every((t) => t.object === 'realtime.response' && t.ttft !== undefined));
  });

  test('metrics count active sessions and events', async () => {
    const text = await (await undiciFetch(`${gw.url}/metrics`, { dispatcher: agent })).text();
    assert.match(text, /skybridge_realtime_events_total\{direction="client",provider="openai"\} [1-9]/);
    assert.match(text, /skybridge_realtime_events_total\{direction="server",provider="openai"\} [1-9]/);
    assert.match(text, /skybridge_realtime_sessions_closed_total\{reason="bad_frame"\} [1-9]/);
    await noSessions();
  });
});

describe('session bounds and shutdown (plain ws:, behind a TLS-terminating ingress)', () => {
  let plain: InProcessGateway;
  let plainMock: MockProvider;
  before(async () => {
    plainMock = await startMockProvider();
    plain = await startGateway({
      providers: { openai: mockProvider(plainMock.url, 'openai') },
      websocket: { idle_timeout_seconds: 1.5, max_session_seconds: 30, max_buffered_bytes: 256 * 1024, backpressure_timeout_seconds: 0.3 },
    });
  });
  after(async () => {
    await plain?.stop();
    await plainMock?.close();
  });
  const url = () => `${plain.url.replace(/^http/, 'ws')}/v1/realtime?model=openai/gpt-realtime`;

  test('an idle session is ended with an error event naming the timeout', async () => {
    const ws = new WebSocket(url());
    const events: { type: string; error?: { code: string } }[] = [];
    ws.on('message', (d: Buffer) => events.push(JSON.parse(d.toString()) as (typeof events)[number]));
    const code = await new Promise<number>((resolve) => ws.once('close', (c: number) => resolve(c)));
    assert.equal(code, 1000);
    assert.equal(events.find((e) => e.type === 'error')?.error?.code, 'session_idle_timeout');
  });

  test('a client that stops reading: the provider is not read for it, and it is disconnected', async () => {
    const ws = new WebSocket(url());
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'flood 300' }] } }));
    ws.send(JSON.stringify({ type: 'response.create' }));
    // Stop reading: the kernel buffers fill, then the gateway's send buffer.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await eventually(async () => {
      const text = await (await fetch(`${plain.url}/metrics`)).text();
      assert.match(text, /skybridge_realtime_sessions_closed_total\{reason="backpressure"\} 1/);
    }, 20_000);
    ws.terminate();
    await closed;
    // The provider's socket was closed with the session.
    await eventually(() => assert.ok(plainMock.realtime.at(-1)!.closed));
  });

  test('SIGTERM (drain): a session between turns is closed at once with 1001', async () => {
    const ws = new WebSocket(url());
    await new Promise((r) => ws.once('open', r));
    const code = new Promise<number>((resolve) => ws.once('close', (c: number) => resolve(c)));
    const started = Date.now();
    await plain.gateway.drain();
    assert.equal(await code, 1001);
    assert.ok(Date.now() - started < patience(2500), 'the drain did not wait for the grace period');
  });
});
