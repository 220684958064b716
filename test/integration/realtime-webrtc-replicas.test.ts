// A WebRTC call's hangup reaching another replica: two gateways sharing a real Redis; a call answered
// by one is hung up through the other (the SDK's realtime.calls.hangup), which tells the holder on
// Redis; the call ends at the client and at the provider, and the hangup answers once it has.
// Another key's hangup is a 404 on every replica; a call whose holder does not answer is a 409 naming
// the holder.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startRedis, redisCommand, type RunningRedis } from '../helpers/redis.ts';
import { ClientPeer, closeAllPeers } from '../helpers/webrtc-client.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const VK = 'sk-bf-rtc-replica-0123456789ab';
const OTHER_VK = 'sk-bf-rtc-other-0123456789abc';
const PREFIX = 'rtcrep:';

let mock: MockProvider;
let redis: RunningRedis;
let a: InProcessGateway;
let b: InProcessGateway;

before(async () => {
  [mock, redis] = await Promise.all([startMockProvider(), startRedis()]);
  const grant = [{ provider: 'openai', allowed_models: ['gpt-realtime'], key_ids: ['*'], weight: 1 }];
  const config = {
    providers: mockProviders(mock.url),
    governance: {
      virtual_keys: [
        { id: 'replica-vk', name: 'replica-vk', value: VK, provider_configs: grant },
        { id: 'other-vk', name: 'other-vk', value: OTHER_VK, provider_configs: grant },
      ],
    },
    websocket: { webrtc: { bind_address: '127.0.0.1' } },
    client: { enable_logging: false, enforce_auth_on_inference: true },
    redis: { addr: redis.addr, key_prefix: PREFIX },
  };
  a = await startGateway(config);
  b = await startGateway(config);
});

after(async () => {
  closeAllPeers();
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.stop();
  await mock?.close();
});

const sdk = (g: InProcessGateway, key: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: key, maxRetries: 0 });

/** A call answered by `g`: the peer connected, the session created; its id and the provider's record. */
async function callThrough(g: InProcessGateway): Promise<{ peer: ClientPeer; id: string; upstream: MockProvider['webrtc'][number] }> {
  const peer = new ClientPeer({ audio: false });
  const before = mock.webrtc.length;
  const res = await sdk(g, VK).realtime.calls.create({ sdp: await peer.offer(), session: { type: 'realtime', model: 'openai/gpt-realtime' } });
  assert.equal(res.status, 201);
  const id = (res.headers.get('location') ?? '').split('/').at(-1)!;
  peer.accept(await res.text());
  await peer.opened;
  await eventually(() => assert.ok(peer.events.some((e) => e.type === 'session.created')), 8000);
  return { peer, id, upstream: mock.webrtc[before] };
}

test('a hangup sent to another replica ends the call on the replica holding it, at the client and at the provider', async () => {
  const { peer, id, upstream } = await callThrough(a);
  // The SDK's hangup, through the replica that does not hold the call.
  await sdk(b, VK).realtime.calls.hangup(id);
  // Answered once the call is over on its holder: the client's connection ends, and the provider's call.
  await peer.closed;
  await eventually(() => assert.ok(upstream.closed && upstream.hungUp, 'the provider call is still open'), 5000);
  // Gone from the directory: a second hangup, on either replica, finds nothing.
  for (const g of [a, b]) {
    const again = await fetch(`${g.url}/v1/realtime/calls/${id}/hangup`, { method: 'POST', headers: { 'x-bf-vk': VK } });
    assert.equal(again.status, 404);
    const body = (await again.json()) as { error: { code: string; param: string } };
    assert.deepEqual([body.error.code, body.error.param], ['call_not_found', 'call_id']);
  }
});

test('another key\'s hangup is a 404 on the replica that does not hold the call, and the call goes on', async () => {
  const { peer, id, upstream } = await callThrough(a);
  const res = await fetch(`${b.url}/v1/realtime/calls/${id}/hangup`, { method: 'POST', headers: { 'x-bf-vk': OTHER_VK } });
  assert.equal(res.status, 404);
  assert.match(((await res.json()) as { error: { message: string } }).error.message, /on any replica/);
  // Still connected: an event goes through and is answered.
  peer.send({ type: 'session.update', session: { type: 'realtime', instructions: 'still here' } });
  await eventually(() => assert.ok(peer.events.some((e) => e.type === 'session.updated')), 8000);
  assert.equal(upstream.hungUp, false);
  await sdk(b, VK).realtime.calls.hangup(id);
  await peer.closed;
});

test('a call whose holder does not confirm the hangup is a 409 naming the holder', async () => {
  // A holder that went away without removing its entry (a replica killed mid-call).
  const id = 'rtc_bf_heldbyagone0replica';
  const entry = JSON.stringify({ replica: 'skybridge-7f9c/4242', vk: 'replica-vk' }).replaceAll('"', '\\"');
  assert.equal(await redisCommand(redis.port, `SET ${PREFIX}rtc-call:${id} "${entry}" PX 60000`), '+OK');
  const res = await fetch(`${b.url}/v1/realtime/calls/${id}/hangup`, { method: 'POST', headers: { 'x-bf-vk': VK } });
  assert.equal(res.status, 409);
  const body = (await res.json()) as { error: { code: string; param: string; message: string } };
  assert.equal(body.error.code, 'call_held_elsewhere');
  assert.equal(body.error.param, 'call_id');
  assert.match(body.error.message, /replica 'skybridge-7f9c\/4242'/);
});
