// The request and upstream duration histograms' children update prom-client's record of their
// label tuple themselves: what a scrape shows must be what prom-client's own observe() would show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const VALUES = [0, 0.004, 0.005, 0.0051, 0.02, 0.3, 0.3, 1, 7, 119.9, 120, 121, 5000];

/** The lines of one metric in an exposition. */
const linesOf = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(name));

async function reference(): Promise<string> {
  const registry = new Registry();
  const h = new Histogram({ name: 'skybridge_request_duration_seconds', help: 'x', labelNames: ['operation', 'provider', 'model', 'status'], buckets: BUCKETS, registers: [registry] });
  for (const v of VALUES) h.labels('chat_completion', 'openai', 'gpt-4o', '200').observe(v);
  h.labels('chat_completion', 'openai', 'gpt-4o', '502').observe(0.2);
  return registry.metrics();
}

test('bound duration observations scrape as prom-client observe() would show them, across scrapes', async () => {
  const m = new Metrics();
  const ok = m.requestTime('chat_completion', 'openai', 'gpt-4o', '200');
  // Half before a first scrape, half after: nothing is lost or counted twice.
  for (const v of VALUES.slice(0, 6)) ok.observe(v);
  const first = linesOf(await m.registry.metrics(), 'skybridge_request_duration_seconds_count');
  assert.deepEqual(first, ['skybridge_request_duration_seconds_count{operation="chat_completion",provider="openai",model="gpt-4o",status="200"} 6']);
  for (const v of VALUES.slice(6)) m.requestTime('chat_completion', 'openai', 'gpt-4o', '200').observe(v);
  m.requestTime('chat_completion', 'openai', 'gpt-4o', '502').observe(0.2);
  const got = linesOf(await m.registry.metrics(), 'skybridge_request_duration_seconds');
  assert.deepEqual(got, linesOf(await reference(), 'skybridge_request_duration_seconds'));
  assert.ok(got.length > 2 * BUCKETS.length, 'both tuples are shown');
  // A scrape with nothing new shows the same figures.
  assert.deepEqual(linesOf(await m.registry.metrics(), 'skybridge_request_duration_seconds'), got);
  assert.throws(() => ok.observe(Number.NaN), TypeError);
});

test('upstream durations: the same after a reset of the histogram (a record made again)', async () => {
  const m = new Metrics();
  m.upstreamTime('openai', 'gpt-4o', '200').observe(0.02);
  await m.registry.metrics();
  m.upstreamDuration.reset();
  m.upstreamTime('openai', 'gpt-4o', '200').observe(0.3);
  const lines = linesOf(await m.registry.metrics(), 'skybridge_upstream_duration_seconds');
  assert.ok(lines.includes('skybridge_upstream_duration_seconds_count{provider="openai",model="gpt-4o",status="200"} 1'), lines.join('\n'));
  assert.ok(lines.includes('skybridge_upstream_duration_seconds_bucket{le="0.25",provider="openai",model="gpt-4o",status="200"} 0'), lines.join('\n'));
  assert.ok(lines.includes('skybridge_upstream_duration_seconds_sum{provider="openai",model="gpt-4o",status="200"} 0.3'), lines.join('\n'));
});

test('time to first token: bound observations scrape as prom-client observe() would show them', async () => {
  const m = new Metrics();
  const registry = new Registry();
  const h = new Histogram({ name: 'skybridge_stream_first_token_seconds', help: 'x', labelNames: ['provider', 'model'], buckets: BUCKETS, registers: [registry] });
  for (const v of VALUES) {
    m.firstTokenTime('openai', 'gpt-4o').observe(v);
    h.labels('openai', 'gpt-4o').observe(v);
  }
  m.firstTokenTime('anthropic', 'claude').observe(0.2);
  h.labels('anthropic', 'claude').observe(0.2);
  const got = linesOf(await m.registry.metrics(), 'skybridge_stream_first_token_seconds');
  assert.ok(got.length > 2, got.join('\n'));
  assert.deepEqual(got, linesOf(await registry.metrics(), 'skybridge_stream_first_token_seconds'));
});
