// bench/realtime.ts's probe: a process of its own (forked, IPC) that times a few sessions' events
// while the bench's client threads load the gateway with their 1,000 sessions. Its event loop
// carries only its own light traffic, so a slow answer it sees was slow in the gateway, the mock or
// the machine, not in a client thread that was busy with 250 other sessions. It has two legs in a
// relayed phase: sessions through the gateway and sessions straight to the mock, their sends
// interleaved in time, so the direct leg's percentiles in the same seconds say what is not the
// gateway's.
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export interface ProbeLeg {
  name: string;
  url: string;
  headers: Record<string, string>;
}

export type ProbeMessage =
  | { kind: 'open'; legs: ProbeLeg[]; sessions: number }
  | { kind: 'start'; start: number; seconds: number; rate: number };

/** One leg's events: when each was sent (epoch ms) and its round trip (ms). */
export interface ProbeLegResult {
  name: string;
  failed: number;
  sentAt: number[];
  rtt: number[];
}

export interface ProbeResult {
  legs: ProbeLegResult[];
  /** The probe's own GC pauses [start epoch ms, ms] and event loop delay p99 (ms) over the phase. */
  gc: [number, number][];
  loopP99: number;
}

const epoch = (): number => performance.timeOrigin + performance.now();
const gc: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gc.push([performance.timeOrigin + e.startTime, e.duration]);
}).observe({ entryTypes: ['gc'] });

interface Leg {
  result: ProbeLegResult;
  sockets: WebSocket[];
  pending: Map<string, number>;
}
let legs: Leg[] = [];
let seq = 0;

async function open(spec: ProbeLeg[], sessions: number): Promise<void> {
  legs = await Promise.all(
    spec.map(async (l) => {
      const leg: Leg = { result: { name: l.name, failed: 0, sentAt: [], rtt: [] }, sockets: [], pending: new Map() };
      leg.sockets = await Promise.all(
        Array.from({ length: sessions }, () => {
          const ws = new WebSocket(l.url, { headers: l.headers, perMessageDeflate: false });
          ws.on('message', (data: Buffer) => {
            const at = performance.now();
            const text = data.toString();
            if (!text.includes('"session.updated"')) return;
            const id = /"instructions":"(p\d+)"/.exec(text)?.[1];
            const sent = id === undefined ? undefined : leg.pending.get(id);
            if (sent === undefined) return;
            leg.pending.delete(id!);
            leg.result.sentAt.push(performance.timeOrigin + sent);
            leg.result.rtt.push(at - sent);
          });
          return new Promise<WebSocket>((resolve) => {
            ws.once('open', () => resolve(ws));
            ws.once('error', () => {
              leg.result.failed++;
              resolve(ws);
            });
          });
        }),
      );
      return leg;
    }),
  );
}

function send(leg: Leg, k: number): void {
  const ws = leg.sockets[k % leg.sockets.length];
  if (ws.readyState !== 1) return;
  const id = `p${seq++}`;
  leg.pending.set(id, performance.now());
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: id } }));
}

/** `rate` events a second on each leg, on a fixed clock from `start`; the legs take turns, evenly spaced. */
function run(start: number, seconds: number, rate: number): void {
  const total = seconds * rate * legs.length;
  const step = 1000 / (rate * legs.length);
  const gc0 = gc.length;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let next = 0;
  const pump = (): void => {
    const now = epoch();
    while (next < total && start + next * step <= now) {
      send(legs[next % legs.length], Math.floor(next / legs.length));
      next++;
    }
    if (next < total) setTimeout(pump, Math.max(0, start + next * step - epoch()));
  };
  setTimeout(pump, Math.max(0, start - epoch()));
  // The last answers get half a second, as the client threads' do.
  setTimeout(
    () => {
      loop.disable();
      const result: ProbeResult = { legs: legs.map((l) => l.result), gc: gc.slice(gc0), loopP99: loop.percentile(99) / 1e6 };
      process.send!({ kind: 'done', result });
      for (const l of legs) for (const ws of l.sockets) ws.close();
      legs = [];
    },
    start + seconds * 1000 + 500 - epoch(),
  );
}

process.on('message', (m: ProbeMessage) => {
  if (m.kind === 'open') void open(m.legs, m.sessions).then(() => process.send!({ kind: 'open' }));
  else run(m.start, m.seconds, m.rate);
});
process.on('disconnect', () => process.exit(0));
