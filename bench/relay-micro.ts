// The relay's consumer cost in one process, load-independent in its ratios: K streams of 16
// upstream reads each, relayed (a) through the async iterators an answer was written with before
// (relayText, the runner's observing generator, respond's loop), (b) pushed through the text relay
// (pumpRelayed with a TextRelayer) and (c) pushed through the byte relay (pumpText, what an HTTP
// answer takes). Reads arrive one per stream per event-loop turn, as held streams' chunks do;
// rounds rotate the order.
//
//   node bench/relay-micro.ts [--streams 2000] [--rounds 6]
import { PassThrough } from 'node:stream';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { checkConfig } from '../proxy/src/config/check.ts';
import { compileSnapshot } from '../proxy/src/config/snapshot.ts';
import { createServices } from '../proxy/src/services.ts';
import { Metrics } from '../proxy/src/metrics/metrics.ts';
import { RequestContext } from '../proxy/src/pipeline/context.ts';
import { pumpRelayed, pumpText, relayable, relayText, TextRelayer } from '../proxy/src/pipeline/relay.ts';
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
// As an HTTP answer's write does: a string's byte length for the chunk header, and its encoding.
const sink = { write: (t: string, encoding?: 'latin1') => ((written += Buffer.from(t, encoding ?? 'utf8').length), true), drained: () => Promise.resolve() };

type Way = 'iterators' | 'text' | 'bytes';
const WAYS: Way[] = ['iterators', 'text', 'bytes'];

async function round(way: Way): Promise<number> {
  const bodies = Array.from({ length: K }, () => new PassThrough());
  const plan = passthroughChunkPlan(false);
  const cpu0 = process.cpuUsage();
  const done = bodies.map(async (body) => {
    const ctx = new RequestContext({ services, snapshot, operation: 'chat' });
    if (!relayable(ctx, plan, opts)) throw new Error('the plain gateway relays this stream as text');
    if (way === 'bytes') return pumpText(ctx, body, plan, opts)(sink);
    if (way === 'text') return pumpRelayed(ctx, body, () => new TextRelayer(ctx, plan, opts))(sink);
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

const cpu = new Map<Way, number[]>(WAYS.map((w) => [w, []]));
for (const w of WAYS) await round(w);
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < WAYS.length; i++) {
    const w = WAYS[(i + r) % WAYS.length];
    cpu.get(w)!.push(await round(w));
  }
}
const per = (w: Way) => cpu.get(w)!;
const ratios = (a: Way, b: Way) => per(b).map((x, i) => x / per(a)[i]);
const show = (a: Way, b: Way) => `${b}/${a} ${median(ratios(a, b)).toFixed(2)} (per round ${ratios(a, b).map((x) => x.toFixed(2)).join(', ')})`;
process.stdout.write(
  `${K} streams × 16 reads, ${ROUNDS} rounds, load ${loadavg()[0].toFixed(1)}: ${WAYS.map((w) => `${w} ${median(per(w)).toFixed(0)} µs/stream`).join(', ')}; ${show('text', 'bytes')}; ${show('iterators', 'text')}; ${written} bytes\n`,
);
