// The WebRTC call's pure parts: reading the client's offer (what is answered, and the 400 naming
// `sdp` for what cannot be), RTP demultiplexing and retagging, audio seconds from RTP timestamps,
// the provider's call request (URL, key, model) for OpenAI and Azure, the call id from Location,
// the answer's candidates against the egress guard, and the session's model held by session.update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { answerOpusPayloadType, isRtp, MediaCount, readOffer, refusedCandidate, retag, splitCandidates } from '../../proxy/src/realtime/sdp.ts';
import { callIdOf, callRequest, providerModel } from '../../proxy/src/realtime/webrtc-provider.ts';
import { blockedAddress } from '../../proxy/src/upstream/egress.ts';
import { modelScreen } from '../../proxy/src/realtime/governed.ts';
import type { RequestContext } from '../../proxy/src/pipeline/context.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

// A browser's offer, trimmed: an Opus audio track and the data channel.
const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0 1',
  'a=fingerprint:sha-256 AA:BB',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111 0',
  'c=IN IP4 0.0.0.0',
  'a=mid:0',
  'a=sendrecv',
  'a=rtpmap:111 opus/48000/2',
  'a=rtpmap:0 PCMU/8000',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  'a=mid:1',
  'a=sctp-port:5000',
  '',
].join('\r\n');

function refused(sdp: string): GatewayError {
  try {
    readOffer(sdp);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('the offer was accepted');
}

test('an offer: the audio section\'s mid and Opus payload type, and the data channel\'s mid', () => {
  assert.deepEqual(readOffer(OFFER), { audio: { mid: '0', opusPayloadType: 111 }, dataMid: '1' });
  const dataOnly = OFFER.replace(/m=audio[\s\S]*?(?=m=application)/, '');
  assert.deepEqual(readOffer(dataOnly), { audio: undefined, dataMid: '1' });
});

test('offers that cannot be answered are 400s naming sdp and why', () => {
  const cases: [string, RegExp][] = [
    ['hello', /must start with "v=0"/],
    [OFFER.replace('a=fingerprint:sha-256 AA:BB\r\n', ''), /fingerprint/],
    [OFFER.replace(/m=application[\s\S]*$/, ''), /data channel/],
    [OFFER.replace('a=rtpmap:111 opus/48000/2\r\n', ''), /does not offer Opus/],
    [OFFER.replace('m=application', 'm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:2\r\nm=application'), /video section/],
    [OFFER.replace('m=application', 'm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:2\r\na=rtpmap:111 opus/48000/2\r\nm=application'), /more than one audio/],
    [OFFER.replace('a=mid:1\r\n', ''), /no a=mid/],
    [OFFER.replaceAll('111', '8'), /payload type 8 is outside/],
    [`${OFFER}a=x:${'y'.repeat(70_000)}\r\n`, /over 65536 bytes/],
  ];
  for (const [sdp, message] of cases) {
    const err = refused(sdp);
    assert.equal(err.status, 400);
    assert.equal(err.param, 'sdp');
    assert.match(err.message, message);
  }
});

test('RTP is told from RTCP, retagged for the outgoing leg with its payload untouched, and timed by its timestamps', () => {
  const packet = (pt: number, ts: number, payload = [0xf8, 0xff, 0xfe]) => {
    const b = Buffer.alloc(12 + payload.length);
    b[0] = 0x80;
    b[1] = 0x80 | pt; // marker set
    b.writeUInt16BE(7, 2);
    b.writeUInt32BE(ts, 4);
    b.writeUInt32BE(0x11223344, 8);
    Buffer.from(payload).copy(b, 12);
    return b;
  };
  const p = packet(111, 1000);
  assert.ok(isRtp(p));
  const rtcp = Buffer.alloc(16);
  rtcp[0] = 0x80;
  rtcp[1] = 200; // sender report
  assert.equal(isRtp(rtcp), false);
  assert.equal(isRtp(Buffer.alloc(8, 0x80)), false);
  retag(p, 96, 0xdeadbeef);
  assert.equal(p[1], 0x80 | 96, 'the marker bit is kept');
  assert.equal(p.readUInt32BE(8), 0xdeadbeef);
  assert.equal(p.readUInt16BE(2), 7);
  assert.deepEqual([...p.subarray(12)], [0xf8, 0xff, 0xfe]);
  const count = new MediaCount();
  for (let i = 0; i < 50; i++) count.add(packet(111, (2 ** 32 - 960 * 10 + 960 * i) >>> 0));
  // 50 frames of 20 ms across the timestamp's wrap: one second.
  assert.equal(count.packets, 50);
  assert.ok(Math.abs(count.seconds - 1) < 1e-9, String(count.seconds));
  // A long pause counts as one frame, not as the silence between.
  count.add(packet(111, 48_000 * 60));
  assert.ok(Math.abs(count.seconds - 1.02) < 1e-9);
});

test('the answer: its Opus payload type, and candidates refused by name or by the egress guard', () => {
  const answer = 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 109\r\na=rtpmap:109 opus/48000/2\r\na=candidate:1 1 udp 2130706431 4.155.146.196 3478 typ host\r\n';
  assert.equal(answerOpusPayloadType(answer), 109);
  assert.equal(refusedCandidate(answer, blockedAddress), undefined);
  assert.match(refusedCandidate(answer.replace('4.155.146.196', '169.254.169.254'), blockedAddress) ?? '', /link-local/);
  assert.match(refusedCandidate(answer.replace('4.155.146.196', 'abc.local'), blockedAddress) ?? '', /host name/);
});

test('the provider\'s call: OpenAI and Azure (the key\'s resource and deployment), the provider key only', () => {
  const loaded = checkConfig(
    {
      providers: {
        openai: { keys: [{ name: 'k', value: 'sk-openai', weight: 1 }] },
        azure: {
          keys: [
            { name: 'a', value: 'azure-key', weight: 1, models: ['gpt-realtime'], azure_key_config: { endpoint: 'https://res.openai.azure.com', deployments: { 'gpt-realtime': 'rt-prod' } } },
            { name: 'b', value: 'entra-token', weight: 1, models: ['other'], azure_key_config: { endpoint: 'https://eu.openai.azure.com/', auth_type: 'bearer' } },
          ],
        },
      },
    },
    'test',
  );
  const snap = compileSnapshot(loaded.config);
  const openai = snap.providers.get('openai')!;
  assert.deepEqual(callRequest(openai, openai.keys[0]), { origin: 'https://api.openai.com', path: '/v1/realtime/calls', headers: { authorization: 'Bearer sk-openai' } });
  assert.equal(providerModel(openai, 'gpt-realtime', openai.keys[0]), 'gpt-realtime');
  const azure = snap.providers.get('azure')!;
  assert.deepEqual(callRequest(azure, azure.keys[0]), { origin: 'https://res.openai.azure.com', path: '/openai/v1/realtime/calls', headers: { 'api-key': 'azure-key' } });
  assert.equal(providerModel(azure, 'gpt-realtime', azure.keys[0]), 'rt-prod');
  assert.deepEqual(callRequest(azure, azure.keys[1]), { origin: 'https://eu.openai.azure.com', path: '/openai/v1/realtime/calls', headers: { authorization: 'Bearer entra-token' } });
  assert.equal(callIdOf('/v1/realtime/calls/rtc_abc123'), 'rtc_abc123');
  assert.equal(callIdOf(['/v1/realtime/calls/rtc_x?y=1']), 'rtc_x');
  assert.equal(callIdOf('/v1/realtime/calls/a%2F..%2Fb'), undefined);
  assert.equal(callIdOf(undefined), undefined);
});

test('session.update: another model is refused with an error event; the session\'s own by provider/model is relayed by the provider\'s name', () => {
  const ctx = { model: 'gpt-realtime', scope: { kind: 'model', model: 'openai/gpt-realtime' } } as unknown as RequestContext;
  const screen = modelScreen(ctx);
  assert.equal(screen({ type: 'response.create' }), undefined);
  assert.equal(screen({ type: 'session.update', session: { instructions: 'hi' } }), undefined);
  assert.equal(screen({ type: 'session.update', session: { model: 'gpt-realtime' } }), undefined);
  assert.deepEqual(screen({ type: 'session.update', session: { model: 'openai/gpt-realtime', voice: 'alloy' } }), { relay: { type: 'session.update', session: { model: 'gpt-realtime', voice: 'alloy' } } });
  const refusal = screen({ type: 'session.update', event_id: 'e1', session: { model: 'openai/gpt-4o-realtime' } });
  assert.ok(refusal && 'refuse' in refusal);
  const event = JSON.parse(refusal.refuse) as { type: string; error: { code: string; param: string; event_id: string; message: string } };
  assert.equal(event.type, 'error');
  assert.deepEqual([event.error.code, event.error.param, event.error.event_id], ['model_not_allowed', 'session.model', 'e1']);
  assert.match(event.error.message, /openai\/gpt-4o-realtime/);
});

test('the offer\'s candidates are kept apart, with their section\'s mid, until the answer is out', () => {
  const offer = OFFER.replace('a=mid:0\r\n', 'a=mid:0\r\na=candidate:1 1 UDP 2114977791 127.0.0.1 40000 typ host\r\na=end-of-candidates\r\n');
  const { offer: bare, candidates } = splitCandidates(offer);
  assert.deepEqual(candidates, [{ candidate: 'candidate:1 1 UDP 2114977791 127.0.0.1 40000 typ host', mid: '0' }]);
  assert.ok(!bare.includes('a=candidate') && !bare.includes('end-of-candidates'));
  assert.deepEqual(readOffer(bare), readOffer(offer));
});
