// One thread of bench/realtime.ts's clients (a worker): its share of the sessions, each sending one
// `session.update` a second and timing the `session.updated` that answers it. Each session sends
// on its own clock: at its phase (drawn once) plus whole seconds from a start time every thread
// shares ("fixed"), as independent clients would. The old way ("interval": a setInterval per
// session) is kept for comparison: Node re-arms each interval from the time its callback ran, so
// sessions whose callbacks ran in one late timer pass stay together, and over a run the sends clump
// into bursts that come from this process, not from the clients' traffic.
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export interface ClientJob {
  url: string;
  headers: Record<string, string>;
  /** The sessions' global numbers, and each one's phase within the second (ms). */
  sessions: number[];
  phases: number[];
  seconds: number;
  schedule: 'fixed' | 'interval';
}

/** What a thread answers at the end; times on the epoch clock (ms). */
export interface ClientResult {
  failed: number;
  sentAt: Float64Array;
  rtt: Float64Array;
  /** Answers per session, in the order of `sessions`. */
  replies: number[];
  loopP99: number;
  gc: [number, number][];
}

const job = workerData as ClientJob;
const port = parentPort!;
const epoch = (): number => performance.timeOrigin + performance.now();

const gc: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gc.push([performance.timeOrigin + e.startTime, e.duration]);
}).observe({ entryTypes: ['gc'] });

const n = job.sessions.length;
const sockets: WebSocket[] = [];
const replies = new Array<number>(n).fill(0);
const sentAt: number[] = [];
const rtt: number[] = [];
/** Send time (performance.now()) of each event awaiting its answer, by the id it carries. */
const pending = new Map<string, number>();
let failed = 0;

for (let i = 0; i < n; i += 50) {
  const batch = Array.from({ length: Math.min(50, n - i) }, (_, k) => {
    const local = i + k;
    const ws = new WebSocket(job.url, { headers: job.headers, perMessageDeflate: false });
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      const text = data.toString();
      if (!text.includes('"session.updated"')) return;
      const id = /"instructions":"(b\d+-\d+)"/.exec(text)?.[1];
      const sent = id === undefined ? undefined : pending.get(id);
      if (sent === undefined) return;
      pending.delete(id!);
      sentAt.push(performance.timeOrigin + sent);
      rtt.push(at - sent);
      replies[local]++;
    });
    return new Promise<WebSocket>((resolve) => {
      ws.once('open', () => resolve(ws));
      ws.once('error', () => {
        failed++;
        resolve(ws);
      });
    });
  });
  sockets.push(...(await Promise.all(batch)));
}

const counts = new Array<number>(n).fill(0);
function send(local: number): void {
  const ws = sockets[local];
  if (ws.readyState !== 1) return;
  const id = `b${job.sessions[local]}-${counts[local]++}`;
  pending.set(id, performance.now());
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: id } }));
}

function runFixed(t0: number): void {
  const order = [...job.phases.keys()].sort((a, b) => job.phases[a] - job.phases[b]);
  let second = 0;
  let next = 0;
  const due = (): number => t0 + second * 1000 + job.phases[order[next]];
  const pump = (): void => {
    const now = epoch();
    while (second < job.seconds && due() <= now) {
      send(order[next]);
      if (++next === order.length) {
        next = 0;
        second++;
      }
    }
    if (second < job.seconds) setTimeout(pump, Math.max(0, due() - epoch()));
  };
  setTimeout(pump, Math.max(0, t0 - epoch()));
}

function runInterval(t0: number): void {
  setTimeout(() => {
    for (let local = 0; local < n; local++) {
      setTimeout(() => {
        send(local);
        const every = setInterval(() => {
          if (counts[local] >= job.seconds) clearInterval(every);
          else send(local);
        }, 1000);
      }, job.phases[local]);
    }
  }, Math.max(0, t0 - epoch()));
}

port.postMessage({ kind: 'open' });
port.once('message', (msg: { start: number }) => {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  if (job.schedule === 'fixed') runFixed(msg.start);
  else runInterval(msg.start);
  // The last sends go out just before start + seconds; their answers get half a second more.
  setTimeout(
    () => {
      loop.disable();
      const result: ClientResult = { failed, sentAt: Float64Array.from(sentAt), rtt: Float64Array.from(rtt), replies, loopP99: loop.percentile(99) / 1e6, gc };
      port.postMessage({ kind: 'done', result });
      for (const ws of sockets) ws.close();
      setTimeout(() => process.exit(0), 1000);
    },
    msg.start + job.seconds * 1000 + 500 - epoch(),
  );
});
