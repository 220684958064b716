// The realtime relay's own work per event, without sockets: one RealtimeSession between a client
// port and a provider link that only count, fed the events bench/realtime.ts sends (a
// `session.update` out, a `session.updated` back). Meant to be run under callgrind, whose
// instruction counts do not move with the machine's load: the difference between two event counts
// is the path's cost per event round trip.
//
//   valgrind --tool=callgrind --smc-check=all-non-file node --single-threaded bench/realtime-path.ts --events 2000
//   valgrind --tool=callgrind --smc-check=all-non-file node --single-threaded bench/realtime-path.ts --events 42000
//   (instructions of the second less the first) / 40,000 = instructions per event round trip
//
// --root DIR runs another checkout's sources (e.g. a `git archive` of a commit). --client append
// sends `input_audio_buffer.append` events of 100 ms of audio (PCM16 at 24 kHz, 6,400 base64
// characters) instead of `session.update`: what a talking client sends ten times a second.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ClientPort } from '../proxy/src/realtime/client-port.ts';
import type { UpstreamLink } from '../proxy/src/realtime/link.ts';
import type * as SessionModule from '../proxy/src/realtime/session.ts';
import { DEFAULT_BOUNDS, modelScreened } from '../proxy/src/realtime/governed.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, root: { type: 'string', default: resolve(import.meta.dirname, '..') }, client: { type: 'string', default: 'update' } }, strict: true });
const EVENTS = Number(values.events);
const { RealtimeSession } = (await import(pathToFileURL(resolve(values.root, 'proxy/src/realtime/session.ts')).href)) as typeof SessionModule;

let relayed = 0;
let fromClient: (data: Buffer, isBinary: boolean) => void = () => undefined;
let fromProvider: (data: Buffer) => void = () => undefined;
const client: ClientPort = {
  onMessage: (cb) => void (fromClient = cb),
  onClose: () => undefined,
  send: () => void relayed++,
  bufferedAmount: 0,
  open: true,
  close: () => undefined,
  terminate: () => undefined,
};
// As the relay's link (link.ts): it sends a client event's bytes as they are.
const link: UpstreamLink = {
  bytesOnly: true,
  send: () => void relayed++,
  onEvent: (cb) => void (fromProvider = cb as (data: Buffer) => void),
  onClose: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
  close: () => undefined,
};
const session = new RealtimeSession(client, link, DEFAULT_BOUNDS, { onTurn: () => Promise.resolve(undefined), onEvent: () => undefined, screen: () => undefined, screens: modelScreened });

// The bench's events, and a session.updated as the mock lays it out (compact, the GA output format).
const updates: Buffer[] = [];
const answers: Buffer[] = [];
for (let i = 0; i < 1000; i++) {
  const audio = Buffer.alloc(4800, i).toString('base64');
  updates.push(Buffer.from(JSON.stringify(values.client === 'append' ? { type: 'input_audio_buffer.append', audio } : { type: 'session.update', session: { type: 'realtime', instructions: `b${i}-7` } })));
  const session = { type: 'realtime', object: 'realtime.session', id: 'sess_1', model: 'gpt-realtime', output_modalities: ['audio'], instructions: `b${i}-7`, audio: { output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' } } };
  answers.push(Buffer.from(JSON.stringify({ type: 'session.updated', event_id: `event_${i}`, session })));
}
for (let i = 0; i < EVENTS; i++) {
  // A socket read is a new buffer each time (for the client's, ws's unmasked copy).
  fromClient(Buffer.from(updates[i % 1000]), false);
  // A socket read is a new buffer each time.
  fromProvider(Buffer.from(answers[i % 1000]));
}
session.cut();
console.log(`${EVENTS} event round trips, ${relayed} events relayed`);
