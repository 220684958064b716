// Sends queued deliveries. Each node runs one dispatcher over the logs store's database: it claims
// due deliveries per endpoint (at most max_concurrent_deliveries in flight per endpoint on this
// node), signs each attempt with the endpoint's secret (Standard Webhooks: HMAC-SHA256 over
// `id.timestamp.body`), sends it, and records the outcome. A local enqueue wakes it at once; other
// nodes' work and scheduled retries are found by polling.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import type { Snapshot } from '../config/snapshot.ts';
import type { SqlDriver } from '../logs/driver.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { log } from '../log.ts';
import { encryptionKey, privateReceiverRefusal, webhookEndpoint, webhookEndpoints, type ResolvedEndpoint } from './endpoints.ts';
import { deliveryBody, traceHeaders } from './payload.ts';
import { DeliveryQueue, type ClaimedDelivery } from './queue.ts';
import { registerDispatcher, unregisterDispatcher } from './registry.ts';
import { retryDelayMs } from './schedule.ts';
import { SecretStore } from './secrets.ts';
import { Sender, type AttemptResult } from './sender.ts';

/** A lease outlives the attempt it covers by this much (the attempt itself is bounded by its timeout). */
const LEASE_MARGIN_MS = 5_000;
const DEFAULT_POLL_MS = 1_000;
const USER_AGENT = 'skybridge-webhooks/1';

/**
 * Watches each delivery attempt (tracing gives each a span), told by the gateway; declared here so
 * webhooks name no tracing module. `trace`: the W3C headers the event was raised in, if any.
 */
export type DeliveryWatcher = (attempt: { webhook: string; event: string; attempt: number; host: string; trace: Readonly<Record<string, string>> }) => DeliveryWatch | undefined;

export interface DeliveryWatch {
  /** The trace context sent with this attempt (replaces the event's own). */
  readonly headers: Readonly<Record<string, string>>;
  end(statusCode: number | undefined, error: string | undefined): void;
}

export interface DispatcherOptions {
  /** How often due work (retries, other nodes' enqueues, expired leases) is looked for. */
  pollMs?: number;
  metrics?: Metrics;
  watch?: DeliveryWatcher;
  /** Names this node in attempt records. */
  node?: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

const statusClass = (r: AttemptResult): string => (r.statusCode === undefined ? 'none' : `${Math.floor(r.statusCode / 100)}xx`);

export class Dispatcher {
  readonly queue: DeliveryQueue;
  readonly secrets: SecretStore;
  readonly node: string;
  readonly #driver: SqlDriver;
  readonly #snapshot: () => Snapshot;
  readonly #sender = new Sender();
  readonly #metrics: Metrics | undefined;
  readonly #watch: DeliveryWatcher | undefined;
  readonly #pollMs: number;
  readonly #inflight = new Map<string, number>();
  readonly #claiming = new Set<string>();
  readonly #again = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Told of each delivery that used its last retry (the dashboard's webhook_failure notification). */
  onGaveUp: ((d: { webhook: string; delivery: string; event: string; attempts: number; error: string | undefined }) => void) | undefined = undefined;

  constructor(driver: SqlDriver, snapshot: () => Snapshot, opts: DispatcherOptions = {}) {
    this.#driver = driver;
    this.#snapshot = snapshot;
    this.queue = new DeliveryQueue(driver);
    this.secrets = new SecretStore(driver);
    this.#metrics = opts.metrics;
    this.#watch = opts.watch;
    this.#pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    this.node = opts.node ?? `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  }

  start(): this {
    registerDispatcher(this.#driver, this);
    const tick = () => {
      if (this.#stopped) return;
      void this.poll().finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(tick, this.#pollMs).unref();
      });
    };
    tick();
    return this;
  }

  /** Looks for due deliveries of every endpoint now (called on each poll). */
  async poll(): Promise<void> {
    try {
      const due = new Set(await this.queue.dueEndpoints());
      for (const name of webhookEndpoints(this.#snapshot()).keys()) if (due.has(name)) this.wake(name);
      // Deliveries whose endpoint is gone are claimed too, to be discarded.
      for (const name of due) if (!webhookEndpoint(this.#snapshot(), name)) this.wake(name);
      if (this.#metrics) {
        const { pending, oldestAgeMs } = await this.queue.depth();
        this.#metrics.webhookQueueDepth.set(pending);
        this.#metrics.webhookOldestPendingAge.set(oldestAgeMs / 1000);
      }
    } catch (err) {
      if (!this.#stopped) log.warn('webhook dispatcher: could not read the delivery queue', { error: (err as Error).message });
    }
  }

  /** Claims and starts what this node may send for `endpoint` now. */
  wake(endpoint: string): void {
    if (this.#stopped) return;
    if (this.#claiming.has(endpoint)) {
      this.#again.add(endpoint);
      return;
    }
    this.#claiming.add(endpoint);
    void this.#claim(endpoint).finally(() => {
      this.#claiming.delete(endpoint);
      if (this.#again.delete(endpoint)) this.wake(endpoint);
    });
  }

  async #claim(name: string): Promise<void> {
    const ep = webhookEndpoint(this.#snapshot(), name);
    const max = ep?.settings.max_concurrent_deliveries ?? 1;
    const free = max - (this.#inflight.get(name) ?? 0);
    if (free <= 0) return;
    const leaseMs = (ep?.settings.attempt_timeout_seconds ?? 10) * 1000 + LEASE_MARGIN_MS;
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.queue.claim(name, free, leaseMs);
    } catch (err) {
      if (!this.#stopped) log.warn('webhook dispatcher: claim failed', { webhook: name, error: (err as Error).message });
      return;
    }
    if (claimed.length === 0) return;
    // A full batch may have left more behind: look again once these are under way.
    if (claimed.length === free) this.#again.add(name);
    let secret: string | undefined;
    let secretProblem: string | undefined;
    if (ep && !ep.settings.disabled) {
      try {
        secret = ep.configSecret ?? (await this.secrets.ensure(name, encryptionKey(this.#snapshot())));
      } catch (err) {
        secretProblem = (err as Error).message;
      }
    }
    for (const d of claimed) {
      this.#inflight.set(name, (this.#inflight.get(name) ?? 0) + 1);
      const run = this.#deliver(d, ep, secret, secretProblem)
        .catch((err: unknown) => log.warn('webhook delivery could not be recorded', { webhook: name, delivery: d.id, error: (err as Error).message }))
        .finally(() => {
          this.#inflight.set(name, (this.#inflight.get(name) ?? 1) - 1);
          this.#running.delete(run);
          // A slot is free: take the next due delivery of this endpoint, if any.
          this.wake(name);
        });
      this.#running.add(run);
    }
  }

  async #deliver(d: ClaimedDelivery, ep: ResolvedEndpoint | undefined, secret: string | undefined, secretProblem: string | undefined): Promise<void> {
    if (!ep || ep.settings.disabled) {
      const reason = !ep ? `webhook endpoint '${d.endpoint}' no longer exists` : `webhook endpoint '${d.endpoint}' is disabled`;
      await this.queue.discard(d, reason);
      this.#metrics?.webhookDeliveries.labels('discarded').inc();
      return;
    }
    const s = ep.settings;
    const startedAt = Date.now();
    let result: AttemptResult;
    const problem = secretProblem ?? ep.problem;
    // The current settings decide (a URL or allow_private_network changed after queuing included).
    const refused = privateReceiverRefusal(this.#snapshot(), d.endpoint, s);
    if (refused) {
      result = { error: `refused: ${refused}`, durationMs: 0 };
    } else if (problem || !secret) {
      result = { error: `cannot sign: ${problem ?? 'no signing secret'}`, durationMs: 0 };
    } else {
      const body = deliveryBody(d.event, d.createdAt, d.data, d.resultExpiresAt);
      const at = new Date();
      const trace = traceHeaders(d.data);
      // The host only: the URL's path or query may carry a token, the headers the secret.
      const watch = this.#watch?.({ webhook: d.endpoint, event: d.event, attempt: d.attempts + 1, host: hostOf(s.url), trace });
      const headers: Record<string, string> = {
        'user-agent': USER_AGENT,
        ...ep.headers,
        ...(watch?.headers ?? trace),
        'content-type': 'application/json',
        'webhook-id': d.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(d.id, at, body),
      };
      result = await this.#sender.send(s.url, headers, body, s.attempt_timeout_seconds * 1000, s.allow_private_network);
      watch?.end(result.statusCode, result.error);
    }
    this.#metrics?.webhookAttemptDuration.labels(statusClass(result)).observe(result.durationMs / 1000);
    const ok = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const attempt = d.attempts + 1;
    const error = ok ? undefined : (result.error ?? `receiver answered ${result.statusCode}`);
    const delay = ok ? undefined : retryDelayMs(attempt, s);
    const state = ok ? 'delivered' : delay === undefined ? 'exhausted' : 'pending';
    const kept = await this.queue.finish(
      d,
      {
        deliveryId: d.id,
        sendNo: d.sendNo,
        attempt,
        startedAt,
        durationMs: result.durationMs,
        ...(result.statusCode !== undefined && { statusCode: result.statusCode }),
        outcome: ok ? 'success' : 'failure',
        ...(error && { error }),
        ...(result.body !== undefined && { responseBody: result.body }),
        node: this.node,
      },
      { state, ...(delay !== undefined && { nextAt: Date.now() + delay }) },
    );
    if (!kept) {
      log.warn('webhook delivery lease was lost during an attempt (another node took it over)', { webhook: d.endpoint, delivery: d.id });
      return;
    }
    this.#metrics?.webhookDeliveries.labels(state === 'pending' ? 'retry_scheduled' : state).inc();
    if (state === 'pending') {
      // On time from this node; the poll (here or on another node) covers a restart in between.
      if (delay! <= 60_000) setTimeout(() => this.wake(d.endpoint), delay! + 5).unref();
    } else if (state === 'exhausted') {
      log.warn('webhook delivery failed after its last retry', { webhook: d.endpoint, delivery: d.id, attempts: attempt, error });
      this.onGaveUp?.({ webhook: d.endpoint, delivery: d.id, event: d.event, attempts: attempt, error });
    }
  }

  /** Stops claiming; waits (bounded) for attempts in flight, so their outcome is recorded. */
  async stop(waitMs = 5_000): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    unregisterDispatcher(this.#driver, this);
    const all = Promise.allSettled([...this.#running]);
    await Promise.race([all, new Promise((r) => setTimeout(r, waitMs).unref())]);
    await this.#sender.close();
  }
}
