// The text relay's consumer cost in one process, load-independent in its ratios: K streams of 16
// upstream reads each, relayed (a) through the async iterators an answer was written with before
// (relayText, the runner's observing generator, respond's loop) and (b) pushed (pumpText). Reads
// arrive one per stream per event-loop turn, as held streams' chunks do; rounds alternate.
//
//   node bench/relay-micro.ts [--streams 2000] [--rounds 6]
import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import { checkConfig } from '../proxy/src/config/check.ts';
import { compileSnapshot } from '../proxy/src/config/snapshot.ts';
import { createServices } from '../proxy/src/services.ts';
import { Metrics } from '../proxy/src/metrics/metrics.ts';
import { RequestContext } from '../proxy/src/pipeline/context.ts';
import { pumpText, relayable, relayText } from '../proxy/src/pipeline/relay.ts';
import { passthroughChunkPlan } from '../proxy/src/operations/chunk-stream-plan.ts';
import { median } from './lib/stats.ts';

const { values } = parseArgs({ options: { streams: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '6' } } });
const K = Number(values.streams);
const ROUNDS = Number(values.rounds);
const snapshot = compileSnapshot(checkConfig({ providers: { openai: { keys: [{ name: 'k', value: 'sk-upstream', weight: 1 }] } } }, 'bench').config);
const services = createServices({ metrics: new Metrics({ processMetrics: false }) });
const extra = { provider: 'openai', request_type: 'chat_completion_stream', model_requested: 'openai/gpt-4o' };
const opts = { extra, provider: 'openai', rawResponse: false, rawRequest: undefined };
const chunk = (i: number) =>
  Buffer.from(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"word${i} "},"finish_reason":null}]}\n\n`);
const USAGE = Buffer.from('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":15,"total_tokens":24}}\n\ndata: [DONE]\n\n');
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function* observed<T>(inner: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* inner;
  } finally {
    // the runner's after hooks
  }
}

let written = 0;
const sink = { write: (t: string) => ((written += t.length), true), drained: () => Promise.resolve() };

async function round(pushed: boolean): Promise<number> {
  const bodies = Array.from({ length: K }, () => new PassThrough());
  const plan = passthroughChunkPlan(false);
  const cpu0 = process.cpuUsage();
  const done = bodies.map(async (body) => {
    const ctx = new RequestContext({ services, snapshot, operation: 'chat' });
    if (!relayable(ctx, plan, opts)) throw new Error('the plain gateway relays this stream as text');
    if (pushed) return pumpText(ctx, body, plan, opts)(sink);
    for await (const batch of observed(relayText(ctx, body, plan, opts))) {
      let out = '';
      for (const item of batch) out += item;
      sink.write(out);
    }
  });
  for (let i = 0; i < 15; i++) {
    for (const b of bodies) b.write(chunk(i));
    await turn();
  }
  for (const b of bodies) b.end(USAGE);
  await Promise.all(done);
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / K;
}

const a: number[] = [];
const b: number[] = [];
await round(false);
await round(true);
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2) {
    b.push(await round(true));
    a.push(await round(false));
  } else {
    a.push(await round(false));
    b.push(await round(true));
  }
}
const ratios = a.map((x, i) => b[i] / x);
process.stdout.write(`${K} streams × 16 reads, ${ROUNDS} rounds: iterators ${median(a).toFixed(0)} µs/stream, pushed ${median(b).toFixed(0)} µs/stream, pushed/iterators ${median(ratios).toFixed(2)} (per round ${ratios.map((x) => x.toFixed(2)).join(', ')}); ${written} chars\n`);
