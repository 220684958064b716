// The realtime module's pure parts: reading client frames, the turn tracker's cheap reads, where a
// session goes at each provider (and with which key), the subprotocol credential, and the
// translation of OpenAI Realtime events to and from Gemini's Live API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { badFrameEvent, isBadFrame, readClientFrame } from '../../proxy/src/realtime/protocol.ts';
import { base64Bytes, eventType, sessionOutputRate, TurnTracker, usageOf } from '../../proxy/src/realtime/turns.ts';
import { upstreamRequest } from '../../proxy/src/realtime/upstream.ts';
import { boundsOf, identityHeaders, REALTIME_PATHS } from '../../proxy/src/realtime/front.ts';
import { GeminiTranslator } from '../../proxy/src/realtime/gemini-translate.ts';
import { mintSecret, verifySecret, type ClientSecretRequest } from '../../proxy/src/realtime/client-secret.ts';

test('client frames: a known event passes; each bad frame is named with a message', () => {
  const ok = readClientFrame(Buffer.from('{"type":"response.create","event_id":"e1"}'), false, 1024);
  assert.ok(!isBadFrame(ok));
  assert.equal(ok.type, 'response.create');
  const cases: [Buffer | string, boolean, string][] = [
    [Buffer.from([0, 1, 2]), true, 'binary_frame'],
    ['{"type":', false, 'invalid_json'],
    ['"a string"', false, 'invalid_event'],
    ['{"type": 5}', false, 'invalid_event'],
    ['{"type":"response.explode","event_id":"e9"}', false, 'unknown_event'],
    [JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(2000) }), false, 'event_too_large'],
  ];
  for (const [data, binary, code] of cases) {
    const r = readClientFrame(data, binary, 1024);
    assert.ok(isBadFrame(r), `${code}: ${JSON.stringify(r)}`);
    assert.equal(r.code, code);
    const event = JSON.parse(badFrameEvent(r)) as { type: string; error: { code: string; message: string; event_id: string | null } };
    assert.equal(event.type, 'error');
    assert.equal(event.error.code, code);
    if (code === 'unknown_event') {
      assert.equal(event.error.event_id, 'e9');
      assert.match(event.error.message, /unknown event type 'response.explode'.*response\.create/);
    }
  }
});

test('the tracker reads types and audio lengths without parsing deltas, and sums a turn at response.done', () => {
  assert.equal(eventType('{"type":"response.output_audio.delta","delta":"AAAA"}'), 'response.output_audio.delta');
  assert.equal(eventType('{"event_id":"x","type":"session.created"}'), 'session.created');
  assert.equal(base64Bytes('{"delta":"AAAA"}', 'delta'), 3);
  assert.equal(base64Bytes('{"delta":"AAA="}', 'delta'), 2);
  assert.equal(base64Bytes('{"delta":"AA=="}', 'delta'), 1);
  assert.equal(base64Bytes('{"other":"AAAA"}', 'delta'), 0);
  assert.deepEqual(usageOf({ input_tokens: 3, output_tokens: 4, total_tokens: 7, input_token_details: { cached_tokens: 2 } }), { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } });
  const t = new TurnTracker();
  const audio = Buffer.alloc(48_000).toString('base64'); // one second of 24 kHz PCM16
  t.client('input_audio_buffer.append', JSON.stringify({ type: 'input_audio_buffer.append', audio }), 0);
  assert.equal(t.audioInSeconds, 1);
  t.client('response.create', '{"type":"response.create"}', 100);
  t.server('response.created', '{"type":"response.created"}', 110);
  assert.equal(t.inFlight, true);
  t.server('response.output_audio.delta', JSON.stringify({ type: 'response.output_audio.delta', delta: audio }), 150);
  t.server('response.output_audio.delta', JSON.stringify({ type: 'response.output_audio.delta', delta: audio }), 160);
  const turn = t.server('response.done', JSON.stringify({ type: 'response.done', response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 1, output_tokens: 2 } } }), 200);
  assert.ok(turn);
  assert.equal(turn.firstAudioMs, 50);
  assert.equal(turn.audioOutSeconds, 2);
  assert.equal(turn.usage?.total_tokens, 3);
  assert.equal(t.inFlight, false);
  // G.711 output is 8000 bytes a second.
  t.server('session.updated', JSON.stringify({ type: 'session.updated', session: { audio: { output: { format: { type: 'audio/pcmu' } } } } }), 300);
  t.server('response.output_audio.delta', JSON.stringify({ type: 'response.output_audio.delta', delta: Buffer.alloc(8000).toString('base64') }), 310);
  assert.equal(t.server('response.done', '{"type":"response.done","response":{}}', 320)?.audioOutSeconds, 1);
});

test('relayed bytes are read as their text is: the type from the first bytes, audio lengths, a turn, and the rate only from an event naming a format', () => {
  const b = (v: unknown) => Buffer.from(JSON.stringify(v));
  assert.equal(eventType(b({ event_id: 'évé', type: 'response.done' })), 'response.done');
  // Types near a known one (longer, shorter, one byte off) are read as they are, not taken for it.
  for (const type of ['response.done.extra', 'response.don', 'response.dome', 'errors', 'conversation.item.added']) assert.equal(eventType(b({ type })), type);
  // A clock is read only for the events whose time the tracker keeps.
  let reads = 0;
  const clock = (): number => ++reads * 10;
  const timed = new TurnTracker();
  timed.server('session.updated', b({ type: 'session.updated', session: {} }), clock);
  timed.server('response.output_text.delta', b({ type: 'response.output_text.delta', delta: 'x' }), clock);
  assert.equal(reads, 0);
  timed.server('response.created', b({ type: 'response.created' }), clock);
  timed.server('response.output_audio.delta', b({ type: 'response.output_audio.delta', delta: 'AAAA' }), clock);
  timed.server('response.output_audio.delta', b({ type: 'response.output_audio.delta', delta: 'AAAA' }), clock);
  assert.equal(reads, 2);
  assert.equal(timed.server('response.done', b({ type: 'response.done', response: {} }), clock)?.firstAudioMs, 10);
  assert.equal(base64Bytes(Buffer.from('{"delta":"AAA="}'), 'delta'), 2);
  assert.equal(base64Bytes(Buffer.from('{"delta":"AA=="}'), 'delta'), 1);
  assert.equal(base64Bytes(Buffer.from('{"other":"AAAA"}'), 'delta'), 0);
  const t = new TurnTracker();
  // A session.updated that names no format leaves the rate as it was (PCM16 at 24 kHz).
  t.server('session.updated', b({ type: 'session.updated', session: { instructions: 'x' } }), 0);
  t.server('response.created', b({ type: 'response.created' }), 10);
  t.server('response.output_audio.delta', b({ type: 'response.output_audio.delta', delta: Buffer.alloc(24_000).toString('base64') }), 20);
  const turn = t.server('response.done', b({ type: 'response.done', response: { id: 'resp_b', status: 'completed', usage: { input_tokens: 2, output_tokens: 5 } } }), 30);
  assert.equal(turn?.responseId, 'resp_b');
  assert.equal(turn?.usage?.total_tokens, 7);
  assert.equal(turn?.audioOutSeconds, 0.5);
  // The older field name counts as naming a format.
  t.server('session.updated', b({ type: 'session.updated', session: { output_audio_format: 'g711_ulaw' } }), 40);
  t.server('response.output_audio.delta', b({ type: 'response.output_audio.delta', delta: Buffer.alloc(4000).toString('base64') }), 50);
  assert.equal(t.server('response.done', b({ type: 'response.done', response: {} }), 60)?.audioOutSeconds, 0.5);
  t.client('input_audio_buffer.append', b({ type: 'input_audio_buffer.append', audio: Buffer.alloc(8000).toString('base64') }), 70);
  assert.equal(t.audioInSeconds, 1);
});

test('an event\'s type is read from its bytes exactly as the pattern reads its latin1 head (layouts, spaces, the 400-byte head, 80-character types)', () => {
  const pattern = /"type"\s*:\s*"([^"]{1,80})"/;
  const byPattern = (data: Buffer) => pattern.exec(data.toString('latin1', 0, Math.min(data.length, 400)))?.[1];
  const fixed = [
    '{"type":"session.updated"}',
    '{"event_id":"évé","type" :\t"response.done"}',
    '{"type":5,"item":{"type":"message"}}',
    '{"type":"","x":{"type":"inner"}}',
    `{"type":"${'a'.repeat(80)}"}`,
    `{"type":"${'a'.repeat(81)}","next":{"type":"ok"}}`,
    `{"pad":"${'x'.repeat(380)}","type":"late"}`,
    `{"pad":"${'x'.repeat(385)}","type":"cut"}`,
    '{"type"}',
    '{"type":',
    '',
  ].map((t) => Buffer.from(t));
  // Latin1's no-break space (0xa0) counts as a space, as `\s` reads it; a UTF-8 one does not match.
  fixed.push(Buffer.concat([Buffer.from('{"type"'), Buffer.from([0xa0]), Buffer.from(':"nbsp"}')]), Buffer.from('{"type"\u00a0:"utf8"}'));
  // Random layouts made of the pieces that matter.
  const pieces = ['"type"', ':', ' ', '\n', '"', 'a', '.', '{', '}', ',', '\u00e9', 'x'.repeat(70)];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let k = 0; k < 3000; k++) fixed.push(Buffer.from(Array.from({ length: 2 + rand(40) }, () => pieces[rand(pieces.length)]).join('')));
  for (const data of fixed) assert.equal(eventType(data), byPattern(data), JSON.stringify(data.toString('latin1')));
});

test('a session event\'s output rate is read without parsing it as providers lay it out, and parsed otherwise', () => {
  const ev = (session: unknown) => Buffer.from(JSON.stringify({ type: 'session.updated', event_id: 'e', session }));
  assert.equal(sessionOutputRate(ev({ audio: { input: { format: { type: 'audio/pcm', rate: 24000 } }, output: { format: { type: 'audio/pcmu' }, voice: 'alloy' } } })), 8000);
  assert.equal(sessionOutputRate(ev({ audio: { output: { speed: 1, format: 'audio/pcma' } } })), 8000);
  assert.equal(sessionOutputRate(ev({ output_audio_format: 'g711_alaw' })), 8000);
  assert.equal(sessionOutputRate(JSON.stringify({ type: 'session.updated', session: { audio: { output: { format: { type: 'audio/pcm', rate: 24000 } } } } })), 48_000);
  // Laid out otherwise (an object before the format), or a tool's schema with an `output` property first: parsed.
  assert.equal(sessionOutputRate(ev({ audio: { output: { voice: { id: 'v' }, format: { type: 'audio/pcmu' } } } })), 8000);
  const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { output: { type: 'string', format: 'date' } } } }];
  assert.equal(sessionOutputRate(ev({ tools, audio: { output: { format: { type: 'audio/pcmu' } } } })), 8000);
  assert.equal(sessionOutputRate(ev({ instructions: 'x' })), undefined);
});

test('a session event\'s output rate read in place from the compact layout is the pattern\'s answer on any bytes', () => {
  // The string path has no in-place read (the pattern, then the parse): both paths must agree.
  const answer = (data: Buffer | string): string => {
    try {
      return String(sessionOutputRate(data));
    } catch (err) {
      return `throws ${(err as Error).name}`;
    }
  };
  const heads = ['"output":{"format":{"type":"', '"output":{"format":"', '"output": {"format":{"type":"', '"output":{"speed":1,"format":{"type":"', '"output":{"format":{"rate":24000,"type":"'];
  const names = ['audio/pcm', 'audio/pcmu', 'g711_alaw', 'pcm16', 'audio/opus', 'audio/pc', ''];
  const tails = ['"}', '","rate":24000}', '","rate":24000.5}', '","rate":}', '","type":"audio/pcmu"}', '","rate":1,"type":"g711_ulaw"}', '" }', '","voice":"alloy"}', '"', '\\"}', ''];
  let seed = 7;
  const pick = <T>(list: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return list[seed % list.length];
  };
  let compact = 0;
  for (let k = 0; k < 4000; k++) {
    const before = pick(['', '"tools":[{"parameters":{"properties":{"output":{"format":"date"}}}}],', '"output_audio_format":"g711_ulaw",']);
    const text = `{"type":"session.updated","session":{${before}"audio":{${pick(heads)}${pick(names)}${pick(tails)},"voice":"alloy"}},"instructions":"x"}}`;
    const bytes = Buffer.from(text);
    assert.equal(answer(bytes), answer(text), text);
    if (text.includes('{"output":{"format":{"type":"audio/pcm"}')) compact++;
  }
  assert.ok(compact > 10, 'the compact layout was among the cases');
});

test('upstream: OpenAI, Azure (deployment, api-key or Entra bearer) and Gemini Live URLs, each with the provider key only', () => {
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
        gemini: { keys: [{ name: 'g', value: 'gem-key', weight: 1 }] },
      },
    },
    'test',
  );
  const snap = compileSnapshot(loaded.config);
  const openai = snap.providers.get('openai')!;
  const o = upstreamRequest(openai, 'gpt-realtime', openai.keys[0]);
  assert.equal(o.url, 'wss://api.openai.com/v1/realtime?model=gpt-realtime');
  assert.deepEqual(o.headers, { authorization: 'Bearer sk-openai' });
  const azure = snap.providers.get('azure')!;
  const a = upstreamRequest(azure, 'gpt-realtime', azure.keys[0]);
  assert.equal(a.url, 'wss://res.openai.azure.com/openai/v1/realtime?model=rt-prod');
  assert.deepEqual(a.headers, { 'api-key': 'azure-key' });
  const b = upstreamRequest(azure, 'other', azure.keys[1]);
  assert.equal(b.url, 'wss://eu.openai.azure.com/openai/v1/realtime?model=other');
  assert.deepEqual(b.headers, { authorization: 'Bearer entra-token' });
  const gemini = snap.providers.get('gemini')!;
  const g = upstreamRequest(gemini, 'gemini-live-2.5-flash', gemini.keys[0]);
  assert.equal(g.url, 'wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent');
  assert.deepEqual(g.headers, { 'x-goog-api-key': 'gem-key' });
  assert.equal(g.protocol, 'gemini');
});

test('a key offered as the openai-insecure-api-key subprotocol becomes the Bearer credential, and the subprotocol header is dropped', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  const h = identityHeaders(req({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-bf-abc' }));
  assert.equal(h.authorization, 'Bearer sk-bf-abc');
  assert.equal(h['sec-websocket-protocol'], undefined);
  // A credential in a header wins.
  assert.equal(identityHeaders(req({ 'sec-websocket-protocol': 'openai-insecure-api-key.sk-bf-abc', 'x-bf-vk': 'sk-bf-x' })).authorization, undefined);
  assert.deepEqual(REALTIME_PATHS.slice(0, 2), ['/v1/realtime', '/openai/v1/realtime']);
});

test('session bounds: defaults, and the websocket section in seconds and bytes', () => {
  assert.deepEqual(boundsOf(undefined), { idleMs: 300_000, maxMs: 3_600_000, maxEventBytes: 4 * 1024 * 1024, maxBufferedBytes: 4 * 1024 * 1024, backpressureMs: 10_000 });
  assert.deepEqual(boundsOf({ idle_timeout_seconds: 1.5, max_session_seconds: 60, max_event_bytes: 2048, max_buffered_bytes: 4096, backpressure_timeout_seconds: 2 }), { idleMs: 1500, maxMs: 60_000, maxEventBytes: 2048, maxBufferedBytes: 4096, backpressureMs: 2000 });
});

test('Gemini: setup from the first session.update, turns held until response.create, a Gemini turn as one response with usage', () => {
  const t = new GeminiTranslator({ model: 'gemini-live-2.5-flash' });
  assert.equal(t.sessionCreated().type, 'session.created');
  const first = t.fromClient({ type: 'session.update', session: { type: 'realtime', output_modalities: ['text'], instructions: 'Be brief.' } });
  assert.deepEqual(first.toGemini, [{ setup: { model: 'models/gemini-live-2.5-flash', generationConfig: { responseModalities: ['TEXT'] }, systemInstruction: { parts: [{ text: 'Be brief.' }] }, inputAudioTranscription: {} } }]);
  assert.equal(first.toClient[0].type, 'session.updated');
  // A later update cannot reach Gemini: an error event, nothing sent.
  const late = t.fromClient({ type: 'session.update', session: { instructions: 'x' } });
  assert.deepEqual(late.toGemini, []);
  assert.equal((late.toClient[0].error as { code: string }).code, 'unsupported_for_provider');
  const item = t.fromClient({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi there' }] } });
  assert.deepEqual(item.toGemini, []);
  assert.deepEqual(item.toClient.map((e) => e.type), ['conversation.item.added', 'conversation.item.done']);
  const ask = t.fromClient({ type: 'response.create' });
  assert.deepEqual(ask.toGemini, [{ clientContent: { turns: [{ role: 'user', parts: [{ text: 'hi there' }] }], turnComplete: true } }]);
  assert.equal(ask.toClient[0].type, 'response.created');
  const a = t.fromGemini({ serverContent: { modelTurn: { parts: [{ text: 'Hello ' }] } } });
  assert.deepEqual(a.map((e) => e.type), ['response.output_item.added', 'response.output_text.delta']);
  const b = t.fromGemini({ serverContent: { modelTurn: { parts: [{ text: 'you.' }] } } });
  assert.deepEqual(b.map((e) => e.type), ['response.output_text.delta']);
  const done = t.fromGemini({ serverContent: { turnComplete: true }, usageMetadata: { promptTokenCount: 2, responseTokenCount: 2, totalTokenCount: 4 } });
  assert.deepEqual(done.map((e) => e.type), ['response.output_text.done', 'response.output_item.done', 'response.done']);
  const response = done.at(-1)!.response as { status: string; usage: { input_tokens: number; output_tokens: number; total_tokens: number }; output: { content: { text: string }[] }[] };
  assert.equal(response.status, 'completed');
  assert.deepEqual([response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens], [2, 2, 4]);
  assert.equal(response.output[0].content[0].text, 'Hello you.');
});

test('Gemini: audio in is realtimeInput (24 kHz PCM16), commit ends the stream, audio out and its transcript come back as OpenAI deltas', () => {
  const t = new GeminiTranslator({ model: 'm' });
  const append = t.fromClient({ type: 'input_audio_buffer.append', audio: 'AAAA' });
  assert.equal(Object.keys(append.toGemini[0])[0], 'setup');
  assert.deepEqual(append.toGemini[1], { realtimeInput: { audio: { data: 'AAAA', mimeType: 'audio/pcm;rate=24000' } } });
  assert.deepEqual((append.toGemini[0].setup as { generationConfig: unknown }).generationConfig, { responseModalities: ['AUDIO'] });
  assert.deepEqual(t.fromClient({ type: 'input_audio_buffer.commit' }).toGemini, [{ realtimeInput: { audioStreamEnd: true } }]);
  // Gemini starts the turn itself (voice activity detection): the response is opened for it.
  const audio = t.fromGemini({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: 'audio/pcm;rate=24000', data: 'BBBB' } }] } } });
  assert.deepEqual(audio.map((e) => e.type), ['response.created', 'response.output_item.added', 'response.output_audio.delta']);
  assert.equal(audio[2].delta, 'BBBB');
  assert.deepEqual(t.fromGemini({ serverContent: { outputTranscription: { text: 'Hi' } } }).map((e) => e.type), ['response.output_audio_transcript.delta']);
  const interrupted = t.fromGemini({ serverContent: { interrupted: true } });
  assert.equal((interrupted.at(-1)!.response as { status: string }).status, 'cancelled');
  // A tool call ends the response with a function_call item.
  const call = t.fromGemini({ toolCall: { functionCalls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] } });
  const last = call.at(-1)!.response as { output: { type: string; call_id: string; arguments: string }[] };
  assert.deepEqual(last.output.map((o) => [o.type, o.call_id, o.arguments]), [['function_call', 'c1', '{"q":"x"}']]);
  const answer = t.fromClient({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'c1', name: 'lookup', output: '42' } });
  assert.deepEqual(answer.toGemini, [{ toolResponse: { functionResponses: [{ id: 'c1', name: 'lookup', response: { output: '42' } }] } }]);
});

test('client secrets: bound to the key, model and settings; an expired, tampered or rotated-key secret is refused', () => {
  const governance = (value: string) =>
    compileSnapshot(checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'sk-x', weight: 1 }] } }, governance: { virtual_keys: [{ id: 'vk1', name: 'vk1', value, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'], weight: 1 }] }] } }, 'test').config).governance;
  const rt = governance('sk-bf-original-000000');
  const vk = [...rt.virtualKeys.values()][0];
  const now = 1_700_000_000_000;
  const minted = mintSecret(vk, { session: { type: 'realtime', model: 'openai/gpt-realtime', voice: 'marin' } as ClientSecretRequest['session'], expires_after: { seconds: 60 } }, now);
  assert.equal(minted.expiresAt, now + 60_000);
  assert.deepEqual(minted.session, { voice: 'marin' });
  assert.ok(!minted.value.includes('sk-bf-original'));
  const grant = verifySecret(rt, minted.value, now + 1000);
  assert.equal(grant.vk.record.id, 'vk1');
  assert.equal(grant.model, 'openai/gpt-realtime');
  assert.deepEqual(grant.session, { voice: 'marin' });
  assert.throws(() => verifySecret(rt, minted.value, now + 61_000), /expired/);
  assert.throws(() => verifySecret(rt, `${minted.value}x`, now), /not valid/);
  assert.throws(() => verifySecret(rt, 'ek_bf_nonsense', now), /malformed/);
  // The same key id with a new value (rotated): every secret minted before is void.
  assert.throws(() => verifySecret(governance('sk-bf-rotated-0000000'), minted.value, now), /not valid/);
});
