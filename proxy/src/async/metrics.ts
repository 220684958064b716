// Async job metrics on the gateway's registry: jobs by state and the queue depth, read from the
// shared store at scrape time (so every replica reports the cluster-wide numbers), and the jobs this
// replica finished, by final status.
import { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../metrics/metrics.ts';
import type { JobStatus, JobStore } from './job-store.ts';

/** One store read serves the scrape's gauges. */
const FRESH_MS = 500;

export function asyncMetrics(metrics: Metrics, store: JobStore, runningHere: () => number): { finished(status: 'completed' | 'failed'): void } {
  let last: { at: number; counts: Promise<Record<JobStatus, number>> } | undefined;
  const counts = () => {
    if (!last || Date.now() - last.at > FRESH_MS) last = { at: Date.now(), counts: store.counts().catch(() => ({ pending: 0, processing: 0, completed: 0, failed: 0 })) };
    return last.counts;
  };
  new Gauge({
    name: 'skybridge_async_jobs',
    help: 'Async jobs in the store by state (results not yet expired), across every replica sharing it.',
    labelNames: ['state'] as const,
    registers: [metrics.registry],
    async collect() {
      const c = await counts();
      for (const [state, n] of Object.entries(c)) this.labels(state).set(n);
    },
  });
  new Gauge({
    name: 'skybridge_async_queue_depth',
    help: 'Async jobs waiting for a runner (pending), across every replica sharing the store.',
    registers: [metrics.registry],
    async collect() {
      this.set((await counts()).pending);
    },
  });
  new Gauge({
    name: 'skybridge_async_jobs_running',
    help: 'Async jobs this replica is running now.',
    registers: [metrics.registry],
    collect() {
      this.set(runningHere());
    },
  });
  const finished = new Counter({
    name: 'skybridge_async_jobs_finished_total',
    help: 'Async jobs this replica finished, by final status.',
    labelNames: ['status'] as const,
    registers: [metrics.registry],
  });
  return { finished: (status) => finished.labels(status).inc() };
}
