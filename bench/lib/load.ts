// Load generators. All traffic goes to 127.0.0.1; every loop is bounded by a count and a deadline.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Pool, type Dispatcher } from 'undici';
import { PEERS } from './procs.ts';
import { summarize, type Summary } from './stats.ts';

export type TargetName =
  | 'direct' | 'floor' | 'baseline' | 'gateway' | 'logging' | 'logging-pg' | 'cache-hit' | 'cache-bypass' | 'governed' | 'governed-redis'
  | 'portkey' | 'litellm';

/** The peers: other gateways measured in the same run. */
export const PEERS_UNDER_TEST: readonly TargetName[] = ['portkey', 'litellm'];

export interface Target {
  name: TargetName;
  /** Origin, e.g. http://127.0.0.1:8080 */
  origin: string;
  /** Path of chat completions on that origin. */
  path: string;
  headers: Record<string, string>;
  /** The model as this target wants it (`openai/gpt-4o` through a gateway, `gpt-4o` direct). */
  model: string;
}

/** Short prompt: the mock answers "Mock reply to: <prompt>", one SSE event per word. */
export const SHORT_PROMPT = 'Say hello';
/** Longer prompt for the held-streams test: 14 words + role, finish and [DONE] = 17 events. */
export const STREAM_PROMPT = 'Tell me a short story about a lighthouse keeper at night';

export function body(t: Target, stream: boolean, prompt = SHORT_PROMPT): string {
  return JSON.stringify({
    model: t.model,
    messages: [{ role: 'user', content: prompt }],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- concurrency 1

export interface SeqResult {
  samples: number[];
  errors: number;
}

/**
 * Sequential requests (one connection per target), targets interleaved in blocks so drift in
 * machine noise hits every target alike. Returns per-target latency samples in ms.
 */
export async function sequential(
  targets: Target[],
  opts: { warmup: number; requests: number; blocks: number; stream: boolean; deadline: number },
): Promise<Map<TargetName, SeqResult & { ttft: number[] }>> {
  const out = new Map<TargetName, SeqResult & { ttft: number[] }>();
  const clients = new Map<TargetName, Client>();
  for (const t of targets) {
    out.set(t.name, { samples: [], errors: 0, ttft: [] });
    clients.set(t.name, new Client(t.origin, { headersTimeout: 10_000, bodyTimeout: 10_000, keepAliveTimeout: 30_000 }));
  }
  const one = async (t: Target, record: boolean): Promise<void> => {
    const r = out.get(t.name)!;
    const payload = body(t, opts.stream);
    const t0 = performance.now();
    let first = Number.NaN;
    try {
      const res = await clients.get(t.name)!.request({ method: 'POST', path: t.path, headers: t.headers, body: payload });
      let tail = '';
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (Number.isNaN(first)) {
          const s = chunk.toString('latin1');
          if (!opts.stream || s.includes('data:')) first = performance.now() - t0;
        }
        if (opts.stream) tail = (tail + chunk.toString('latin1')).slice(-64);
      }
      const total = performance.now() - t0;
      const ok = res.statusCode === 200 && (!opts.stream || tail.includes('[DONE]'));
      if (!ok) {
        if (record) r.errors++;
        return;
      }
      if (record) {
        r.samples.push(total);
        if (opts.stream) r.ttft.push(first);
      }
    } catch {
      if (record) r.errors++;
    }
  };
  try {
    for (const t of targets) {
      for (let i = 0; i < opts.warmup && performance.now() < opts.deadline; i++) await one(t, false);
    }
    const perBlock = Math.ceil(opts.requests / opts.blocks);
    for (let b = 0; b < opts.blocks; b++) {
      for (const t of targets) {
        for (let i = 0; i < perBlock && performance.now() < opts.deadline; i++) await one(t, true);
      }
    }
  } finally {
    await Promise.allSettled([...clients.values()].map((c) => c.close()));
  }
  return out;
}

// ---------------------------------------------------------------- open-loop fixed rate

export interface RateResult {
  rate: number;
  durationS: number;
  sent: number;
  /** Requests sent including the warm-up (for CPU per request). */
  sentAll: number;
  ok: number;
  errors: number;
  /** OK answers completed inside the measuring window, per second. */
  achievedRps: number;
  /** Latency from each request's scheduled send time (coordinated-omission free), ms. */
  latency: Summary;
}

/**
 * Open-loop constant-rate load: request i is due at start + i/rate regardless of earlier answers
 * (a slow target gets more, not fewer, requests in flight). Latency counts from the due time.
 */
export async function fixedRate(
  t: Target,
  opts: {
    rate: number; durationMs: number; warmupMs: number; drainMs: number; maxInFlight: number; stream?: boolean;
    /** Each measured answer: when it was due (performance.now()), its latency in ms, and whether it was a 200. */
    onSample?: (due: number, latencyMs: number, ok: boolean) => void;
  },
): Promise<RateResult> {
  const pool = new Pool(t.origin, { connections: 1024, headersTimeout: 10_000, bodyTimeout: 10_000, keepAliveTimeout: 30_000 });
  const payload = body(t, opts.stream ?? false);
  const samples: number[] = [];
  let sent = 0;
  let sentAll = 0;
  let ok = 0;
  let errors = 0;
  let okInWindow = 0;
  let inFlight = 0;
  const fire = (due: number, windowStart: number, windowEnd: number, record: boolean) => {
    if (inFlight >= opts.maxInFlight) {
      if (record) errors++;
      return;
    }
    inFlight++;
    sentAll++;
    if (record) sent++;
    pool
      .request({ method: 'POST', path: t.path, headers: t.headers, body: payload })
      .then(async (res) => {
        await res.body.dump();
        const now = performance.now();
        if (!record) return;
        opts.onSample?.(due, now - due, res.statusCode === 200);
        if (res.statusCode === 200) {
          ok++;
          samples.push(now - due);
          if (now >= windowStart && now <= windowEnd) okInWindow++;
        } else errors++;
      })
      .catch(() => {
        if (record) errors++;
      })
      .finally(() => {
        inFlight--;
      });
  };
  const runFor = (ms: number, record: boolean) =>
    new Promise<{ start: number; end: number }>((resolve) => {
      const interval = 1000 / opts.rate;
      const start = performance.now();
      const end = start + ms;
      let i = 0;
      const tick = () => {
        const now = performance.now();
        while (start + i * interval <= Math.min(now, end)) {
          fire(start + i * interval, start, end, record);
          i++;
        }
        if (now >= end) {
          clearInterval(timer);
          resolve({ start, end });
        }
      };
      const timer = setInterval(tick, 1);
      tick();
    });
  try {
    if (opts.warmupMs > 0) await runFor(opts.warmupMs, false);
    const { start, end } = await runFor(opts.durationMs, true);
    const drainUntil = performance.now() + opts.drainMs;
    while (inFlight > 0 && performance.now() < drainUntil) await sleep(10);
    errors += inFlight; // still unanswered: counted as failures
    const durationS = (end - start) / 1000;
    return { rate: opts.rate, durationS, sent, sentAll, ok, errors, achievedRps: okInWindow / durationS, latency: summarize(samples) };
  } finally {
    await pool.destroy().catch(() => {});
  }
}

// ---------------------------------------------------------------- saturation (closed loop)

export interface SaturationResult {
  tool: string;
  connections: number;
  durationS: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  /** 2xx answers per second. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export function hasWrk(): boolean {
  return ['/usr/bin/wrk', '/usr/local/bin/wrk'].some((p) => existsSync(p));
}

function runChild(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} exited ${code}: ${err.slice(-500)}`));
    });
  });
}

function wrkMs(s: string | undefined): number {
  if (!s) return Number.NaN;
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s.trim());
  if (!m) return Number.NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

/** Closed-loop saturation with wrk (one thread, C) or, without wrk, autocannon in a child process. */
export async function saturation(t: Target, opts: { connections: number; durationS: number; tmpDir: string }): Promise<SaturationResult> {
  const url = t.origin + t.path;
  const headers = { 'content-type': 'application/json', ...t.headers };
  const payload = body(t, false);
  if (hasWrk()) {
    const script = join(opts.tmpDir, `wrk-${t.name}.lua`);
    const lines = ['wrk.method = "POST"', `wrk.body = ${JSON.stringify(payload)}`];
    for (const [k, v] of Object.entries(headers)) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
    writeFileSync(script, lines.join('\n') + '\n');
    const out = await runChild('wrk', ['-t1', `-c${opts.connections}`, `-d${opts.durationS}s`, '--timeout', '10s', '--latency', '-s', script, url],
      (opts.durationS + 20) * 1000);
    const requests = Number(/(\d+) requests in ([\d.]+)(\w+)/.exec(out)?.[1] ?? 0);
    const inS = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
    const durationS = inS ? wrkMs(`${inS[2]}${inS[3]}`) / 1000 : opts.durationS;
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const se = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const socketErrors = se ? se.slice(1).reduce((s, x) => s + Number(x), 0) : 0;
    const p50 = wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1]);
    const p99 = wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1]);
    return { tool: 'wrk', connections: opts.connections, durationS, requests, non2xx, socketErrors, rps: (requests - non2xx) / durationS, p50Ms: p50, p99Ms: p99 };
  }
  const args = [join(PEERS, 'node_modules/autocannon/autocannon.js'), '--json', '-c', String(opts.connections), '-d', String(opts.durationS), '-m', 'POST', '-b', payload];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  const out = await runChild(process.execPath, args, (opts.durationS + 20) * 1000);
  const r = JSON.parse(out) as {
    requests: { total: number }; non2xx: number; errors: number; timeouts: number; duration: number;
    latency: { p50: number; p99: number }; '2xx': number;
  };
  return {
    tool: 'autocannon',
    connections: opts.connections,
    durationS: r.duration,
    requests: r.requests.total,
    non2xx: r.non2xx,
    socketErrors: r.errors + r.timeouts,
    rps: r['2xx'] / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
  };
}

// ---------------------------------------------------------------- held streams

export interface StreamsResult {
  n: number;
  completed: number;
  /** Streams that completed but had a gap with no data longer than the stall threshold. */
  stalled: number;
  /** Errors, bad status, truncated or unfinished by the deadline. */
  failed: number;
  stallFree: boolean;
  maxGapMs: number;
  gapP99Ms: number;
  ttft: Summary;
  /** Time to the first byte of the stream opened last (the Nth), ms; NaN when it failed. */
  lastTtftMs: number;
  /** This process's CPU (the client's, with whatever else it runs) over the level, per stream, ms. */
  clientCpuMsPerStream: number;
  /** The proxy's CPU time over the level divided by its streams, ms (set by the harness; none for direct). */
  cpuMsPerStream?: number;
}

/**
 * Open n streaming requests (spread evenly over rampMs, one connection each) and hold them all
 * until they finish. A stall is a gap with no bytes longer than stallMs once the first byte came,
 * or a first byte later than firstByteStallMs after the request was sent.
 */
export async function heldStreams(
  t: Target,
  opts: { n: number; rampMs: number; stallMs: number; firstByteStallMs: number; timeoutMs: number },
): Promise<StreamsResult> {
  const pool = new Pool(t.origin, { connections: opts.n, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs, keepAliveTimeout: 5_000 });
  const payload = body(t, true, STREAM_PROMPT);
  /** Streams still open, aborted at the deadline. */
  const open = new Set<Dispatcher.DispatchController>();
  let completed = 0;
  let stalled = 0;
  let failed = 0;
  let maxGap = 0;
  const maxGaps: number[] = [];
  const ttfts: number[] = [];
  let lastTtft = Number.NaN;
  const DONE = Buffer.from('[DONE]');
  // Each stream read through undici's dispatch handler: one callback per read, no body stream, no
  // promise per read and no string per chunk. The client shares the 2 cores with the mock and the
  // target, so what it spends per read is taken from them (a Readable read through an async
  // iterator, with the tail kept as a string, cost it about as much as a proxy's relay).
  const one = (isLast: boolean): Promise<void> =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      let last = t0;
      let gap = 0;
      let first = Number.NaN;
      let status = 0;
      // The last bytes seen: enough to find `[DONE]` at the end, without keeping the stream.
      let tail: Buffer = Buffer.alloc(0);
      let ctl: Dispatcher.DispatchController | undefined;
      const fail = () => {
        if (ctl) open.delete(ctl);
        failed++;
        resolve();
      };
      pool.dispatch(
        { origin: t.origin, method: 'POST', path: t.path, headers: t.headers, body: payload },
        {
          onRequestStart: (c) => {
            ctl = c;
            open.add(c);
          },
          onResponseStart: (_c, statusCode) => {
            status = statusCode;
          },
          onResponseData: (_c, chunk) => {
            const now = performance.now();
            if (Number.isNaN(first)) {
              first = now - t0;
              if (isLast) lastTtft = first;
            } else if (now - last > gap) {
              gap = now - last;
            }
            last = now;
            tail = chunk.length >= 64 ? chunk : Buffer.concat([tail, chunk]).subarray(-64);
          },
          onResponseEnd: () => {
            if (ctl) open.delete(ctl);
            if (status !== 200 || tail.indexOf(DONE) < 0) return fail();
            completed++;
            ttfts.push(first);
            maxGaps.push(gap);
            maxGap = Math.max(maxGap, gap);
            if (gap > opts.stallMs || first > opts.firstByteStallMs) stalled++;
            resolve();
          },
          onResponseError: fail,
        },
      );
    });
  const all: Promise<void>[] = [];
  const cpu0 = process.cpuUsage();
  const timer = setTimeout(() => {
    for (const c of open) c.abort(new Error('held stream past the deadline'));
  }, opts.timeoutMs);
  try {
    const start = performance.now();
    for (let i = 0; i < opts.n; i++) {
      const due = start + (i * opts.rampMs) / opts.n;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      all.push(one(i === opts.n - 1));
    }
    await Promise.all(all);
  } finally {
    clearTimeout(timer);
    await pool.destroy().catch(() => {});
  }
  return {
    n: opts.n,
    completed,
    stalled,
    failed,
    stallFree: completed === opts.n && stalled === 0,
    maxGapMs: maxGap,
    gapP99Ms: summarize(maxGaps).p99,
    ttft: summarize(ttfts),
    lastTtftMs: lastTtft,
    clientCpuMsPerStream: (() => {
      const used = process.cpuUsage(cpu0);
      return (used.user + used.system) / 1000 / opts.n;
    })(),
  };
}

/** `n` requests, `concurrency` at a time: CPU per answered request holds on a machine too loaded for a fixed rate. */
export async function closedLoop(
  t: Target,
  concurrency: number,
  n: number,
  /** stream: streaming requests, read to the end; until: no new request after this performance.now(). */
  opts: { stream?: boolean; until?: number } = {},
): Promise<{ ok: number; errors: number; p50: number; p99: number }> {
  const pool = new Pool(t.origin, { connections: concurrency, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const payload = body(t, opts.stream ?? false);
  const until = opts.until ?? Number.POSITIVE_INFINITY;
  const times: number[] = [];
  let next = 0;
  let errors = 0;
  const worker = async () => {
    while (next < n && performance.now() < until) {
      next++;
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path: t.path, headers: t.headers, body: payload });
        await res.body.dump();
        if (res.statusCode === 200) times.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.destroy().catch(() => undefined);
  }
  times.sort((a, b) => a - b);
  return { ok: times.length, errors, p50: times[Math.floor(times.length / 2)] ?? Number.NaN, p99: times[Math.floor(times.length * 0.99)] ?? Number.NaN };
}
