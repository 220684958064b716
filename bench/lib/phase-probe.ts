// Preloaded (`--import`) into a proxy under bench/c1-phases.ts: the process CPU time (getrusage, so
// other processes' load does not count) at the points of one request at c=1, from diagnostics
// channels and two wrappers, never from the proxy's own code. SIGUSR2 writes the samples taken
// since the last signal to $PHASE_PROBE_DIR/<pid>.json and starts over.
import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { join } from 'node:path';

/** CPU µs of the process at: request parsed, upstream head sent, upstream head read, upstream body read, answer's first bytes to the kernel (before, after), the check phase after them. */
export interface PhaseSample {
  read: number;
  sent?: number;
  head?: number;
  body?: number;
  answerStart?: number;
  answerEnd?: number;
  check?: number;
}

const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

let current: (PhaseSample & { socket?: Socket }) | undefined;
let samples: PhaseSample[] = [];

dc.subscribe('http.server.request.start', (msg) => {
  const at = cpu();
  if (current) samples.push(current);
  current = { read: at, socket: (msg as { request: IncomingMessage }).request.socket };
});
dc.subscribe('undici:client:sendHeaders', () => {
  if (current && current.sent === undefined) current.sent = cpu();
});
dc.subscribe('undici:request:headers', () => {
  if (current && current.head === undefined) current.head = cpu();
});
dc.subscribe('undici:request:trailers', () => {
  if (current && current.body === undefined) current.body = cpu();
});

// Every socket write (write and writev) goes through _writeGeneric: the first on the request's own
// socket is the answer's first bytes leaving (a JSON answer whole, a stream's head and first event).
const proto = Socket.prototype as unknown as { _writeGeneric: (...args: unknown[]) => unknown };
const writeGeneric = proto._writeGeneric;
proto._writeGeneric = function (this: Socket, ...args: unknown[]) {
  const s = current;
  if (!s || s.socket !== this || s.answerStart !== undefined) return writeGeneric.apply(this, args);
  s.answerStart = cpu();
  const r = writeGeneric.apply(this, args);
  s.answerEnd = cpu();
  setImmediate(() => {
    s.check = cpu();
  });
  return r;
};

process.on('SIGUSR2', () => {
  const dir = process.env.PHASE_PROBE_DIR;
  if (dir) writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(samples.map(({ socket: _, ...s }: PhaseSample & { socket?: Socket }) => s)));
  samples = [];
});
