// Leader election on a coordination.k8s.io/v1 Lease, the way client-go's leaderelection does it:
// the leader renews the lease every retry period; a candidate takes it over once the record it
// observed has not changed for a whole lease duration (measured on its own clock, so clock skew
// between replicas does not matter); optimistic concurrency (resourceVersion) makes two
// candidates racing for one lease end with one leader. A leader that cannot renew within the
// renew deadline stops writing before anyone else may start, but stays the leader while its
// lease is still valid: a brief API-server outage (no one can take the lease then either) pauses
// it rather than ending its term, so it resumes with its state instead of starting over. Only a
// lease that ran out, or another holder seen on it, ends the term; and a leader that finds the
// record it last wrote still unchanged afterwards (nobody held the lease meanwhile) resumes.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeApiError, isConflict, isNotFound, resourcePath, type KubeClient } from './kube/client.ts';
import { log } from '../../proxy/src/contract.ts';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: LeaseSpec;
}

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity?: string;
  /** How long a lease is good for without renewal (client-go default 15 s). */
  leaseDurationMs: number;
  /** A leader that has not renewed for this long steps down (default 2/3 of the lease). */
  renewDeadlineMs?: number;
  /** Between attempts to acquire or renew (default lease / 7.5, so 2 s for 15 s). */
  retryPeriodMs?: number;
  /** `resumed`: the lease was ours without a break (the record we last wrote, unchanged): no one else wrote meanwhile. */
  onStartedLeading: (resumed: boolean) => void;
  onStoppedLeading: () => void;
  onNewLeader?: (identity: string) => void;
}

/** Between attempts of a lapsed leader to resume its term while the API server does not answer. */
export const RESUME_RETRY_MS = 200;

export const defaultIdentity = (): string => `${hostname()}_${process.pid}_${randomBytes(3).toString('hex')}`;

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export const microTime = (d: Date): string => d.toISOString().replace(/Z$/, '000Z');

export class LeaderElector {
  readonly identity: string;
  readonly #opts: Required<Omit<LeaderElectorOptions, 'onNewLeader' | 'identity'>> & Pick<LeaderElectorOptions, 'onNewLeader'>;
  readonly #path: string;
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  /** The last record seen and when (local clock) it last changed. */
  #observed: { key: string; at: number } | undefined;
  #lastRenew = 0;
  /** renewTime of the record this replica last wrote: finding it unchanged means no one held the lease since. */
  #lastWritten: string | undefined;
  /** The last successful renewal continued that record (rather than taking over another's or an empty one). */
  #unbroken = false;
  #lastLeader: string | undefined;
  #failing = false;

  constructor(opts: LeaderElectorOptions) {
    const renewDeadlineMs = opts.renewDeadlineMs ?? Math.round((opts.leaseDurationMs * 2) / 3);
    const retryPeriodMs = opts.retryPeriodMs ?? Math.round(opts.leaseDurationMs / 7.5);
    if (!(opts.leaseDurationMs > renewDeadlineMs && renewDeadlineMs > retryPeriodMs)) {
      throw new Error('leader election needs lease duration > renew deadline > retry period');
    }
    this.identity = opts.identity ?? defaultIdentity();
    this.#opts = { ...opts, renewDeadlineMs, retryPeriodMs, onNewLeader: opts.onNewLeader };
    this.#path = resourcePath('coordination.k8s.io/v1', 'leases', opts.namespace);
  }

  get leading(): boolean {
    return this.#leading;
  }

  /**
   * Leading, and renewed recently enough that no one else can have taken over. A process that was
   * paused (or starved) past its renew deadline fails this before its timers even run: every write
   * checks it, so a stale leader never writes over a new one.
   */
  holdsLease(): boolean {
    return this.#leading && Date.now() - this.#lastRenew < this.#opts.renewDeadlineMs;
  }

  start(): void {
    this.#stopped = false;
    void this.#tick();
  }

  /** Stop competing; a leader gives the lease up so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return;
    this.#setLeading(false);
    try {
      const lease = await this.#client.get<Lease>(`${this.#path}/${this.#opts.name}`);
      if (lease.spec.holderIdentity !== this.identity) return;
      const now = microTime(new Date());
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
      await this.#client.replace(`${this.#path}/${this.#opts.name}`, lease);
    } catch (err) {
      log.warn('releasing the leader lease failed', { error: (err as Error).message });
    }
  }

  get #client(): KubeClient {
    return this.#opts.client;
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    let renewed = false;
    try {
      renewed = await this.tryAcquireOrRenew();
      this.#failing = false;
    } catch (err) {
      // Once per outage at warn: retries come every retry period.
      (this.#failing ? log.debug : log.warn)('leader election: lease request failed', { error: (err as Error).message, leading: this.#leading });
      this.#failing = true;
    }
    if (this.#stopped) return;
    const now = Date.now();
    if (renewed) {
      this.#lastRenew = now;
      if (!this.#leading) this.#setLeading(true, this.#unbroken);
    } else if (this.#leading && now - this.#lastRenew > this.#opts.leaseDurationMs) {
      // Writes stopped at the renew deadline (holdsLease); past the lease duration another replica may hold it.
      log.warn('leader election: the lease ran out without a renewal, stepping down', { identity: this.identity });
      this.#setLeading(false);
    }
    // Candidates jitter their attempts so replicas do not hit the API server in lockstep. A leader
    // whose term lapsed while the API server was away tries more often: it alone may resume at once
    // (the record is its own; anyone else waits a whole lease duration), and each attempt against an
    // absent server costs one refused connection.
    const resumable = !this.#leading && this.#failing && this.#lastWritten !== undefined;
    const wait = this.#leading ? this.#opts.retryPeriodMs : resumable ? Math.min(this.#opts.retryPeriodMs, RESUME_RETRY_MS) : this.#opts.retryPeriodMs * (1 + Math.random() * 0.2);
    this.#timer = setTimeout(() => void this.#tick(), wait);
  }

  /** One attempt: true when this replica holds the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, leaseDurationMs } = this.#opts;
    const timeoutMs = Math.max(1000, Math.round(this.#opts.renewDeadlineMs / 2));
    const now = new Date();
    const mine: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.max(1, Math.round(leaseDurationMs / 1000)),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    let lease: Lease;
    try {
      lease = await this.#client.request<Lease>('GET', `${this.#path}/${name}`, { timeoutMs });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const fresh: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: mine };
      try {
        await this.#client.request('POST', this.#path, { body: fresh, timeoutMs });
      } catch (e) {
        if (isConflict(e) || (e instanceof KubeApiError && e.reason === 'AlreadyExists')) return false;
        throw e;
      }
      this.#observe(mine);
      this.#wrote(mine, false);
      return true;
    }
    const spec = lease.spec ?? {};
    this.#observe(spec);
    const holder = spec.holderIdentity ?? '';
    const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== this.identity) {
      // Someone else renewed it: our term is over, whatever our clock says.
      if (this.#leading) {
        log.warn('leader election: another replica holds the lease, stepping down', { identity: this.identity, holder });
        this.#setLeading(false);
      }
      if ((this.#observed as { at: number }).at + duration > Date.now()) return false;
    }
    const unbroken = holder === this.identity && this.#lastWritten !== undefined && spec.renewTime === this.#lastWritten;
    const next: LeaseSpec =
      holder === this.identity
        ? { ...spec, ...mine, acquireTime: spec.acquireTime ?? mine.acquireTime, leaseTransitions: spec.leaseTransitions ?? 0 }
        : { ...spec, ...mine, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      await this.#client.request('PUT', `${this.#path}/${name}`, { body: { ...lease, spec: next }, timeoutMs });
    } catch (err) {
      if (isConflict(err)) return false; // someone else wrote it first
      throw err;
    }
    this.#observe(next);
    this.#wrote(next, unbroken);
    return true;
  }

  #wrote(spec: LeaseSpec, unbroken: boolean): void {
    this.#lastWritten = spec.renewTime ?? undefined;
    this.#unbroken = unbroken;
  }

  #observe(spec: LeaseSpec): void {
    const key = `${spec.holderIdentity ?? ''}|${spec.renewTime ?? ''}|${spec.leaseDurationSeconds ?? ''}`;
    if (this.#observed?.key !== key) this.#observed = { key, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    if (holder && holder !== this.#lastLeader) {
      this.#lastLeader = holder;
      this.#opts.onNewLeader?.(holder);
    }
  }

  #setLeading(leading: boolean, resumed = false): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    if (leading) this.#opts.onStartedLeading(resumed);
    else this.#opts.onStoppedLeading();
  }
}
