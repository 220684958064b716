// Prometheus metrics, one set per gateway (built with the services in gateway.ts, so a gateway run in
// process keeps its own). Label values are bounded: providers come from config, statuses are HTTP
// codes, and models are capped. A model name becomes a label only once a provider has answered it
// (admitModel) and while fewer than MAX_MODELS are known; anything else is `other`. So names a client
// makes up (answered 404 upstream, or refused by the gateway) can neither grow the series count nor
// crowd real models out of their own labels. prom-client escapes label values (`\`, `"`, newline).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Counter, Histogram, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

const MAX_MODELS = 200;
/** Virtual keys and teams with a label of their own in the spend metric; past it, `other` (docs/observability.md). */
export const MAX_SPENDERS = 1000;
/** MCP tools with a label of their own; past it, `other`. */
const MAX_TOOLS = 500;
/** This build's version, for skybridge_build_info. */
const VERSION = packageVersion();

/** The version in the nearest package.json above this module (the source tree's, or the image's above dist/). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    try {
      const v = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version;
      if (typeof v === 'string') return v;
    } catch {
      // none here: one floor up
    }
  }
  return 'unknown';
}
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The child of each label tuple, found one label at a time (a map per position): a lookup builds no
 * key string to hash (a joined key cost more than the map lookups, six times per request).
 */
export class ByLabels<T> {
  readonly #root = new Map<string, unknown>();
  readonly #make: (labels: readonly string[]) => T;
  /** Every child made, in order. */
  readonly all: T[] = [];

  constructor(make: (labels: readonly string[]) => T) {
    this.#make = make;
  }

  get(labels: readonly string[]): T {
    let level = this.#root;
    const last = labels.length - 1;
    for (let i = 0; i < last; i++) level = this.#next(level, labels[i]);
    let child = level.get(labels[last]) as T | undefined;
    if (child === undefined) child = this.#add(level, labels);
    return child;
  }

  /**
   * The child of one to four labels given as arguments (as many as the metric has): the lookup
   * makes no array, where a rest parameter made one per call (six a request); one only for a new child.
   */
  of(a: string, b?: string, c?: string, d?: string): T {
    if (b === undefined) return (this.#root.get(a) as T | undefined) ?? this.#add(this.#root, [a]);
    const one = this.#next(this.#root, a);
    if (c === undefined) return (one.get(b) as T | undefined) ?? this.#add(one, [a, b]);
    const two = this.#next(one, b);
    if (d === undefined) return (two.get(c) as T | undefined) ?? this.#add(two, [a, b, c]);
    const three = this.#next(two, c);
    return (three.get(d) as T | undefined) ?? this.#add(three, [a, b, c, d]);
  }

  #next(level: Map<string, unknown>, label: string): Map<string, unknown> {
    let next = level.get(label) as Map<string, unknown> | undefined;
    if (!next) {
      next = new Map();
      level.set(label, next);
    }
    return next;
  }

  #add(level: Map<string, unknown>, labels: readonly string[]): T {
    const child = this.#make(labels);
    level.set(labels[labels.length - 1], child);
    this.all.push(child);
    return child;
  }
}

/** A metric's children by one to four label values, as arguments. */
export type ChildOf<T> = (a: string, b?: string, c?: string, d?: string) => T;

/**
 * Label lookups cached per label tuple: prom-client hashes label objects on every `labels()` call,
 * which shows in profiles at thousands of requests per second. Tuples are bounded (see modelLabel).
 */
export function cached<T>(metric: { labels(...values: string[]): T }): (...values: string[]) => T {
  const children = new ByLabels((values) => metric.labels(...values));
  return (...values) => children.get(values);
}

/**
 * A counter's children whose increments wait in a plain number until the next scrape, when
 * prom-client's collect() hands them to the counter: an inc() there builds a label hash string and
 * checks every label on each call (about 400 bytes per call, four calls per request). What a scrape
 * reads is the same.
 */
class DeferredCounter {
  readonly #children = new ByLabels((labels) => new DeferredChild(labels));
  #counter: { labels(...values: string[]): { inc(value: number): void } } | undefined;

  /** The counter it feeds (set once the counter exists: its collect() calls flush). */
  feeds(counter: { labels(...values: string[]): { inc(value: number): void } }): this {
    this.#counter = counter;
    return this;
  }

  /** The child of one label tuple, made once (tuples are bounded: see modelLabel). */
  readonly child: ChildOf<DeferredChild> = (a, b, c, d) => this.#children.of(a, b, c, d);

  flush(): void {
    const counter = this.#counter;
    if (!counter) return;
    for (const c of this.#children.all) {
      if (c.pending === 0) continue;
      counter.labels(...c.labels).inc(c.pending);
      c.pending = 0;
    }
  }
}

class DeferredChild {
  readonly labels: readonly string[];
  pending = 0;

  constructor(labels: readonly string[]) {
    this.labels = labels;
  }

  inc(value = 1): void {
    // prom-client's own rule, kept: a counter only goes up, by a finite amount.
    if (!Number.isFinite(value) || value < 0) throw new TypeError(`counter increment must be a finite number >= 0, got ${value}`);
    this.pending += value;
  }
}

/** prom-client 15's own record of one label tuple of a histogram: what its observe() updates and a scrape reads. */
interface HistogramRecord {
  labels: Record<string, string | number>;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

interface HistogramInternals {
  hashMap: Record<string, HistogramRecord>;
  labelNames: readonly string[];
  upperBounds: readonly number[];
  zero(labels: Record<string, string>): void;
}

/**
 * A histogram's children that update prom-client's record of their label tuple themselves:
 * prom-client's observe() rebuilds the label hash string, checks every label and turns the bucket
 * bound into a property name on each call (about 2 µs; two per request). The update is the one
 * prom-client makes (sum, count, the bucket the value falls in), so a scrape reads the same. The
 * record is prom-client 15's `hashMap` entry (the version is pinned; a unit test compares the
 * exposition with prom-client's own observe()).
 */
export function boundHistogram(histogram: object): ChildOf<BoundObserver> {
  const h = histogram as HistogramInternals;
  const keys = h.upperBounds.map(String);
  const children = new ByLabels((labels) => new BoundObserver(h, labels, keys));
  return (a, b, c, d) => children.of(a, b, c, d);
}

class BoundObserver {
  readonly #h: HistogramInternals;
  readonly #labels: readonly string[];
  readonly #keys: readonly string[];
  #record: HistogramRecord | undefined;
  #recordKey = '';

  constructor(h: HistogramInternals, labels: readonly string[], keys: readonly string[]) {
    this.#h = h;
    this.#labels = labels;
    this.#keys = keys;
  }

  observe(value: number): void {
    // prom-client's own rule, kept.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const rec = this.#recordNow();
    rec.sum += value;
    rec.count += 1;
    const bounds = this.#h.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        rec.bucketValues[this.#keys[i]] += 1;
        return;
      }
    }
  }

  /** The tuple's record, found once; made (zeroed) when the histogram has none yet or was reset. */
  #recordNow(): HistogramRecord {
    const h = this.#h;
    const known = this.#record;
    if (known && h.hashMap[this.#recordKey] === known) return known;
    const labels: Record<string, string> = {};
    h.labelNames.forEach((name, i) => (labels[name] = this.#labels[i]));
    const find = () => Object.entries(h.hashMap).find(([, r]) => h.labelNames.every((name) => String(r.labels[name]) === labels[name]));
    let found = find();
    if (!found) {
      h.zero(labels);
      found = find()!;
    }
    [this.#recordKey, this.#record] = found;
    return found[1];
  }
}

/** How often the event-loop lag histogram samples (ms). */
const EVENT_LOOP_SAMPLE_MS = 100;

export class Metrics {
  readonly registry = new Registry();
  readonly #knownModels = new Set<string>();

  readonly #requests = new DeferredCounter();
  readonly requestsTotal = new Counter({
    name: 'skybridge_requests_total',
    help: 'Inference requests answered, by operation, provider, model and HTTP status.',
    labelNames: ['operation', 'provider', 'model', 'status'] as const,
    registers: [this.registry],
    collect: () => this.#requests.flush(),
  });

  readonly requestDuration = new Histogram({
    name: 'skybridge_request_duration_seconds',
    help: 'Time from request received to response complete, by operation, provider, model and status.',
    labelNames: ['operation', 'provider', 'model', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly upstreamDuration = new Histogram({
    name: 'skybridge_upstream_duration_seconds',
    help: 'Time from sending to an upstream provider until its response headers arrived, per attempt.',
    labelNames: ['provider', 'model', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new Histogram({
    name: 'skybridge_stream_first_token_seconds',
    help: 'Time from request received to the first streamed chunk sent to the client.',
    labelNames: ['provider', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly #tokens = new DeferredCounter();
  readonly tokensTotal = new Counter({
    name: 'skybridge_tokens_total',
    help: 'Tokens reported by upstream providers, by direction (input or output).',
    labelNames: ['provider', 'model', 'direction'] as const,
    registers: [this.registry],
    collect: () => this.#tokens.flush(),
  });

  readonly #cost = new DeferredCounter();
  readonly costTotal = new Counter({
    name: 'skybridge_cost_usd_total',
    help: 'Spend (USD at the configured prices) of answered requests, by provider, model, virtual key id and team id ("" without one; "other" past the label bound).',
    labelNames: ['provider', 'model', 'virtual_key', 'team'] as const,
    registers: [this.registry],
    collect: () => this.#cost.flush(),
  });

  /** Counted in a plain number on the request path (prom-client's inc/dec parse their arguments and hash the labels on every call); the gauge reads it at each scrape. */
  #inFlight = 0;

  readonly requestsInFlight = new Gauge({
    name: 'skybridge_requests_in_flight',
    help: 'HTTP requests received and not yet answered (the answer not finished or abandoned), every route.',
    registers: [this.registry],
    // prom-client calls collect() before every scrape.
    collect: () => {
      this.requestsInFlight.set(this.#inFlight);
    },
  });

  readonly #mcpCalls = new DeferredCounter();
  readonly mcpToolCalls = new Counter({
    name: 'skybridge_mcp_tool_calls_total',
    help: 'MCP tool calls, by client, tool and outcome (success, tool_error, timeout, unavailable, failed).',
    labelNames: ['client', 'tool', 'outcome'] as const,
    registers: [this.registry],
    collect: () => this.#mcpCalls.flush(),
  });

  readonly mcpToolDuration = new Histogram({
    name: 'skybridge_mcp_tool_call_duration_seconds',
    help: 'Time of one MCP tool call, by client and outcome.',
    labelNames: ['client', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly buildInfo = new Gauge({
    name: 'skybridge_build_info',
    help: 'The running build: 1, labelled with its version and the Node.js version.',
    labelNames: ['version', 'node_version'] as const,
    registers: [this.registry],
  });

  readonly logsDropped = new Counter({
    name: 'skybridge_logs_dropped_total',
    help: 'Request log records lost: the write queue was full or the store refused a batch.',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'skybridge_webhook_deliveries_total',
    help: 'Webhook delivery outcomes: delivered, retry_scheduled, exhausted (retries ran out), discarded (endpoint gone or disabled).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: 'skybridge_webhook_attempt_duration_seconds',
    help: 'Time of one webhook delivery attempt, by answer class (2xx, 3xx, 4xx, 5xx, none).',
    labelNames: ['status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookQueueDepth = new Gauge({
    name: 'skybridge_webhook_queue_depth',
    help: 'Webhook deliveries pending (queued or waiting for a retry) in the store.',
    registers: [this.registry],
  });

  readonly webhookOldestPendingAge = new Gauge({
    name: 'skybridge_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery (0 when none is pending).',
    registers: [this.registry],
  });

  readonly retriesTotal = new Counter({
    name: 'skybridge_retries_total',
    help: 'Upstream attempts retried, by provider and the status that caused the retry.',
    labelNames: ['provider', 'reason'] as const,
    registers: [this.registry],
  });

  readonly fallbacksTotal = new Counter({
    name: 'skybridge_fallbacks_total',
    help: 'Requests that moved on to a fallback target, by the provider given up on and the one tried next.',
    labelNames: ['from_provider', 'to_provider'] as const,
    registers: [this.registry],
  });

  readonly internalRequests = new Counter({
    name: 'skybridge_internal_requests_total',
    help: "The gateway's own upstream calls, made outside every stage (no virtual key, limits or request log), by the feature that made them (purpose) and outcome.",
    labelNames: ['purpose', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly configInfo = new Gauge({
    name: 'skybridge_config_info',
    help: 'The loaded configuration: 1 for the hash in use.',
    labelNames: ['config_hash'] as const,
    registers: [this.registry],
  });

  readonly configLastReloadSuccess = new Gauge({
    name: 'skybridge_config_last_reload_success_timestamp_seconds',
    help: 'When the configuration being served was loaded (Unix seconds): at start, and on every accepted change.',
    registers: [this.registry],
  });

  readonly configRevisionInfo = new Gauge({
    name: 'skybridge_config_revision_info',
    help: 'The configuration revision served: 1 for it (Kubernetes: the index revision the operator rendered; a file: the config hash).',
    labelNames: ['revision'] as const,
    registers: [this.registry],
  });

  readonly vaultUp = new Gauge({
    name: 'skybridge_vault_up',
    help: 'Whether the last refresh of the vault references read every secret (1), or the last good values are served (0).',
    registers: [this.registry],
  });

  readonly vaultRefreshFailures = new Counter({
    name: 'skybridge_vault_refresh_failures_total',
    help: 'Background refreshes of the vault references in which a secret could not be read.',
    registers: [this.registry],
  });

  readonly auditWriteFailures = new Counter({
    name: 'skybridge_audit_write_failures_total',
    help: 'Audit records that could not be written to the logs store (each is also logged at error).',
    registers: [this.registry],
  });

  readonly configReloadErrors = new Counter({
    name: 'skybridge_config_reload_errors_total',
    help: 'Configuration updates rejected (the last good configuration kept serving).',
    registers: [this.registry],
  });

  readonly routingRulesSkipped = new Gauge({
    name: 'skybridge_routing_rules_skipped',
    help: 'Enabled routing rules of the served configuration that cannot compile and are skipped (GET /api/routing/rules shows each with its error).',
    registers: [this.registry],
  });

  readonly tlsReloads = new Counter({
    name: 'skybridge_tls_reloads_total',
    help: 'Re-reads of the listeners\' certificate after its files changed: ok (served now) or error (the previous one kept serving).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly realtimeSessions = new Gauge({
    name: 'skybridge_realtime_sessions_active',
    help: 'Realtime sessions open on this gateway, by provider.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly #realtimeEvents = new DeferredCounter();
  readonly realtimeEvents = new Counter({
    name: 'skybridge_realtime_events_total',
    help: 'Realtime events relayed, by direction (client: from the client; server: to it) and provider.',
    labelNames: ['direction', 'provider'] as const,
    registers: [this.registry],
    collect: () => this.#realtimeEvents.flush(),
  });

  readonly realtimeClosed = new Counter({
    name: 'skybridge_realtime_sessions_closed_total',
    help: 'Realtime sessions ended, by why (client, upstream, idle, max_duration, budget, bad_frame, backpressure, shutdown, error).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly realtimeMediaPackets = new Counter({
    name: 'skybridge_realtime_media_packets_total',
    help: 'Audio RTP packets relayed on WebRTC calls, by direction (client: from the client; server: to it) and provider.',
    labelNames: ['direction', 'provider'] as const,
    registers: [this.registry],
  });

  readonly requestCount = this.#requests.feeds(this.requestsTotal).child;
  readonly requestTime = boundHistogram(this.requestDuration);
  readonly upstreamTime = boundHistogram(this.upstreamDuration);
  // Once per stream (thousands held at once): bound as the duration histograms are.
  readonly firstTokenTime = boundHistogram(this.timeToFirstToken);
  readonly tokenCount = this.#tokens.feeds(this.tokensTotal).child;
  readonly costCount = this.#cost.feeds(this.costTotal).child;
  readonly mcpCallCount = this.#mcpCalls.feeds(this.mcpToolCalls).child;
  /** Per relayed event (thousands a second at 1,000 sessions): a session takes its two children once. */
  readonly realtimeEventCount = this.#realtimeEvents.feeds(this.realtimeEvents).child;
  readonly mcpCallTime = cached(this.mcpToolDuration);
  #started = 0;
  /** Requests in flight: inc() as one arrives, dec() as its answer closes (http/server.ts). */
  readonly inFlight = {
    inc: (): void => {
      this.#inFlight++;
      this.#started++;
    },
    dec: (): void => {
      this.#inFlight--;
    },
  };
  /** Requests received so far and in flight now, for the idle memory trim (memory-trim.ts). */
  readonly activity = {
    started: (): number => this.#started,
    inFlight: (): number => this.#inFlight,
  };
  readonly #spenders = new Set<string>();
  readonly #tools = new Set<string>();

  /** `processMetrics`: also the process's own (CPU, memory, event loop), once per process is enough. */
  constructor(opts: { processMetrics?: boolean } = {}) {
    // The standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes, ...), as every
    // dashboard and alert for Node services expects them. The event-loop lag is sampled every
    // 100 ms, not prom-client's 10: its timer woke an idle gateway 100 times a second.
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.buildInfo.labels(VERSION, process.versions.node).set(1);
  }

  /**
   * A virtual key or team id as a label: its own while fewer than MAX_SPENDERS are known (ids come
   * from the configuration, not from clients, so the first ones seen are the ones in use), else `other`.
   */
  spenderLabel(id: string | undefined): string {
    if (!id) return '';
    if (this.#spenders.has(id)) return id;
    if (this.#spenders.size >= MAX_SPENDERS) return 'other';
    this.#spenders.add(id);
    return id;
  }

  /** One MCP tool call's outcome and duration. */
  toolCalled(client: string, tool: string, outcome: string, seconds: number): void {
    const key = `${client}\u0000${tool}`;
    if (!this.#tools.has(key) && this.#tools.size < MAX_TOOLS) this.#tools.add(key);
    this.mcpCallCount(client, this.#tools.has(key) ? tool : 'other', outcome).inc();
    this.mcpCallTime(client, outcome).observe(seconds);
  }

  modelLabel(model: string): string {
    return model === '' || this.#knownModels.has(model) ? model : 'other';
  }

  /** A provider answered this model name successfully (or config names it): it may have its own label. */
  admitModel(model: string): void {
    if (model && this.#knownModels.size < MAX_MODELS) this.#knownModels.add(model);
  }

  setConfigHash(hash: string): void {
    this.configInfo.reset();
    this.configInfo.labels(hash).set(1);
  }

  /** A configuration was loaded and is served now: its revision, and when. */
  configLoaded(revision: string, at: number = Date.now()): void {
    this.configRevisionInfo.reset();
    this.configRevisionInfo.labels(revision).set(1);
    this.configLastReloadSuccess.set(at / 1000);
  }
}
