// A client event's type read off its bytes (realtime/client-scan.ts): answered only where the
// protocol's parse (readClientFrame) reads an event of that same type, for the client's ordinary
// events and for thousands of broken and odd frames made from them; and a session whose link sends
// bytes relays a scanned event's own bytes, still counted, metered and refused as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scannedClientType } from '../../proxy/src/realtime/client-scan.ts';
import { isBadFrame, readClientFrame } from '../../proxy/src/realtime/protocol.ts';
import { RealtimeSession } from '../../proxy/src/realtime/session.ts';
import { DEFAULT_BOUNDS, modelScreened } from '../../proxy/src/realtime/governed.ts';
import type { ClientPort } from '../../proxy/src/realtime/client-port.ts';
import type { UpstreamLink } from '../../proxy/src/realtime/link.ts';

const audio = Buffer.alloc(4800, 7).toString('base64');
const EVENTS: readonly string[] = [
  JSON.stringify({ type: 'input_audio_buffer.append', audio }),
  JSON.stringify({ type: 'input_audio_buffer.append', event_id: 'evt_1', audio: 'AAAA' }),
  JSON.stringify({ event_id: 'e', type: 'input_audio_buffer.commit' }),
  JSON.stringify({ type: 'response.create', response: { modalities: ['audio', 'text'], instructions: 'Say "hi" \\ bye', temperature: 0.8, max_output_tokens: null, metadata: { a: true, b: false, n: -1.5e-3 } } }),
  JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'héllo ✓ \u0001' }] } }),
  JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: 'x' } }),
  ' \n{ "type" : "response.cancel" , "x" : [ ] , "y" : { } }\r\n\t',
  '{"type":"response.cancel","nested":[[[[{"a":[1,2,{"b":[]}]}]]]]}',
];

/** What the parse says of a frame: the event's type, or the bad frame's code. */
function parsed(data: Buffer): string {
  const read = readClientFrame(data, false, DEFAULT_BOUNDS.maxEventBytes);
  return isBadFrame(read) ? `bad:${read.code}` : read.type;
}

test("the client's ordinary events are read off their bytes, as the parse reads them", () => {
  for (const text of EVENTS) {
    const data = Buffer.from(text);
    assert.equal(scannedClientType(data), parsed(data), text.slice(0, 80));
  }
});

test('a frame the scan cannot vouch for is left to the parse, which says what is wrong with it', () => {
  const cases = [
    '',
    '   ',
    '[]',
    '"input_audio_buffer.commit"',
    '{}',
    '{"type":"input_audio_buffer.commit"',
    '{"type":"input_audio_buffer.commit",}',
    '{"type":"input_audio_buffer.commit"} x',
    '{"type":"input_audio_buffer.commit"}{}',
    '{"type":"nope"}',
    '{"type":1}',
    '{"type":"input_audio_buffer.commit","type":"nope"}',
    '{"type":"input_audio_buffer.commit","type":null}',
    '{"typ\\u0065":"nope","type":"input_audio_buffer.commit"}',
    '{"type":"input_audio_buffer.commit","typ\\u0065":"nope"}',
    '{"type":"input_audio_buffer.comm\\u0069t"}',
    '{"type":"input_audio_buffer.commit","a":01}',
    '{"type":"input_audio_buffer.commit","a":1.}',
    '{"type":"input_audio_buffer.commit","a":-}',
    '{"type":"input_audio_buffer.commit","a":1e}',
    '{"type":"input_audio_buffer.commit","a":tru}',
    '{"type":"input_audio_buffer.commit","a":"\\x"}',
    '{"type":"input_audio_buffer.commit","a":"\\u12G4"}',
    '{"type":"input_audio_buffer.commit","a":"tab\there"}',
    '{"type":"input_audio_buffer.commit","a":[1,]}',
    '{"type":"input_audio_buffer.commit","a":[1 2]}',
    '{"type":"input_audio_buffer.commit","a":{"b":1,}}',
    '{"type":"input_audio_buffer.commit","a":{1:2}}',
    '{"type":"input_audio_buffer.commit","a":]}',
    '\ufeff{"type":"input_audio_buffer.commit"}',
    `{"type":"input_audio_buffer.commit","a":${'['.repeat(100)}${']'.repeat(100)}}`,
  ];
  for (const text of cases) {
    const data = Buffer.from(text);
    const type = scannedClientType(data);
    const verdict = parsed(data);
    if (type !== undefined) assert.equal(type, verdict, text);
    assert.ok(type === undefined, `${text} is left to the parse (${verdict})`);
  }
  // Bytes that are not UTF-8, outside a string and inside one (a WebRTC data channel's are not checked by ws).
  const outside = Buffer.concat([Buffer.from('{"type":"input_audio_buffer.commit",'), Buffer.from([0xff]), Buffer.from('}')]);
  assert.equal(scannedClientType(outside), undefined);
  const inside = Buffer.concat([Buffer.from('{"type":"input_audio_buffer.commit","a":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')]);
  assert.equal(scannedClientType(inside), parsed(inside));
});

test('a long string is read four bytes at a time: what ends it or breaks it is found at every place and alignment', () => {
  const head = '{"type":"input_audio_buffer.append","audio":"';
  const inserts: readonly (string | Buffer)[] = ['"', '\\', '\\n', '\\"', '\\u00e9', '\\x', ' ', '!', '#', '\t', Buffer.from([0x01]), Buffer.from([0x1f]), Buffer.from([0xc3, 0xa9]), Buffer.from([0xff])];
  let scanned = 0;
  for (let at = 0; at < 150; at++) {
    for (const insert of inserts) {
      const body = Buffer.concat([Buffer.from(head + 'QUJD'.repeat(40).slice(0, at)), Buffer.from(insert), Buffer.from('QUJD'.repeat(40).slice(at) + '"}')]);
      for (let offset = 0; offset < 4; offset++) {
        // The frame at each alignment in its buffer, as a socket read lays frames.
        const data = Buffer.concat([Buffer.alloc(offset), body]).subarray(offset);
        const type = scannedClientType(data);
        const verdict = parsed(data);
        if (type !== undefined) scanned++;
        assert.equal(type ?? verdict, verdict, `${String(insert)} at ${at}, offset ${offset}`);
        if (!verdict.startsWith('bad:')) assert.equal(type, verdict, `${String(insert)} at ${at}, offset ${offset} is scanned`);
      }
    }
  }
  assert.ok(scanned > 0);
});

test('frames broken at random never scan as an event the parse does not read as the same', () => {
  // A seeded generator: the same frames every run.
  let seed = 0x2f6e2b1;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const SPECIAL = Buffer.from('{}[]",:\\ \t\n0123456789-+.eEtrufalsn\x01\x7f');
  const small = EVENTS.filter((e) => e.length < 1000).map((e) => Buffer.from(e));
  let agreed = 0;
  for (let n = 0; n < 20_000; n++) {
    const base = small[next(small.length)];
    const bytes = [...base];
    for (let edits = 1 + next(3); edits > 0; edits--) {
      const at = next(bytes.length + 1);
      const byte = next(4) === 0 ? next(256) : SPECIAL[next(SPECIAL.length)];
      const how = next(3);
      if (how === 0) bytes.splice(at, 0, byte);
      else if (how === 1) bytes.splice(at, 1);
      else bytes[Math.min(at, bytes.length - 1)] = byte;
    }
    const data = Buffer.from(bytes);
    const type = scannedClientType(data);
    if (type === undefined) continue;
    assert.equal(type, parsed(data), data.toString('latin1'));
    agreed++;
  }
  // Many edits land inside a string or whitespace and leave the event valid: those are scanned.
  assert.ok(agreed > 1000, `${agreed} broken frames still scanned`);
});

test('the model screen reads a session.update only when its bytes may name a model', () => {
  const screens = (text: string, type = 'session.update'): boolean => modelScreened(type, Buffer.from(text));
  assert.equal(screens('{"type":"session.update","session":{"voice":"alloy"}}'), false);
  assert.equal(screens('{"type":"session.update","session":{"model":"gpt-realtime"}}'), true);
  assert.equal(screens('{"type":"session.update","session":{"mod\\u0065l":"gpt-realtime"}}'), true);
  assert.equal(screens('{"type":"session.update","session":{"instructions":"say \\"hi\\""}}'), true, 'any backslash: parsed');
  assert.equal(screens('{"type":"input_audio_buffer.append","audio":"AAAA"}', 'input_audio_buffer.append'), false);
  assert.equal(screens('{"type":"conversation.item.create","model":"x"}', 'conversation.item.create'), false);
});

test("a session relays a scanned event's own bytes to a link that sends bytes, and parses only what its screen reads", () => {
  const sent: { data: string | Buffer; event: unknown }[] = [];
  const toClient: string[] = [];
  let fromClient: (data: Buffer, isBinary: boolean) => void = () => undefined;
  const client: ClientPort = {
    onMessage: (cb) => void (fromClient = cb),
    onClose: () => undefined,
    send: (data) => void toClient.push(String(data)),
    bufferedAmount: 0,
    open: true,
    close: () => undefined,
    terminate: () => undefined,
  };
  const link: UpstreamLink = {
    bytesOnly: true,
    send: (data, event) => void sent.push({ data, event }),
    onEvent: () => undefined,
    onClose: () => undefined,
    pause: () => undefined,
    resume: () => undefined,
    close: () => undefined,
  };
  const counted: string[] = [];
  const screened: string[] = [];
  const session = new RealtimeSession(client, link, DEFAULT_BOUNDS, {
    onTurn: () => Promise.resolve(undefined),
    onEvent: (direction) => void counted.push(direction),
    screen: (event) => {
      screened.push(event.type);
      return (event.session as { model?: string } | undefined)?.model === 'other' ? { refuse: 'refused' } : undefined;
    },
    screens: modelScreened,
  });
  const append = Buffer.from(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(48_000).toString('base64') }));
  fromClient(append, false);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].data, append, 'the frame itself, not a copy');
  assert.equal(sent[0].event, undefined);
  assert.equal(session.tracker.audioInSeconds, 1, "the append's audio is metered");
  const voice = Buffer.from('{"type":"session.update","session":{"voice":"alloy","instructions":"be brief"}}');
  fromClient(voice, false);
  assert.deepEqual(screened, [], 'a session.update that names no model is not screened');
  assert.equal(sent[1].data, voice);
  fromClient(Buffer.from('{"type":"session.update","session":{"model":"other"}}'), false);
  // An escaped key is the same key to the parse: screened too.
  fromClient(Buffer.from('{"type":"session.update","session":{"mod\\u0065l":"other"}}'), false);
  assert.deepEqual(screened, ['session.update', 'session.update']);
  assert.deepEqual(toClient, ['refused', 'refused'], 'one that may name a model still meets the screen');
  assert.equal(sent.length, 2);
  fromClient(Buffer.from('{"type":"input_audio_buffer.commit"'), false);
  assert.match(toClient[2], /invalid_json/, 'a broken frame still ends the session with its error');
  assert.deepEqual(counted, ['client', 'client', 'client', 'client']);
  session.cut();
});
