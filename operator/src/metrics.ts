// The operator's Prometheus metrics, on a registry of its own (served on --metrics-port).
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'skybridge_operator_reconciles_total',
    help: 'Reconciles run, by result (success, error, requeue).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'skybridge_operator_errors_total',
    help: 'Errors, by stage (render, apply, status, event, informer, lease).',
    labelNames: ['stage'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'skybridge_operator_reconcile_duration_seconds',
    help: 'Time one reconcile took (render, apply, status).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'skybridge_operator_queue_depth',
    help: 'Items waiting in the work queue.',
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'skybridge_operator_leader',
    help: '1 while this replica holds the leader lease, else 0.',
    registers: [this.registry],
  });
  readonly resources = new Gauge({
    name: 'skybridge_operator_resources',
    help: 'Custom resources seen at the last reconcile, by kind and whether they were accepted.',
    labelNames: ['kind', 'accepted'] as const,
    registers: [this.registry],
  });
  readonly held = new Gauge({
    name: 'skybridge_operator_render_held',
    help: '1 while the operator keeps the last good configuration because a render would remove most of it at once (see the RenderHeld Event), else 0.',
    registers: [this.registry],
  });
  readonly applies = new Counter({
    name: 'skybridge_operator_applies_total',
    help: 'Objects written with server-side apply or deleted, by kind and action.',
    labelNames: ['kind', 'action'] as const,
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'skybridge_operator_status_writes_total',
    help: 'Custom resource statuses written (unchanged ones are skipped).',
    registers: [this.registry],
  });
  readonly conversions = new Counter({
    name: 'skybridge_operator_conversions_total',
    help: 'ConversionReviews answered by the conversion webhook, by desired version and result (success, failure, bad_request).',
    labelNames: ['version', 'result'] as const,
    registers: [this.registry],
  });
  readonly servedReplicas = new Gauge({
    name: 'skybridge_operator_proxy_replicas',
    help: 'Proxy processes whose served-configuration report (Lease) is live.',
    registers: [this.registry],
  });

  constructor() {
    // The standard names (process_resident_memory_bytes, nodejs_heap_size_used_bytes, ...): a prefix
    // would double them (skybridge_operator_process_process_...) and break stock dashboards. The
    // operator has a registry (and a port) of its own, so nothing clashes with the proxy's.
    collectDefaultMetrics({ register: this.registry });
    this.leader.set(0);
    this.queueDepth.set(0);
    this.held.set(0);
    for (const result of ['success', 'error', 'requeue']) this.reconciles.inc({ result }, 0);
  }

  /** /metrics, plus /healthz (alive) and /readyz (caches synced) for probes. */
  serve(port: number, host: string, ready: () => boolean): Promise<Server> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/metrics') {
        this.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
          (err: Error) => res.writeHead(500).end(err.message),
        );
      } else if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      } else if (path === '/readyz') {
        const ok = ready();
        res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'caches not synced\n');
      } else {
        res.writeHead(404).end();
      }
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}
