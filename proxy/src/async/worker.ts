// The job runner of one replica: claims runnable jobs under a lease, keeps the lease alive while a
// job runs, records the outcome only while the lease is still its own, hands a finished job's
// webhook event over, and sweeps expired results. Any replica sharing the store may take over a job
// whose lease lapsed (its runner died): a job runs at most once per lease, at least once overall.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Snapshot } from '../config/snapshot.ts';
import { log } from '../log.ts';
import type { Job, JobStore } from './job-store.ts';
import { runJob, type Executor, type JobOutcome } from './run-job.ts';
import { asyncSettings } from './settings.ts';

/** Hands a finished job's webhook event over; resolves with what became of it. */
export type HandOver = (job: Job, snapshot: Snapshot) => Promise<'queued' | 'skipped'>;

export interface WorkerOptions {
  store: JobStore;
  current: () => Snapshot;
  execute: Executor;
  handOver: HandOver;
  /** Called with each job's final status (metrics). */
  onFinished?: (status: 'completed' | 'failed') => void;
  /** How long an expired job is still answered as expired before its row goes (ms; default 7 days). */
  tombstoneMs?: number;
}

interface Running {
  job: Job;
  leaseId: string;
  abort: AbortController;
}

/** Who holds a lease, as the async_jobs table shows it. */
const OWNER = `${hostname()}:${process.pid}`;

export const DEFAULT_TOMBSTONE_MS = 7 * 24 * 3600 * 1000;

export class JobWorker {
  readonly #o: WorkerOptions;
  readonly #running = new Map<string, Running>();
  #pollTimer: NodeJS.Timeout | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #reserved = 0;
  #passing = false;
  #again = false;
  /**
   * Pending work may be waiting (a claim filled every free slot, or a submit found none free): only
   * then does a freed slot look for more at once; otherwise the poll does, which keeps a busy
   * replica's store traffic to its own jobs' writes.
   */
  #backlog = true;
  #closed = false;

  constructor(opts: WorkerOptions) {
    this.#o = opts;
  }

  start(): void {
    const poll = () => {
      if (this.#closed) return;
      this.#backlog = true;
      this.kick(true);
      this.#pollTimer = setTimeout(poll, asyncSettings(this.#o.current().config).pollMs).unref();
    };
    poll();
    const sweep = () => {
      if (this.#closed) return;
      void this.#o.store
        .sweep(Date.now(), this.#o.tombstoneMs ?? DEFAULT_TOMBSTONE_MS)
        .then((r) => r.expired + r.deleted > 0 && log.debug('async jobs swept', r))
        .catch((err: unknown) => log.warn('async jobs: sweeping expired results failed', { error: (err as Error).message }))
        .finally(() => {
          if (!this.#closed) this.#sweepTimer = setTimeout(sweep, asyncSettings(this.#o.current().config).sweepMs).unref();
        });
    };
    this.#sweepTimer = setTimeout(sweep, asyncSettings(this.#o.current().config).sweepMs).unref();
  }

  get running(): number {
    return this.#running.size;
  }

  /** Looks for work now; `recover`: also for finished jobs whose webhook event was never handed over. */
  kick(recover = false): void {
    if (this.#closed) return;
    if (this.#passing) {
      this.#again = true;
      return;
    }
    this.#passing = true;
    void this.#pass(recover)
      .catch((err: unknown) => log.warn('async jobs: claiming failed; retrying at the next poll', { error: (err as Error).message }))
      .finally(() => {
        this.#passing = false;
        if (this.#again) {
          this.#again = false;
          this.kick();
        }
      });
  }

  async #pass(recover: boolean): Promise<void> {
    const snapshot = this.#o.current();
    const s = asyncSettings(snapshot.config);
    const free = s.concurrency - this.#running.size - this.#reserved;
    const now = Date.now();
    if (free > 0 && this.#backlog) {
      const leaseId = randomUUID();
      const claimed = await this.#o.store.claim(leaseId, OWNER, now, now + s.leaseMs, free);
      this.#backlog = claimed.length === free;
      for (const job of claimed) this.#start(job, leaseId, snapshot);
    }
    // Finished jobs whose finisher died before handing the webhook event over.
    if (recover) for (const job of await this.#o.store.claimUnhandedEvents(randomUUID(), now, now + s.leaseMs, 16)) await this.#handOver(job);
  }

  /**
   * A slot for a job submitted here, taken before the job is stored so that it is stored already
   * claimed by this replica; undefined when every slot is busy (the job is stored pending).
   */
  reserve(): { id: string; owner: string; until: number } | undefined {
    const s = asyncSettings(this.#o.current().config);
    if (this.#closed || this.#running.size + this.#reserved >= s.concurrency) {
      this.#backlog = true;
      return undefined;
    }
    this.#reserved++;
    return { id: randomUUID(), owner: OWNER, until: Date.now() + s.leaseMs };
  }

  /** Runs a job stored under a reservation, or (undefined: storing it failed) frees the slot. */
  startReserved(job: Job | undefined, leaseId: string): void {
    this.#reserved--;
    if (job && !this.#closed) this.#start(job, leaseId, this.#o.current());
  }

  #start(job: Job, leaseId: string, snapshot: Snapshot): void {
    const run: Running = { job, leaseId, abort: new AbortController() };
    this.#running.set(job.id, run);
    void this.#run(run, snapshot).finally(() => {
      this.#running.delete(job.id);
      if (this.#backlog) this.kick();
    });
  }

  async #run(r: Running, snapshot: Snapshot): Promise<void> {
    const { job, leaseId } = r;
    const s = asyncSettings(snapshot.config);
    let leaseUntil = Date.now() + s.leaseMs;
    let lost = false;
    const lose = (why: string) => {
      if (lost) return;
      lost = true;
      log.warn('async job: lease lost, run abandoned', { job: job.id, reason: why });
      r.abort.abort(new Error(why));
    };
    // Renewed at a third of the lease, so one slow or failed renewal does not lose it. When the
    // lease cannot be renewed before it lapses, the run is cut off: another replica may now have it.
    const renew = setInterval(() => {
      const next = Date.now() + s.leaseMs;
      this.#o.store.renew(job.id, leaseId, next).then(
        (ok) => {
          if (ok) leaseUntil = next;
          else lose('the lease was taken over');
        },
        (err: unknown) => {
          if (Date.now() >= leaseUntil) lose(`the lease could not be renewed (${(err as Error).message})`);
        },
      );
    }, Math.max(50, Math.floor(s.leaseMs / 3)));
    renew.unref();
    let outcome: JobOutcome;
    try {
      if (job.attempts > s.maxAttempts) {
        outcome = {
          status: 'failed',
          status_code: 500,
          error: JSON.stringify({ is_bifrost_error: true, status_code: 500, error: { message: `async job '${job.id}' was started ${job.attempts - 1} times and each run was cut off (the replica running it stopped); it is not tried again`, type: 'internal_error', code: 'job_abandoned' } }),
        };
      } else {
        outcome = await runJob(job, snapshot, this.#o.execute, r.abort.signal);
      }
    } finally {
      clearInterval(renew);
    }
    if (lost || this.#closed) return;
    const now = Date.now();
    const finished = await this.#o.store
      .finish(job.id, leaseId, { ...outcome, completed_at: now, expires_at: now + job.ttl_seconds * 1000 }, now + s.leaseMs)
      .catch((err: unknown) => {
        // The lease lapses and another replica runs the job again.
        log.error('async job: its outcome could not be stored', { job: job.id, error: (err as Error).message });
        return undefined;
      });
    if (!finished) return;
    this.#o.onFinished?.(finished.status as 'completed' | 'failed');
    // The finished row no longer holds the request's headers: the event takes its trace context from the claimed job.
    if (finished.webhook) await this.#handOver({ ...finished, request_headers: job.request_headers });
  }

  async #handOver(job: Job): Promise<void> {
    try {
      const state = await this.#o.handOver(job, this.#o.current());
      await this.#o.store.markWebhook(job.id, state);
    } catch (err) {
      // Left `pending`: once this lease lapses a recovering pass hands it over again.
      log.warn('async job: webhook event not handed over yet; retried later', { job: job.id, error: (err as Error).message });
    }
  }

  /**
   * Stops claiming. Jobs still running are cut off and given back (pending again) so another replica
   * takes them at once instead of after their lease lapses.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#pollTimer);
    clearTimeout(this.#sweepTimer);
    const running = [...this.#running.values()];
    for (const r of running) r.abort.abort(new Error('the gateway is shutting down'));
    await Promise.allSettled(running.map((r) => this.#o.store.release(r.job.id, r.leaseId)));
  }
}
