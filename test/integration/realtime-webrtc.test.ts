// WebRTC calls (POST /v1/realtime/calls) with the gateway as the client's peer: a real WebRTC client
// on loopback (node-datachannel, as a browser's RTCPeerConnection would offer) calls through the
// official openai SDK's realtime.calls and through plain application/sdp; the mock provider answers
// the gateway's own offer with a real peer. Audio RTP is counted both ways, the `oai-events` data
// channel is relayed, usage is charged and logged, model rules refuse before the offer is answered,
// a spent budget ends the call with an error event, hangup ends it at the provider too, the SIGTERM
// drain ends it, bad offers are 400s naming the field, and no provider key reaches the client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { mockProvider, mockProviders } from '../helpers/providers.ts';
import { ClientPeer, closeAllPeers, OPUS_PT, type RealtimeEvent } from '../helpers/webrtc-client.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import type { RealtimeSessionsAnswer } from '../../proxy/src/api/answers.ts';

const VK = 'sk-bf-webrtc-vk-0123456789ab';
const MINI_VK = 'sk-bf-webrtc-mini-0123456789';
const BUDGET_VK = 'sk-bf-webrtc-budget-01234567';
const CENT_PER_TOKEN = [{ model_pattern: '*', match_type: 'wildcard', input_cost_per_token: 0.01, output_cost_per_token: 0.01 }];
const WEBRTC = { webrtc: { bind_address: '127.0.0.1' } };

let mock: MockProvider;
let gw: InProcessGateway;

const grants = (models: string[]) => [
  { provider: 'openai', allowed_models: models, key_ids: ['*'], weight: 1 },
  { provider: 'gemini', allowed_models: ['gemini-live-2.5-flash'], key_ids: ['*'], weight: null },
  { provider: 'azure', allowed_models: models, key_ids: ['*'], weight: null },
];

before(async () => {
  mock = await startMockProvider();
  gw = await startGateway({
    providers: {
      ...mockProviders(mock.url, { openai: { pricing_overrides: CENT_PER_TOKEN } }),
      azure: {
        keys: [{ name: 'azure-key', value: 'azure-provider-key', weight: 1, models: [], azure_key_config: { endpoint: `${mock.url}/azure`, deployments: { 'gpt-realtime': 'realtime-prod' } } }],
        network_config: { max_retries: 0 },
      },
    },
    governance: {
      budgets: [{ id: 'tiny', max_limit: 0.05, reset_duration: '1d' }],
      virtual_keys: [
        { id: 'rtc-vk', name: 'rtc-vk', value: VK, provider_configs: grants(['gpt-realtime']) },
        { id: 'mini-vk', name: 'mini-vk', value: MINI_VK, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-realtime-mini'], key_ids: ['*'], weight: 1 }] },
        { id: 'budget-vk', name: 'budget-vk', value: BUDGET_VK, budget_id: 'tiny', provider_configs: grants(['gpt-realtime']) },
      ],
    },
    websocket: WEBRTC,
    client: { enable_logging: true, enforce_auth_on_inference: true },
  });
});

after(async () => {
  closeAllPeers();
  await gw?.stop();
  await mock?.close();
});

const sdk = (key: string, prefix = '/v1') => new OpenAI({ baseURL: `${gw.url}${prefix}`, apiKey: key, maxRetries: 0 });

async function until(peer: ClientPeer, type: string, count = 1): Promise<RealtimeEvent> {
  await eventually(() => assert.ok(peer.events.filter((e) => e.type === type).length >= count, `waiting for ${count} × ${type}; got ${peer.events.map((e) => e.type).join(', ')}`), 8000);
  return peer.events.filter((e) => e.type === type)[count - 1];
}

function say(peer: ClientPeer, text: string): void {
  peer.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
  peer.send({ type: 'response.create' });
}

/** POST an application/sdp offer; the answer's status, headers and body. */
async function postSdp(path: string, sdp: string, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/sdp', ...headers }, body: sdp });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** A connected call: the peer has the gateway's answer and its events channel is open with the session created. */
async function call(peer: ClientPeer, answer: string): Promise<void> {
  peer.accept(answer);
  await peer.opened;
  await until(peer, 'session.created');
}

interface LogEntry {
  id: string;
  object: string;
  provider?: string;
  model?: string;
  status: string;
  virtual_key_id?: string;
  cost?: number;
  ttft?: number;
  token_usage: { total_tokens: number };
  metadata?: Record<string, string>;
}

async function logs(query: string): Promise<LogEntry[]> {
  const res = await fetch(`${gw.url}/api/logs?limit=200&${query}`);
  return ((await res.json()) as { logs: LogEntry[] }).logs;
}

describe('WebRTC calls through the gateway', () => {
  test('the SDK\'s realtime.calls: SDP answered by the gateway, audio both ways, events relayed, usage charged and logged, hangup', async () => {
    const peer = new ClientPeer();
    const offer = await peer.offer();
    const calls = mock.webrtc.length;
    const res = await sdk(VK).realtime.calls.create({ sdp: offer, session: { type: 'realtime', model: 'openai/gpt-realtime', instructions: 'be brief' } });
    assert.equal(res.status, 201);
    const location = res.headers.get('location') ?? '';
    assert.match(location, /^\/v1\/realtime\/calls\/rtc_bf_[0-9a-f]+$/);
    const answer = await res.text();
    assert.match(answer, /^v=0/);
    // The gateway's own peer answered: its fingerprint, not the provider's.
    const upstream = mock.webrtc[calls];
    assert.ok(upstream, 'the provider got no offer');
    const fingerprint = (sdp: string) => /a=fingerprint:\S+ (\S+)/.exec(sdp)?.[1];
    assert.notEqual(fingerprint(answer), fingerprint(upstream.answer));
    assert.equal(fingerprint(upstream.offer) === fingerprint(offer), false, 'the provider got the client\'s offer instead of the gateway\'s');
    // The provider got the gateway's key and its own model name; the key went nowhere else.
    assert.equal(upstream.headers.authorization, 'Bearer sk-openai-test');
    assert.equal(upstream.session.model, 'gpt-realtime');
    assert.equal(upstream.session.instructions, 'be brief');
    assert.ok(!JSON.stringify(upstream.headers).includes(VK));
    const everything = `${answer}\n${JSON.stringify([...res.headers])}`;
    assert.ok(!everything.includes('sk-openai-test'), 'the provider key reached the client');

    await call(peer, answer);
    // 25 frames of 20 ms from the client's microphone reach the provider.
    peer.sendAudio(25);
    await eventually(() => assert.equal(upstream.rtpIn, 25), 5000);
    peer.send({ type: 'input_audio_buffer.commit' });
    peer.send({ type: 'response.create' });
    const done = (await until(peer, 'response.done')) as unknown as { response: { usage: { input_tokens: number; output_tokens: number } } };
    // 500 ms of audio is 5 input tokens; "Mock reply to: [audio 500 ms]" is 6 words.
    assert.deepEqual([done.response.usage.input_tokens, done.response.usage.output_tokens], [5, 6]);
    const transcript = peer.events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('');
    assert.equal(transcript.trim(), 'Mock reply to: [audio 500 ms]');
    // The reply's audio (5 frames a word) comes back as RTP, with the client's payload type.
    await eventually(() => assert.equal(peer.rtp.length, 30), 5000);
    assert.equal(upstream.rtpOut, 30);
    assert.ok(peer.rtp.every((p) => p.pt === OPUS_PT));
    await until(peer, 'output_audio_buffer.stopped');

    // Listed with the WebSocket sessions, for /api and the dashboard's live page, as a WebRTC call.
    const listed = (await (await fetch(`${gw.url}/api/realtime/sessions`)).json()) as RealtimeSessionsAnswer;
    const open = listed.open.find((s) => s.virtual_key_id === 'rtc-vk');
    assert.equal(open?.transport, 'webrtc');
    assert.equal(open?.turns, 1);

    const callId = location.split('/').at(-1)!;
    await sdk(VK).realtime.calls.hangup(callId);
    await peer.closed;
    // The provider's call was hung up too.
    await eventually(() => assert.ok(upstream.closed && upstream.hungUp, 'the provider call is still open'), 5000);

    let session: LogEntry | undefined;
    await eventually(async () => {
      session = (await logs('objects=realtime')).find((e) => e.metadata?.transport === 'webrtc' && e.metadata.rtp_packets_in === '25');
      assert.ok(session, 'no WebRTC session logged yet');
    }, 5000);
    assert.equal(session!.virtual_key_id, 'rtc-vk');
    assert.equal(session!.model, 'gpt-realtime');
    assert.equal(session!.token_usage.total_tokens, 11);
    assert.ok(Math.abs((session!.cost ?? 0) - 0.11) < 1e-9, `cost ${session!.cost}`);
    assert.equal(session!.metadata!.rtp_packets_out, '30');
    assert.equal(session!.metadata!.realtime_end, 'client');
    assert.equal(session!.metadata!.audio_in_seconds, '0.5');
    assert.equal(session!.metadata!.audio_out_seconds, '0.6');
    assert.ok((session!.ttft ?? -1) >= 0, 'no time to first audio');
    const turns = await logs(`parent_request_id=${session!.id}`);
    assert.equal(turns.length, 1);
    assert.equal(turns[0].token_usage.total_tokens, 11);
    const ended = (await (await fetch(`${gw.url}/api/realtime/sessions`)).json()) as RealtimeSessionsAnswer;
    assert.equal(ended.ended.find((s) => s.id === session!.id)?.transport, 'webrtc');
  });

  test('an application/sdp offer on the /openai/v1 prefix, data channel only: a text turn, and the session\'s model held', async () => {
    const peer = new ClientPeer({ audio: false });
    const res = await postSdp('/openai/v1/realtime/calls?model=openai/gpt-realtime', await peer.offer(), { 'x-bf-vk': VK });
    assert.equal(res.status, 201, res.body);
    assert.equal(res.headers.get('content-type'), 'application/sdp');
    assert.match(res.headers.get('location') ?? '', /^\/openai\/v1\/realtime\/calls\/rtc_bf_/);
    await call(peer, res.body);
    // Another model is refused on the channel; the session goes on.
    peer.send({ type: 'session.update', event_id: 'evt_swap', session: { type: 'realtime', model: 'openai/gpt-realtime-mini' } });
    const refused = (await until(peer, 'error')) as unknown as { error: { code: string; param: string; event_id: string } };
    assert.deepEqual([refused.error.code, refused.error.param, refused.error.event_id], ['model_not_allowed', 'session.model', 'evt_swap']);
    // Its own model by the gateway's name reaches the provider by the provider's.
    peer.send({ type: 'session.update', session: { type: 'realtime', model: 'openai/gpt-realtime', output_modalities: ['text'] } });
    await until(peer, 'session.updated');
    say(peer, 'hello over webrtc');
    await until(peer, 'response.done');
    const text = peer.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(text.trim(), 'Mock reply to: hello over webrtc');
    const upstream = mock.webrtc.at(-1)!;
    assert.deepEqual(upstream.events.map((e) => e.type), ['session.update', 'conversation.item.create', 'response.create']);
    assert.equal((upstream.events[0].session as { model: string }).model, 'gpt-realtime');
    peer.close();
    await eventually(() => assert.ok(upstream.closed), 5000);
  });

  test('Azure OpenAI: the offer goes to the resource\'s /openai/v1/realtime/calls with api-key and the deployment', async () => {
    const peer = new ClientPeer();
    const res = await postSdp('/v1/realtime/calls?model=azure/gpt-realtime', await peer.offer(), { authorization: `Bearer ${VK}` });
    assert.equal(res.status, 201, res.body);
    const upstream = mock.webrtc.at(-1)!;
    assert.equal(upstream.path, '/azure/openai/v1/realtime/calls');
    assert.equal(upstream.headers['api-key'], 'azure-provider-key');
    assert.equal(upstream.session.model, 'realtime-prod');
    await call(peer, res.body);
    say(peer, 'via azure');
    await until(peer, 'response.done');
    // "Mock reply to: via azure": 5 words of 5 frames.
    await eventually(() => assert.equal(peer.rtp.length, 25), 5000);
    peer.close();
  });

  test('a client secret stands for its key and model', async () => {
    const minted = await fetch(`${gw.url}/v1/realtime/client_secrets`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': VK }, body: JSON.stringify({ session: { type: 'realtime', model: 'openai/gpt-realtime', output_modalities: ['text'] } }) });
    const secret = ((await minted.json()) as { value: string }).value;
    const peer = new ClientPeer({ audio: false });
    const res = await postSdp('/v1/realtime/calls', await peer.offer(), { authorization: `Bearer ${secret}` });
    assert.equal(res.status, 201, res.body);
    assert.deepEqual(mock.webrtc.at(-1)!.session.output_modalities, ['text']);
    await call(peer, res.body);
    peer.close();
  });
});

describe('governance before the answer, and bad offers', () => {
  test('a model the key may not use is a 403 before the offer is answered: no call reaches the provider', async () => {
    const peer = new ClientPeer();
    const before = mock.webrtc.length;
    const res = await postSdp('/v1/realtime/calls?model=openai/gpt-realtime', await peer.offer(), { 'x-bf-vk': MINI_VK });
    assert.equal(res.status, 403);
    assert.match(res.body, /gpt-realtime/);
    assert.equal(mock.webrtc.length, before);
    peer.close();
  });

  test('no virtual key is a 401', async () => {
    const peer = new ClientPeer();
    const res = await postSdp('/v1/realtime/calls?model=openai/gpt-realtime', await peer.offer(), {});
    assert.equal(res.status, 401);
    peer.close();
  });

  test('bad offers are 400s naming the field and why', async () => {
    const peer = new ClientPeer();
    const good = await peer.offer();
    peer.close();
    const cases: [string, string | FormData, Record<string, string>, string, RegExp][] = [
      ['not SDP', 'hello', { 'content-type': 'application/sdp' }, 'sdp', /v=0/],
      ['no data channel', good.replace(/m=application[\s\S]*$/, ''), { 'content-type': 'application/sdp' }, 'sdp', /data channel/],
      ['no Opus', good.replace(/opus\/48000\/2/g, 'PCMU/8000'), { 'content-type': 'application/sdp' }, 'sdp', /Opus/],
      ['JSON body', JSON.stringify({ sdp: good }), { 'content-type': 'application/json' }, 'sdp', /application\/sdp/],
    ];
    for (const [what, body, headers, param, message] of cases) {
      const res = await fetch(`${gw.url}/v1/realtime/calls?model=openai/gpt-realtime`, { method: 'POST', headers: { 'x-bf-vk': VK, ...headers }, body });
      const err = ((await res.json()) as { error: { param: string; message: string } }).error;
      assert.equal(res.status, 400, what);
      assert.equal(err.param, param, what);
      assert.match(err.message, message, what);
    }
    const noSdp = new FormData();
    noSdp.set('session', JSON.stringify({ model: 'openai/gpt-realtime' }));
    const badSession = new FormData();
    badSession.set('sdp', good);
    badSession.set('session', '{not json');
    const wrongType = new FormData();
    wrongType.set('sdp', good);
    wrongType.set('session', JSON.stringify({ type: 'transcription', model: 'openai/gpt-realtime' }));
    for (const [what, form, param] of [['no sdp part', noSdp, 'sdp'], ['session not JSON', badSession, 'session'], ['session.type', wrongType, 'session.type']] as const) {
      const res = await fetch(`${gw.url}/v1/realtime/calls`, { method: 'POST', headers: { 'x-bf-vk': VK }, body: form });
      const err = ((await res.json()) as { error: { param: string } }).error;
      assert.equal(res.status, 400, what);
      assert.equal(err.param, param, what);
    }
  });

  test('Gemini over WebRTC is a 400 naming the reason (its Live API would need Opus decoding)', async () => {
    const peer = new ClientPeer();
    const res = await postSdp('/v1/realtime/calls?model=gemini/gemini-live-2.5-flash', await peer.offer(), { 'x-bf-vk': VK });
    peer.close();
    assert.equal(res.status, 400);
    const err = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
    assert.equal(err.code, 'unsupported_operation');
    assert.match(err.message, /Opus decoding/);
  });

  test('hangup of an unknown call is a 404; accept, reject and refer are refused by name', async () => {
    const hangup = await fetch(`${gw.url}/v1/realtime/calls/rtc_bf_nosuchcall/hangup`, { method: 'POST', headers: { 'x-bf-vk': VK } });
    assert.equal(hangup.status, 404);
    for (const verb of ['accept', 'reject', 'refer']) {
      const res = await fetch(`${gw.url}/v1/realtime/calls/rtc_bf_nosuchcall/${verb}`, { method: 'POST', headers: { 'x-bf-vk': VK, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 400, verb);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, new RegExp(`^${verb} is for incoming SIP calls`));
    }
  });

  test('a spent budget ends the call with an error event on the data channel, and the provider\'s call with it', async () => {
    const peer = new ClientPeer();
    const res = await postSdp('/v1/realtime/calls?model=openai/gpt-realtime', await peer.offer(), { 'x-bf-vk': BUDGET_VK });
    assert.equal(res.status, 201, res.body);
    await call(peer, res.body);
    const upstream = mock.webrtc.at(-1)!;
    // 3 + 6 tokens at a cent each: $0.09, over the $0.05 budget.
    say(peer, 'spend my budget');
    await until(peer, 'response.done');
    const err = (await until(peer, 'error')) as unknown as { error: { code: string; message: string } };
    assert.equal(err.error.code, 'budget_exceeded');
    assert.match(err.error.message, /budget 'tiny' is exhausted/);
    await peer.closed;
    await eventually(() => assert.ok(upstream.closed, 'the provider call is still open'), 5000);
    // The next call is refused before it is answered.
    const again = new ClientPeer();
    const next = await postSdp('/v1/realtime/calls?model=openai/gpt-realtime', await again.offer(), { 'x-bf-vk': BUDGET_VK });
    again.close();
    assert.equal(next.status, 402);
  });

  test('metrics count relayed media packets and events', async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(text, /skybridge_realtime_media_packets_total\{direction="client",provider="openai"\} [1-9]/);
    assert.match(text, /skybridge_realtime_media_packets_total\{direction="server",provider="openai"\} [1-9]/);
    assert.match(text, /skybridge_realtime_events_total\{direction="server",provider="openai"\} [1-9]/);
  });
});

describe('shutdown', () => {
  let plain: InProcessGateway;
  let plainMock: MockProvider;
  before(async () => {
    plainMock = await startMockProvider();
    plain = await startGateway({ providers: { openai: mockProvider(plainMock.url, 'openai') }, websocket: WEBRTC, client: { enable_logging: false } });
  });
  after(async () => {
    await plain?.stop();
    await plainMock?.close();
  });

  test('SIGTERM (drain): a call between turns is ended at once with an error event naming the shutdown', async () => {
    const peer = new ClientPeer();
    const res = await fetch(`${plain.url}/v1/realtime/calls?model=openai/gpt-realtime`, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: await peer.offer() });
    assert.equal(res.status, 201);
    await call(peer, await res.text());
    const upstream = plainMock.webrtc.at(-1)!;
    const started = Date.now();
    await plain.gateway.drain();
    assert.ok(Date.now() - started < patience(2500), 'the drain did not end the call at once');
    await eventually(() => assert.equal((peer.events.find((e) => e.type === 'error') as unknown as { error: { code: string } } | undefined)?.error.code, 'gateway_shutdown'), 5000);
    await peer.closed;
    await eventually(() => assert.ok(upstream.closed), 5000);
  });
});
