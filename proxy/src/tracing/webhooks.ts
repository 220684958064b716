// A span per webhook delivery attempt: a child of the trace the event was raised in (the job's
// submitting client's traceparent), else a trace of its own; its context goes to the receiver as
// `traceparent`, so the receiver's spans join under the attempt. Names only: the webhook, the
// event, the attempt number, the receiver's host and its status; never the URL's path or query,
// a header, the secret or the signature.
import type { Context, SpanContext } from '@opentelemetry/api';
import { parseTraceparent, traceHeaders } from './traceparent.ts';
import type { TracingService } from './service.ts';

// The shape webhooks/dispatcher.ts's DeliveryWatcher asks for, said here so tracing names no webhook module.
interface DeliveryAttempt {
  webhook: string;
  event: string;
  attempt: number;
  host: string;
  trace: Readonly<Record<string, string>>;
}
interface DeliveryWatch {
  readonly headers: Readonly<Record<string, string>>;
  end(statusCode: number | undefined, error: string | undefined): void;
}

export function deliveryWatcher(service: TracingService): (attempt: DeliveryAttempt) => DeliveryWatch | undefined {
  return ({ webhook, event, attempt, host, trace }) => {
    const t = service.current;
    if (!t) return undefined;
    const { api, tracer } = t.sdk;
    const remote = parseTraceparent(trace.traceparent, trace.tracestate);
    let parent: Context = api.ROOT_CONTEXT;
    if (remote) {
      const sc: SpanContext = { traceId: remote.traceId, spanId: remote.spanId, traceFlags: remote.flags & 1, isRemote: true, ...(remote.state && { traceState: api.createTraceState(remote.state) }) };
      parent = api.trace.setSpanContext(api.ROOT_CONTEXT, sc);
    }
    const span = tracer.startSpan(
      `webhook ${event}`,
      {
        kind: api.SpanKind.CLIENT,
        attributes: { 'http.request.method': 'POST', 'server.address': host, 'skybridge.webhook.name': webhook, 'skybridge.webhook.event': event, 'skybridge.webhook.attempt': attempt },
      },
      parent,
    );
    const sc = span.spanContext();
    return {
      headers: traceHeaders(sc.traceId, sc.spanId, sc.traceFlags, sc.traceState?.serialize() ?? remote?.state),
      end(statusCode, error) {
        if (statusCode !== undefined) span.setAttribute('http.response.status_code', statusCode);
        const ok = statusCode !== undefined && statusCode >= 200 && statusCode < 300;
        if (!ok) {
          span.setAttribute('error.type', statusCode === undefined ? 'delivery_failed' : String(statusCode));
          span.setStatus({ code: api.SpanStatusCode.ERROR, ...(error && { message: error.slice(0, 256) }) });
        }
        span.end();
      },
    };
  };
}
