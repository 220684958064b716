// The OpenTelemetry SDK, loaded only when tracing is configured (lazy.ts): a gateway without it
// never loads a byte of it. Per tracing settings: the SDK's sampler, resource and batch processor,
// which exports spans off the request path (after the answer) over OTLP HTTP/protobuf or gRPC, and
// the gateway's lean tracer (tracer.ts) making the spans it is handed.
import { readFileSync } from 'node:fs';
import type * as Api from '@opentelemetry/api';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type * as Resources from '@opentelemetry/resources';
import type * as ProtoExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type * as GrpcExporter from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as Grpc from '@grpc/grpc-js';
import { lazy } from '../lazy.ts';
import { log } from '../log.ts';
import type { TracingSettings } from './settings.ts';
import { LeanTracer } from './tracer.ts';
import { encodeTraceRequest } from './otlp-encode.ts';

const api = lazy<typeof Api>('@opentelemetry/api');
const sdkTrace = lazy<typeof SdkTrace>('@opentelemetry/sdk-trace');
const resources = lazy<typeof Resources>('@opentelemetry/resources');
const protoExporter = lazy<typeof ProtoExporter>('@opentelemetry/exporter-trace-otlp-proto');
const grpcExporter = lazy<typeof GrpcExporter>('@opentelemetry/exporter-trace-otlp-grpc');
const grpc = lazy<typeof Grpc>('@grpc/grpc-js');

/** Spans held for export at most, and per export. */
const QUEUE = 8192;
const BATCH = 1024;

export interface Sdk {
  readonly api: typeof Api;
  readonly tracer: LeanTracer;
  /** Who writes the protobuf: the gateway's encoder, or the SDK's serializer where it could not be put in. */
  readonly encoder: 'gateway' | 'sdk';
  /** Exports what is queued (tests, shutdown). */
  flush(): Promise<void>;
  /** Flushes, then stops the exporter. */
  shutdown(): Promise<void>;
}

/** Tracing for these settings (throws when the SDK cannot be loaded or the CA file read). */
export function startSdk(settings: TracingSettings): Sdk {
  const otel = api();
  // No context manager: spans started inside a request's work (a tool call, an agent turn) find
  // their parent through Tracing.live by request id, so no async context is carried on every await.
  const { BatchSpanProcessor } = sdkTrace();
  const resource = resources().resourceFromAttributes({ ...settings.resource, 'service.name': settings.serviceName });
  // Bounded: past QUEUE spans waiting for export (a collector down or slow), new ones are dropped
  // (counted by the SDK), never held; large batches make fewer, cheaper exports.
  const spanExporter = exporter(settings);
  const encoder = useGatewayEncoder(spanExporter);
  const processor = new BatchSpanProcessor({ exporter: spanExporter, scheduledDelayMillis: 1000, maxQueueSize: QUEUE, maxExportBatchSize: BATCH });
  const tracer = new LeanTracer(otel, sampler(settings), processor, resource, 'skybridge');
  log.info('tracing on', { protocol: settings.protocol, endpoint: withoutCredentials(settings.endpoint), sampler: settings.sampler, ratio: settings.ratio, service: settings.serviceName, content: settings.captureContent });
  return {
    api: otel,
    tracer,
    encoder,
    flush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
}

function sampler(s: TracingSettings): SdkTrace.Sampler {
  const { AlwaysOnSampler, AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = sdkTrace();
  switch (s.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(s.ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(s.ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function exporter(s: TracingSettings): SdkTrace.SpanExporter {
  const ca = s.caFile ? readFileSync(s.caFile) : undefined;
  if (s.protocol === 'grpc') {
    const g = grpc();
    const metadata = new g.Metadata();
    for (const [k, v] of Object.entries(s.headers)) metadata.set(k.toLowerCase(), v);
    const credentials = s.insecure && !ca ? g.credentials.createInsecure() : g.credentials.createSsl(ca ?? null);
    // The exporter's own copy of sdk-trace may be another patch release: the SpanExporter shape is the same.
    return new (grpcExporter().OTLPTraceExporter)({ url: s.endpoint, metadata, credentials }) as unknown as SdkTrace.SpanExporter;
  }
  return new (protoExporter().OTLPTraceExporter)({ url: s.endpoint, headers: { ...s.headers }, ...(ca && { httpAgentOptions: { ca } }) });
}

/**
 * The SDK exporters (HTTP and gRPC alike) hand each batch to a serializer they are built with, with
 * no option to choose another: the gateway's encoder (otlp-encode.ts: the same bytes, about half
 * the work) is put in its place. Should a release of the exporter hold it elsewhere, the SDK's own
 * serializer stays (the unit test says so first).
 */
function useGatewayEncoder(e: SdkTrace.SpanExporter): 'gateway' | 'sdk' {
  const delegate = (e as { _delegate?: { _serializer?: Partial<Serializer> } })._delegate;
  const current = delegate?._serializer;
  if (!delegate || typeof current?.serializeRequest !== 'function' || typeof current.deserializeResponse !== 'function') {
    log.debug('tracing: the OTLP exporter keeps its own serializer');
    return 'sdk';
  }
  const deserialize = current.deserializeResponse.bind(current);
  delegate._serializer = { serializeRequest: (spans: SdkTrace.ReadableSpan[]) => encodeTraceRequest(spans), deserializeResponse: deserialize };
  return 'gateway';
}

interface Serializer {
  serializeRequest(spans: SdkTrace.ReadableSpan[]): Uint8Array | undefined;
  deserializeResponse(data: Uint8Array): unknown;
}

/** A URL as it may be logged: user:password@ left out. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
