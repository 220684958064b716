// Async jobs of one gateway: the store (the logs store's async_jobs table), the submit pipeline
// (only the governance stages: who calls, may they, within their limits), the worker (the gateway's
// own pipeline, every stage and plugin, run as the submitter and not admitted against limits again:
// it was at submit; its usage is still charged, run-job.ts), the webhook hand-off and the metrics.
// Built by createGateway() (gateway.ts) once a logs store is open.
import type { Snapshot } from '../config/snapshot.ts';
import type { SqlDriver } from '../logs/driver.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { execute } from '../operations/execute.ts';
import { governanceStages } from '../governance/stages.ts';
import type { ContextServices } from '../pipeline/context.ts';
import { Pipeline } from '../pipeline/runner.ts';
import { enqueueJobEvent, type JobEvent } from '../webhooks/enqueue.ts';
import type { TraceContext } from '../webhooks/queue.ts';
import { formatTraceparent, parseTraceparent } from '../tracing/traceparent.ts';
import { tracedStage, tracingStage } from '../tracing/stage.ts';
import type { BuiltinStages } from '../pipeline/stage.ts';
import { JobStore, type Job } from './job-store.ts';
import { asyncMetrics } from './metrics.ts';
import { JobWorker } from './worker.ts';

export interface AsyncJobs {
  store: JobStore;
  worker: JobWorker;
  /** Runs identify, plan and limits for a submit. */
  submitPipeline: Pipeline;
  close(): Promise<void>;
}

export interface AsyncJobsOptions {
  driver: SqlDriver;
  current: () => Snapshot;
  services: ContextServices & { pipeline: Pipeline };
  metrics: Metrics;
}

/** Where a job's result is polled (any OpenAI-format prefix polls it; this names the /v1 one). */
export const resultUrl = (path: string, id: string): string => `/v1/async/${path}/${id}`;

const parsed = (text: string | undefined): unknown => (text === undefined ? undefined : JSON.parse(text));

export function jobEvent(job: Job): JobEvent {
  const completed = job.status === 'completed';
  return {
    endpoint: job.webhook!,
    event: completed ? 'async_job.completed' : 'async_job.failed',
    job: {
      id: job.id,
      request_type: job.request_type,
      status: completed ? 'completed' : 'failed',
      status_code: job.status_code ?? (completed ? 200 : 500),
      result_url: resultUrl(job.path, job.id),
      result_expires_at: new Date(job.expires_at).toISOString(),
      ...(job.request_id !== undefined && { request_id: job.request_id }),
      ...(completed ? { response: parsed(job.result) } : { error: parsed(job.error) }),
      ...traceOf(job),
    },
  };
}

/** The W3C trace context the job was submitted in (kept with its headers), for its webhook. */
function traceOf(job: Job): { trace?: TraceContext } {
  if (!job.request_headers) return {};
  let headers: Record<string, unknown>;
  try {
    headers = JSON.parse(job.request_headers) as Record<string, unknown>;
  } catch {
    return {};
  }
  const tp = headers.traceparent;
  const ts = headers.tracestate;
  const parent = parseTraceparent(typeof tp === 'string' ? tp : undefined, typeof ts === 'string' || Array.isArray(ts) ? (ts as string | string[]) : undefined);
  if (!parent) return {};
  return { trace: { traceparent: formatTraceparent(parent.traceId, parent.spanId, parent.flags), ...(parent.state && { tracestate: parent.state }) } };
}

/** The submit's stages: governance, and when traced the submit's own span with a span per stage that works. */
function submitStages(snap: Snapshot, services: ContextServices): BuiltinStages {
  const g = governanceStages(snap);
  const t = services.tracing?.for(snap);
  if (!t) return g;
  const wrap = tracedStage;
  return { caller: [tracingStage(t), ...g.caller.map(wrap)], request: g.request.map(wrap) };
}

export function startAsyncJobs(o: AsyncJobsOptions): AsyncJobs {
  const store = new JobStore(o.driver);
  let worker: JobWorker | undefined = undefined;
  const m = asyncMetrics(o.metrics, store, () => worker?.running ?? 0);
  worker = new JobWorker({
    store,
    current: o.current,
    execute: (snapshot, request) => execute(o.services, snapshot, request),
    handOver: (job, snapshot) => enqueueJobEvent(o.driver, snapshot, jobEvent(job)),
    onFinished: m.finished,
  });
  worker.start();
  const w = worker;
  return {
    store,
    worker: w,
    submitPipeline: new Pipeline((snap) => submitStages(snap, o.services)),
    close: () => w.close(),
  };
}
