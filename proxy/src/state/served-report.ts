// The proxy's side of "Ready means served": one Lease per serving process in the configuration
// namespace (served-contract.ts), named after the pod (POD_NAME; `-w<N>` per worker with --workers),
// renewed every third of its duration and rewritten at once when what it serves changes. A process
// that stops renewing (killed, hung, partitioned) drops out of the operator's count when the lease
// expires; one shutting down deletes its lease at once. Owned by the Pod when POD_UID is known and
// the pod runs in the Lease's namespace, so the garbage collector removes it with the pod.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { log } from '../log.ts';
import { notReadyReason } from './readiness.ts';
import { IMPLEMENTED_SECTIONS, SERVED_ANNOTATION, SERVED_REPORT_LABEL, encodeServedReport, type ServedReport, type ServedPool, type ServedWebhook } from './served-contract.ts';

export interface ServedReporterOptions {
  kc: KubeConfig;
  namespace: string;
  /** The Lease's name: the pod's name (and worker). */
  identity: string;
  /** The Pod that owns the Lease (garbage-collected with it); `namespace` when known. */
  owner?: { name: string; uid: string; namespace?: string };
  leaseSeconds: number;
  /** What this process serves right now; called every `pollMs`, so cheap. */
  state: () => ServedReport;
  pollMs?: number;
}

const DNS_LABEL = /[^a-z0-9.-]+/g;

/** POD_NAME (downward API), else host and pid; `-w<N>` for a cluster worker. Lowercased to a valid object name. */
export function reporterIdentity(env: NodeJS.ProcessEnv = process.env, worker?: number): string {
  const base = (env.POD_NAME || `${hostname()}-${process.pid}`).toLowerCase().replace(DNS_LABEL, '-');
  const name = worker !== undefined ? `${base}-w${worker}` : base;
  return name.slice(0, 253).replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || `proxy-${process.pid}`;
}

/** SKYBRIDGE_SERVED_LEASE_SECONDS (default 15, 2-300). */
export function reporterLeaseSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.SKYBRIDGE_SERVED_LEASE_SECONDS ?? 15);
  return Number.isFinite(n) && n >= 2 && n <= 300 ? Math.round(n) : 15;
}

interface Lease {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string };
}

class LeaseRequestError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const statusOf = (err: unknown): number | undefined => (err instanceof LeaseRequestError ? err.status : undefined);

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
const microTime = (d: Date): string => d.toISOString().replace(/Z$/, '000Z');

const REQUEST_TIMEOUT_MS = 10_000;

/**
 * client-node builds a new undici Agent (so a new TLS connection) per request context: one is kept
 * per kubeconfig and reused, so renewals share a keep-alive connection. Headers are applied per request.
 */
const dispatchers = new WeakMap<KubeConfig, ReturnType<RequestContext['getDispatcher']>>();

/** One request to the API server with the kubeconfig's credentials (a handful of verbs on one Lease). */
async function leaseRequest(kc: KubeConfig, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<Lease> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = cluster.server.replace(/\/$/, '') + path;
  const ctx = new RequestContext(url, HttpMethod[method]);
  await kc.applySecurityAuthentication(ctx);
  if (!dispatchers.has(kc)) dispatchers.set(kc, ctx.getDispatcher());
  const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), dispatcher: dispatchers.get(kc), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) {
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? message;
    } catch {
      // not a Status object
    }
    throw new LeaseRequestError(res.status, `${method} ${path}: ${res.status} ${message}`);
  }
  return (text ? JSON.parse(text) : {}) as Lease;
}

export class ServedReporter {
  readonly #opts: ServedReporterOptions;
  #timer: NodeJS.Timeout | undefined;
  #written: string | undefined;
  #renewedAt = 0;
  #lease: Lease | undefined;
  #busy = false;
  #stopped = false;
  #failing = false;
  /** After a failure (API server away, RBAC missing) the next try waits this long, not one poll. */
  #retryAt = 0;
  #stopping: Promise<void> | undefined;

  constructor(opts: ServedReporterOptions) {
    this.#opts = opts;
  }

  get identity(): string {
    return this.#opts.identity;
  }

  start(): void {
    const poll = this.#opts.pollMs ?? 250;
    this.#timer = setInterval(() => void this.tick(), poll);
    this.#timer.unref();
    void this.tick();
  }

  /** Writes the Lease when the report changed or a renewal is due (one write at a time). */
  async tick(): Promise<void> {
    if (this.#busy || this.#stopped) return;
    // A draining process takes no new traffic: it no longer counts as serving.
    if (notReadyReason() === 'shutting down') {
      await this.stop();
      return;
    }
    const report = encodeServedReport(this.#opts.state());
    const renewDue = Date.now() - this.#renewedAt >= (this.#opts.leaseSeconds * 1000) / 3;
    if (report === this.#written && !renewDue) return;
    if (Date.now() < this.#retryAt) return;
    this.#busy = true;
    try {
      await this.#write(report);
      this.#written = report;
      this.#renewedAt = Date.now();
      if (this.#failing) log.info('served-revision report written again', { lease: this.#opts.identity });
      this.#failing = false;
    } catch (err) {
      this.#lease = undefined; // read it again next time
      this.#retryAt = Date.now() + Math.min(2000, (this.#opts.leaseSeconds * 1000) / 6);
      if (!this.#failing) log.warn('writing the served-revision report failed; retrying', { lease: this.#opts.identity, error: (err as Error).message });
      this.#failing = true;
    } finally {
      this.#busy = false;
    }
  }

  #path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#opts.namespace)}/leases${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  async #write(report: string): Promise<void> {
    const { kc, identity } = this.#opts;
    const now = microTime(new Date());
    if (!this.#lease) {
      try {
        this.#lease = await leaseRequest(kc, 'GET', this.#path(identity));
      } catch (err) {
        if (statusOf(err) !== 404) throw err;
        this.#lease = await leaseRequest(kc, 'POST', this.#path(), this.#body(undefined, report, now));
        return;
      }
    }
    // Changed or deleted by someone else meanwhile (409, 404): the catch in tick() reads it again.
    this.#lease = await leaseRequest(kc, 'PUT', this.#path(identity), this.#body(this.#lease, report, now));
  }

  #body(current: Lease | undefined, report: string, now: string): Lease {
    const { identity, leaseSeconds, owner } = this.#opts;
    // Owner references cannot cross namespaces: the garbage collector looks a namespaced owner up in the
    // dependent's namespace, finds nothing and deletes the Lease. A pod elsewhere owns nothing here (and a
    // stale reference is dropped); the Lease then goes by deletion on shutdown or by expiry.
    const ownerReferences = owner
      ? ownerInNamespace(owner, this.#opts.namespace)
        ? [{ apiVersion: 'v1', kind: 'Pod', name: owner.name, uid: owner.uid }]
        : undefined
      : current?.metadata?.ownerReferences;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: identity,
        namespace: this.#opts.namespace,
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        labels: { ...(current?.metadata?.labels ?? {}), [SERVED_REPORT_LABEL]: 'true', 'app.kubernetes.io/name': 'skybridge', 'app.kubernetes.io/component': 'proxy' },
        annotations: { ...(current?.metadata?.annotations ?? {}), [SERVED_ANNOTATION]: report },
        ...(ownerReferences ? { ownerReferences } : {}),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: leaseSeconds,
        acquireTime: current?.spec?.acquireTime ?? now,
        renewTime: now,
      },
    };
  }

  /** Stops renewing and deletes the Lease (best effort: expiry covers a failure). */
  stop(): Promise<void> {
    // Every caller (the signal, the shutdown's close) waits for the one delete.
    this.#stopping ??= this.#delete();
    return this.#stopping;
  }

  async #delete(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    try {
      await leaseRequest(this.#opts.kc, 'DELETE', this.#path(this.#opts.identity));
    } catch (err) {
      if (statusOf(err) !== 404) log.debug('deleting the served-revision report failed; it expires instead', { lease: this.#opts.identity, error: (err as Error).message });
    }
  }
}

/** The MCP clients as the manager lists them (McpManager.list()). */
export interface McpClientsView {
  list(): readonly { id: string; state: string; tools: readonly unknown[]; lastError?: string }[];
}

export interface ServedReportSources {
  namespace: string;
  kc: KubeConfig;
  /** The index of the document served now (KubeConfigSource.servedIndex). */
  served: () => { revision: string; secretChecksum: string } | undefined;
  /** Why the newest rendering is not served (KubeConfigSource.problem). */
  problem?: () => string | undefined;
  mcp: McpClientsView;
  /** Webhooks with deliveries given up lately (webhooks/given-up.ts). */
  givenUp?: () => Record<string, ServedWebhook>;
  /** Providers whose InferencePool gives no server to send to (inference-pool/registry.ts). */
  pools?: () => Record<string, ServedPool>;
  /** Optional sections this process acts on only when their runtime is there. */
  webhooks: boolean;
  cache: boolean;
  worker?: number;
}

const ownerInNamespace = (owner: { namespace?: string }, namespace: string): boolean => owner.namespace === undefined || owner.namespace === namespace;

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The pod's namespace: POD_NAMESPACE, else the mounted service account's; undefined outside a pod. */
export function podNamespace(env: NodeJS.ProcessEnv = process.env, file = SERVICE_ACCOUNT_NAMESPACE): string | undefined {
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Starts reporting; env POD_NAME / POD_UID name and own the Lease (POD_NAMESPACE or the service account's namespace must be the Lease's). */
export function startServedReport(src: ServedReportSources, env: NodeJS.ProcessEnv = process.env): ServedReporter {
  const sections = IMPLEMENTED_SECTIONS.filter((s) => (s === 'webhooks' ? src.webhooks : s === 'plugins' ? src.cache : true));
  const identity = reporterIdentity(env, src.worker);
  const ownerNamespace = podNamespace(env);
  const owner = env.POD_NAME && env.POD_UID ? { name: env.POD_NAME, uid: env.POD_UID, ...(ownerNamespace ? { namespace: ownerNamespace } : {}) } : undefined;
  if (owner && !ownerInNamespace(owner, src.namespace)) log.info('the served-revision Lease is not owned by the pod: it runs in another namespace (it expires instead)', { lease: identity, namespace: src.namespace, podNamespace: ownerNamespace });
  const reporter = new ServedReporter({
    kc: src.kc,
    namespace: src.namespace,
    identity,
    ...(owner ? { owner } : {}),
    leaseSeconds: reporterLeaseSeconds(env),
    state: () => {
      const index = src.served();
      const mcp: ServedReport['mcp'] = {};
      for (const c of src.mcp.list()) {
        const state = (['connecting', 'connected', 'disconnected', 'error'] as const).find((s) => s === c.state) ?? 'error';
        mcp[c.id] = { state, tools: state === 'connected' ? c.tools.length : 0, ...(state === 'error' && c.lastError ? { error: c.lastError } : {}) };
      }
      const problem = src.problem?.();
      const webhooks = src.givenUp?.();
      const pools = src.pools?.();
      return {
        ...(index ?? {}),
        sections: [...sections],
        mcp,
        ...(problem ? { problem } : {}),
        ...(webhooks && Object.keys(webhooks).length ? { webhooks } : {}),
        ...(pools && Object.keys(pools).length ? { pools } : {}),
      };
    },
  });
  reporter.start();
  // Leaving: drop out of the count now rather than when the lease expires (best effort).
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void reporter.stop());
  log.info('reporting the served configuration', { lease: identity, namespace: src.namespace });
  return reporter;
}
