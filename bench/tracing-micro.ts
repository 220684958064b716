// The span work of one traced request in one process, no I/O: the tracing stage's `before`, two
// wrapped stages that do nothing, one upstream attempt, the `after` with a relayed OpenAI answer,
// and the batch processor's export through the gateway's OTLP encoder (bytes made, not sent).
// CPU time (process.cpuUsage) per request over batches of 100 requests per macrotask, as requests
// arrive. Run it from two checkouts in turn to compare builds (only the ratio means anything on a
// loaded machine). The request path and the export are timed apart: the spans of a round are held
// and encoded after it, in the gateway's batches.
//   node bench/tracing-micro.ts [requests=20000]
import * as api from '@opentelemetry/api';
import { AlwaysOnSampler, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { RequestContext, type ContextServices } from '../proxy/src/pipeline/context.ts';
import type { Outcome } from '../proxy/src/pipeline/outcome.ts';
import type { Stage } from '../proxy/src/pipeline/stage.ts';
import type { Snapshot } from '../proxy/src/config/snapshot.ts';
import type { Target } from '../proxy/src/pipeline/target.ts';
import { LeanTracer } from '../proxy/src/tracing/tracer.ts';
import { encodeTraceRequest } from '../proxy/src/tracing/otlp-encode.ts';
import { initTracingFields, tracedStage, tracingStage } from '../proxy/src/tracing/stage.ts';
import type { Tracing } from '../proxy/src/tracing/service.ts';
import type { TracingSettings } from '../proxy/src/tracing/settings.ts';

const REQUESTS = Number(process.argv[2] ?? 20000);
let bytes = 0;
/** The batches handed to the exporter during a round, encoded after it (timed apart). */
const held: ReadableSpan[][] = [];
const exporter: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    held.push(spans);
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};
// Exports of at most 1,024 spans, as the gateway's (sdk.ts): one export of every span held would
// grow the encoder's buffer to the whole run's bytes and time that growth, not the encoding. The
// processor's batching counts to the request path, the encoding of its batches to the export.
const processor = new BatchSpanProcessor({ exporter, scheduledDelayMillis: 600_000, maxQueueSize: 1 << 20, maxExportBatchSize: 1024 });
const tracer = new LeanTracer(api, new AlwaysOnSampler(), processor, resourceFromAttributes({ 'service.name': 'skybridge' }), 'skybridge');
const settings = { captureContent: false } as TracingSettings;
const t = { settings, sdk: { api, tracer, encoder: 'gateway', flush: () => processor.forceFlush(), shutdown: () => processor.shutdown() }, live: new Map() } as unknown as Tracing;

const traced = tracingStage(t);
// Two stages that did nothing (no span), as identify and plan for a request without a key.
const wrap = tracedStage as (s: Stage, t: Tracing) => Stage;
const idle = [0, 1].map((i) => wrap({ name: `idle${i}`, before: () => undefined, idle: () => true }, t));
const target = { provider: { name: 'openai' }, model: 'gpt-4o' } as unknown as Target;
const answer = {
  id: 'chatcmpl-abc123',
  object: 'chat.completion',
  created: 1764230000,
  model: 'gpt-4o-2024-08-06',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today? '.repeat(8) }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 64, total_tokens: 76 },
};
const text = JSON.stringify({ ...answer, extra_fields: { provider: 'openai', request_type: 'chat_completion', model_requested: 'gpt-4o', latency: 1 } });
const services = { initContext: initTracingFields } as unknown as ContextServices;
const req = { method: 'POST', url: '/v1/chat/completions' };

function one(): void {
  const ctx = new RequestContext({ services, snapshot: {} as Snapshot, operation: 'chat', http: { req } as never });
  void traced.before!(ctx);
  ctx.scope = { kind: 'model', model: 'gpt-4o', fallbacks: undefined, body: undefined };
  ctx.requestType = 'chat_completion';
  for (const s of idle) void s.before!(ctx);
  const watch = ctx.attempts!.start(target, 0, 0);
  if (!watch.headers?.traceparent) throw new Error('no traceparent');
  watch.end(200, 'key-1');
  ctx.provider = 'openai';
  ctx.model = 'gpt-4o';
  ctx.keyId = 'key-1';
  ctx.usage = answer.usage;
  (ctx as { costMemo?: number }).costMemo = 0.00067;
  const result = { kind: 'text', status: 200, text, parsed: answer } as Outcome;
  traced.after!(ctx, result);
}

const cpu = (c: NodeJS.CpuUsage) => c.user + c.system;

async function run(n: number): Promise<{ path: number; exported: number }> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i += 100) {
    for (let j = 0; j < 100; j++) one();
    await new Promise((r) => setImmediate(r));
  }
  await processor.forceFlush();
  const c1 = process.cpuUsage();
  for (const spans of held) bytes += encodeTraceRequest(spans).length;
  held.length = 0;
  return { path: (cpu(c1) - cpu(c0)) / n, exported: (cpu(process.cpuUsage()) - cpu(c1)) / n };
}

await run(5000); // warm-up: JIT
bytes = 0;
const r = await run(REQUESTS);
console.log(`span work per traced request: ${(r.path + r.exported).toFixed(1)} us: request path ${r.path.toFixed(1)} us, export ${r.exported.toFixed(1)} us (${REQUESTS} requests, ${(bytes / 1024 / 1024).toFixed(1)} MiB of OTLP)`);
await processor.shutdown();
