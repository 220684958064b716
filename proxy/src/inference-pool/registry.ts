// InferencePool discovery for the proxies: one source per pool reference (shared by every snapshot
// that names it), each following its pool and EndpointSlices (watch.ts, loaded on first use) and
// asking every server for its load (metrics-text.ts) every scrape interval, with a deadline. Each
// request then goes to the server picker.ts chooses. The gateway installs it at start, keeps only
// the sources the served configuration names, and stops them all when it closes.
//
// Egress: the servers' addresses come from the cluster (EndpointSlices), not from a URL someone
// typed, and are pod IPs, private by design; they pass the provider egress rule (link-local and
// cloud metadata addresses are refused, endpoints.ts), without the base_url opt-out.
import type { InferencePoolRef } from '../schema/gateway.ts';
import { setEndpointDiscovery, type EndpointSource, type PickedEndpoint } from '../upstream/endpoint-sources.ts';
import { poolFor } from '../upstream/pools.ts';
import { pickServer, type Pick } from './picker.ts';
import { parseServerLoad, type ServerLoad } from './metrics-text.ts';
import { poolServers, type ServerAddress, type SliceLike } from './endpoints.ts';
import { log } from '../log.ts';
import type { PoolSpec, PoolWatch } from './watch.ts';
import type { Snapshot } from '../config/snapshot.ts';

const DEFAULT_SCRAPE_MS = 500;
const DEFAULT_METRICS_PATH = '/metrics';
/** A scrape's deadline: never longer than a second, nor than the interval. */
const MAX_SCRAPE_DEADLINE_MS = 1000;
/** A report older than this many intervals is stale. */
const STALE_INTERVALS = 3;

/** What a pool source reports (the proxy's served report, `/health`). */
export interface PoolState {
  /** starting: not read yet; ready: servers known; empty: the pool has no ready server; missing: no such pool; error: cannot read it. */
  state: 'starting' | 'ready' | 'empty' | 'missing' | 'error';
  servers: number;
  /** Servers whose load report is fresh. */
  reporting: number;
  message?: string;
}

interface Server extends ServerAddress {
  load?: ServerLoad;
  scrapedAt?: number;
  scraping: boolean;
  inFlight: number;
}

export class PoolSource implements EndpointSource {
  readonly ref: InferencePoolRef;
  #namespace: string | undefined;
  #spec: PoolSpec | undefined;
  #slices: readonly SliceLike[] = [];
  #servers: Server[] = [];
  #state: PoolState['state'] = 'starting';
  #message: string | undefined;
  /** Whether the watch has delivered the EndpointSlices of the pool's current selector. */
  #slicesRead = false;
  #rr = 0;
  #watch: PoolWatch | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #intervalMs: number;
  #warned = new Set<string>();

  constructor(ref: InferencePoolRef, start: (source: PoolSource) => Promise<PoolWatch>) {
    this.ref = ref;
    this.#namespace = ref.namespace;
    this.#intervalMs = ref.scrape_interval_ms ?? DEFAULT_SCRAPE_MS;
    start(this).then(
      (w) => {
        if (this.#stopped) void w.stop();
        else {
          this.#watch = w;
          this.#namespace = w.namespace;
        }
      },
      (err: unknown) => this.#fail(`InferencePool ${this.id}: discovery could not start: ${(err as Error).message}`),
    );
    this.#timer = setInterval(() => this.#scrapeAll(), this.#intervalMs);
    this.#timer.unref();
  }

  get id(): string {
    return `${this.#namespace ?? '(default namespace)'}/${this.ref.name}`;
  }

  // Events from the watch.
  pool(spec: PoolSpec | undefined): void {
    // Another selector: the slices known are another set's until the watch delivers the new one.
    if (selectorText(spec?.matchLabels ?? {}) !== selectorText(this.#spec?.matchLabels ?? {})) this.#slicesRead = false;
    this.#spec = spec;
    this.#update();
  }

  slices(slices: readonly SliceLike[]): void {
    this.#slices = slices;
    this.#slicesRead = true;
    this.#update();
  }

  error(message: string): void {
    this.#fail(message);
  }

  #fail(message: string): void {
    this.#warnOnce(message);
    // Servers already known keep serving while the API server is away (the watch is retried).
    if (this.#servers.length > 0) return;
    this.#state = 'error';
    this.#message = message;
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    log.warn('inference pool', { pool: this.id, problem: message });
  }

  #update(): void {
    if (!this.#spec) {
      this.#servers = [];
      this.#state = 'missing';
      this.#message = `InferencePool ${this.id} does not exist`;
      this.#warnOnce(this.#message);
      return;
    }
    // The pool alone says nothing of its servers: until its EndpointSlices are read, the state stays
    // what it was (starting, or the last failure), rather than "no ready endpoint" for a moment at
    // start, or at each re-list of the pool while the slices cannot be read.
    if (!this.#slicesRead) return;
    const { servers, refused } = poolServers(this.#spec.targetPorts, this.#slices);
    for (const why of refused) this.#warnOnce(`an endpoint of InferencePool ${this.id} is left out: ${why}`);
    // Keep what is known of servers that stay (their load, their requests in flight).
    const known = new Map(this.#servers.map((s) => [s.origin, s]));
    this.#servers = servers.map((s) => known.get(s.origin) ?? { ...s, scraping: false, inFlight: 0 });
    this.#state = this.#servers.length > 0 ? 'ready' : 'empty';
    this.#message = this.#servers.length > 0 ? undefined : `InferencePool ${this.id} has no ready endpoint (no EndpointSlice labelled ${selectorText(this.#spec.matchLabels)} lists a ready address on its target ports ${this.#spec.targetPorts.join(', ')})`;
    const newcomers = this.#servers.filter((s) => !known.has(s.origin));
    if (newcomers.length) this.#scrape(newcomers);
  }

  pick(): PickedEndpoint | { error: string } {
    if (this.#servers.length === 0) return { error: this.#message ?? `InferencePool ${this.id}: its endpoints are not known yet` };
    const now = Date.now();
    const staleMs = STALE_INTERVALS * this.#intervalMs;
    const servers = this.#servers;
    const chosen: Pick | undefined = pickServer(
      servers.map((s) => {
        const fresh = s.scrapedAt !== undefined && now - s.scrapedAt <= staleMs && s.load?.waiting !== undefined;
        return { fresh, inFlight: s.inFlight, ...(fresh && { waiting: s.load?.waiting, kvCache: s.load?.kvCache }) };
      }),
      this.#rr++,
    );
    if (!chosen) return { error: this.#message ?? `InferencePool ${this.id} has no endpoint` };
    const server = servers[chosen.index];
    server.inFlight++;
    let released = false;
    return {
      origin: server.origin,
      release: () => {
        if (released) return;
        released = true;
        server.inFlight--;
      },
    };
  }

  report(): PoolState {
    const now = Date.now();
    const staleMs = STALE_INTERVALS * this.#intervalMs;
    const reporting = this.#servers.filter((s) => s.scrapedAt !== undefined && now - s.scrapedAt <= staleMs).length;
    return { state: this.#state, servers: this.#servers.length, reporting, ...(this.#message && { message: this.#message }) };
  }

  #scrapeAll(): void {
    if (!this.#stopped) this.#scrape(this.#servers);
  }

  #scrape(servers: readonly Server[]): void {
    const path = this.ref.metrics_path ?? DEFAULT_METRICS_PATH;
    const deadline = Math.min(this.#intervalMs, MAX_SCRAPE_DEADLINE_MS);
    for (const server of servers) {
      // One scrape per server at a time: a slow one is not asked again until it answers or times out.
      if (server.scraping) continue;
      server.scraping = true;
      const host = server.address.includes(':') ? `[${server.address}]` : server.address;
      const origin = this.ref.metrics_port ? `http://${host}:${this.ref.metrics_port}` : server.origin;
      poolFor(origin, 2)
        .request({ method: 'GET', path, headers: { accept: 'text/plain' }, signal: AbortSignal.timeout(deadline), headersTimeout: deadline, bodyTimeout: deadline })
        .then(async (res) => {
          if (res.statusCode !== 200) {
            await res.body.dump();
            return undefined;
          }
          return parseServerLoad(await res.body.text());
        })
        .catch(() => undefined)
        .then((load) => {
          server.scraping = false;
          // No answer, or no load in it: the last report ages into staleness (round robin takes over).
          if (!load || load.waiting === undefined) return;
          server.load = load;
          server.scrapedAt = Date.now();
        });
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#watch?.stop();
  }
}

const selectorText = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

const keyOf = (ref: InferencePoolRef): string => JSON.stringify([ref.namespace ?? '', ref.name, ref.metrics_path ?? '', ref.metrics_port ?? 0, ref.scrape_interval_ms ?? 0]);

/** The sources in use, by reference. */
const sources = new Map<string, PoolSource>();

async function startWatch(source: PoolSource): Promise<PoolWatch> {
  const { watchPool } = await import('./watch.ts');
  return watchPool(source.ref.name, source.ref.namespace, source);
}

/** Makes InferencePool providers work in this process: installed by the gateway at start. */
export function startPoolDiscovery(): void {
  setEndpointDiscovery((ref) => {
    const key = keyOf(ref);
    let source = sources.get(key);
    if (!source) {
      source = new PoolSource(ref, startWatch);
      sources.set(key, source);
    }
    return source;
  });
}

/** The pool references of a snapshot's providers. */
export function poolRefs(snapshot: Snapshot): InferencePoolRef[] {
  return Object.values(snapshot.config.providers ?? {}).flatMap((p) => (p.network_config?.inference_pool ? [p.network_config.inference_pool] : []));
}

/** Stops the sources no provider of the served configuration names (`refs`: those it does). */
export function retainPools(refs: readonly InferencePoolRef[]): void {
  const keep = new Set(refs.map(keyOf));
  for (const [key, source] of sources) {
    if (keep.has(key)) continue;
    sources.delete(key);
    void source.stop();
  }
}

/** The providers of `snapshot` whose pool gives no server to send to, and why (the served report). */
export function poolProblems(snapshot: Snapshot): Record<string, { problem: string }> {
  const out: Record<string, { problem: string }> = {};
  for (const [name, provider] of snapshot.providers) {
    if (!(provider.endpoints instanceof PoolSource)) continue;
    const r = provider.endpoints.report();
    if (r.state === 'missing' || r.state === 'error' || r.state === 'empty') out[name] = { problem: r.message ?? r.state };
  }
  return out;
}

/** Each pool's state, by `namespace/name`. */
export function poolStates(): Record<string, PoolState> {
  return Object.fromEntries([...sources.values()].map((s) => [s.id, s.report()]));
}

export async function stopPoolDiscovery(): Promise<void> {
  setEndpointDiscovery(undefined);
  const all = [...sources.values()];
  sources.clear();
  await Promise.allSettled(all.map((s) => s.stop()));
}
