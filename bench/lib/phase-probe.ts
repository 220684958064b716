// Preloaded (`--import`) into a proxy (or the mock) under bench/c1-phases.ts: the process CPU time
// (getrusage, so other processes' load does not count) and the wall clock at the points of one
// request at c=1, from diagnostics channels and two wrappers, never from the proxy's own code.
// Wall minus CPU in a phase is waiting: for the kernel, the peer, or a core. SIGUSR2 writes the
// samples taken since the last signal to $PHASE_PROBE_DIR/<pid>.json and starts over.
import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** The points of one request: request parsed, upstream head sent, upstream head read, upstream body read, answer's first bytes to the kernel (before, after), the check phase after them. */
export interface PhasePoints {
  read: number;
  sent?: number;
  head?: number;
  body?: number;
  answerStart?: number;
  answerEnd?: number;
  check?: number;
}

/** CPU µs of the process at each point, the wall clock (µs) at the same points, and bytes. */
export interface PhaseSample extends PhasePoints {
  wall: PhasePoints;
  /** The request as it arrived: its head's header bytes (names and values) and its body's content-length. */
  requestHeadBytes: number;
  requestBodyBytes: number;
  /** Bytes of the answer's first write (a JSON answer: head and body whole). */
  answerBytes?: number;
}

/** What a dump holds: the samples and the collections that ran in the window, by kind (minor, major, incremental, weakcb). */
export interface PhaseDump {
  samples: PhaseSample[];
  gc: Record<string, { n: number; ms: number }>;
}

// The process's CPU (all threads): the main thread's own (threadCpuUsage) comes in steps too
// coarse for phases of tens of µs.
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const wall = (): number => performance.now() * 1000;

type Live = PhaseSample & { socket?: Socket };
let current: Live | undefined;
let samples: PhaseSample[] = [];
let gc: PhaseDump['gc'] = {};
const GC_KINDS: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };

const mark = (s: Live, k: Exclude<keyof PhasePoints, 'read'>): void => {
  if (s[k] !== undefined) return;
  s[k] = cpu();
  s.wall[k] = wall();
};

dc.subscribe('http.server.request.start', (msg) => {
  const at = cpu();
  const w = wall();
  if (current) samples.push(current);
  const req = (msg as { request: IncomingMessage }).request;
  const headBytes = req.rawHeaders.reduce((n, h) => n + Buffer.byteLength(h), 0);
  current = { read: at, wall: { read: w }, socket: req.socket, requestHeadBytes: headBytes, requestBodyBytes: Number(req.headers['content-length'] ?? 0) };
});
dc.subscribe('undici:client:sendHeaders', () => {
  if (current) mark(current, 'sent');
});
dc.subscribe('undici:request:headers', () => {
  if (current) mark(current, 'head');
});
dc.subscribe('undici:request:trailers', () => {
  if (current) mark(current, 'body');
});

const byteLength = (args: unknown[]): number => {
  const [first, second] = args;
  // _writeGeneric(writev, data, encoding, cb): data is a chunk, or for writev an array of { chunk }.
  if (first === true && Array.isArray(second)) return (second as { chunk: string | Buffer }[]).reduce((n, c) => n + Buffer.byteLength(c.chunk), 0);
  return typeof second === 'string' || Buffer.isBuffer(second) ? Buffer.byteLength(second) : 0;
};

// Every socket write (write and writev) goes through _writeGeneric: the first on the request's own
// socket is the answer's first bytes leaving (a JSON answer whole, a stream's head and first event).
const proto = Socket.prototype as unknown as { _writeGeneric: (...args: unknown[]) => unknown };
const writeGeneric = proto._writeGeneric;
proto._writeGeneric = function (this: Socket, ...args: unknown[]) {
  const s = current;
  if (!s || s.socket !== this || s.answerStart !== undefined) return writeGeneric.apply(this, args);
  mark(s, 'answerStart');
  s.answerBytes = byteLength(args);
  const r = writeGeneric.apply(this, args);
  mark(s, 'answerEnd');
  setImmediate(() => mark(s, 'check'));
  return r;
};

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = GC_KINDS[(e as PerformanceEntry & { detail: { kind: number } }).detail.kind] ?? 'other';
    const k = (gc[kind] ??= { n: 0, ms: 0 });
    k.n++;
    k.ms += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  const dir = process.env.PHASE_PROBE_DIR;
  const dump: PhaseDump = { samples: samples.map(({ socket: _, ...s }: Live) => s), gc };
  if (dir) writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(dump));
  samples = [];
  gc = {};
});
