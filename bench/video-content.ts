// Memory while relaying a large video: the gateway (its own process, a SQLite logs store) relays
// GET /v1/videos/{id}/content of a 500 MB video from the mock provider (its own process, writing the
// bytes piece by piece as they are read). The client reads slowly enough that the gateway's
// upstream read runs ahead of its client write if anything buffered, then at full speed. The
// gateway's RSS is sampled every 20 ms; the figure is peak RSS during the relay minus RSS just
// before it. The goal: under 32 MB growth (the content is streamed, never held whole).
// The gateway runs with the image's Node flags (Dockerfile: --max-semi-space-size=8);
// BENCH_NODE_OPTIONS replaces them (e.g. '--max-semi-space-size=1'), BENCH_MALLOC sets MALLOC_ARENA_MAX.
// What grew (53-98 MB) was chunks already written and dead, waiting for V8 to collect them: each
// upstream read is a new 64 KiB buffer, freed only when its wrapper is collected. The relay now asks
// for a minor collection every 8 MiB relayed (proxy/src/upstream/relay-memory.ts; figures in
// docs/video.md and docs/benchmarks.md).
//   node bench/video-content.ts [megabytes]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { freePort, rssMb, startMock, stop } from './lib/procs.ts';
import { startGateway } from '../test/helpers/gateway.ts';
import { mockProviders } from '../test/helpers/providers.ts';

const MB = Number(process.argv[2] ?? 500);
const BYTES = MB * 1024 * 1024;
const LIMIT_MB = 32;
const NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-semi-space-size=8';

const mockPort = await freePort();
const mockProc = await startMock({ latencyMs: 0, chunkDelayMs: 0 }, mockPort, mkdtempSync(join(tmpdir(), 'video-bench-')));
const mock = `http://127.0.0.1:${mockPort}`;
const gateway = await startGateway(
  { providers: mockProviders(mock), logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } }, client: { disable_content_logging: true } },
  { args: ['--log-level', 'info'], env: { NODE_OPTIONS, ...(process.env.BENCH_MALLOC ? { MALLOC_ARENA_MAX: process.env.BENCH_MALLOC } : {}) } },
);
const pid = gateway.process.pid!;
const auth = { authorization: 'Bearer sk-openai-test' };

async function json(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await request(`${gateway.url}${path}`, {
    method,
    headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const out = (await res.body.json()) as Record<string, unknown>;
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(out)}`);
  return out;
}

/** Downloads the content, reading `pauseMs` after every `every` chunks; answers the bytes read and the peak RSS seen. */
async function relay(id: string, pauseMs: number, every: number): Promise<{ bytes: number; peak: number; seconds: number }> {
  let peak = rssMb(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
  const t = performance.now();
  try {
    const res = await request(`${gateway.url}/v1/videos/${id}/content`, { headers: auth });
    if (res.statusCode !== 200) throw new Error(`content: ${res.statusCode} ${await res.body.text()}`);
    let bytes = 0;
    let chunks = 0;
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
      if (pauseMs > 0 && ++chunks % every === 0) await sleep(pauseMs);
    }
    return { bytes, peak, seconds: (performance.now() - t) / 1000 };
  } finally {
    clearInterval(sampler);
  }
}

try {
  const created = await json('POST', '/v1/videos', { model: 'openai/sora-2', prompt: `a long video [bytes:${BYTES}]`, seconds: '4' });
  const id = String(created.id);
  while ((await json('GET', `/v1/videos/${id}`)).status !== 'completed') await sleep(10);
  await sleep(500);
  // Both measured from the RSS before the first relay: growth that stays counts.
  const base = rssMb(pid);
  const fast = await relay(id, 0, 1);
  const fastGrowth = fast.peak - base;
  const slow = await relay(id, 5, 64);
  const slowGrowth = slow.peak - base;
  const f = (x: number) => x.toFixed(1);
  console.log(`relaying a ${MB} MB video (GET /v1/videos/{id}/content), gateway node ${NODE_OPTIONS}, RSS before ${f(base)} MB`);
  console.log(`slow reader: ${f(slow.bytes / 1024 / 1024)} MB in ${f(slow.seconds)} s, peak RSS growth ${f(slowGrowth)} MB`);
  console.log(`fast reader: ${f(fast.bytes / 1024 / 1024)} MB in ${f(fast.seconds)} s, peak RSS growth ${f(fastGrowth)} MB`);
  if (slow.bytes !== BYTES || fast.bytes !== BYTES) throw new Error(`expected ${BYTES} bytes, got ${slow.bytes} and ${fast.bytes}`);
  const worst = Math.max(slowGrowth, fastGrowth);
  console.log(`${worst <= LIMIT_MB ? 'PASS' : 'FAIL'}: growth ${f(worst)} MB (limit ${LIMIT_MB} MB)`);
  if (worst > LIMIT_MB) process.exitCode = 1;
} finally {
  await gateway.stop();
  await stop(mockProc);
}
