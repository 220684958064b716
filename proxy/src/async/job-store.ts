// The async_jobs table (logs migration 2) over the log store's SqlDriver, the same SQL on SQLite and
// PostgreSQL. A job is claimed with a lease: a random lease id and a deadline written in one
// statement that only succeeds on a pending job or a lapsed lease (PostgreSQL adds FOR UPDATE SKIP
// LOCKED so replicas claiming together skip each other's rows instead of waiting; SQLite runs the
// statement under its single write lock). Every later write names the lease id, so a worker whose
// lease was taken over cannot overwrite the new holder's job.
import type { Row, SqlDriver } from '../logs/driver.ts';
import { StoreTimeoutError } from '../store-guard.ts';
import { GatewayError } from '../unified/errors.ts';

/** On the request path: the store deadline (SKYBRIDGE_STORE_TIMEOUT_MS), not the statement timeout. */
const FAST = { fast: true } as const;

/**
 * A submit or fetch the database cannot answer (silent past the deadline, or unreachable): a 503 the
 * client can retry, not a 500. SQL errors stay what they are.
 */
export function jobStoreUnavailable(err: unknown): unknown {
  const code = (err as { code?: unknown } | undefined)?.code;
  const unreachable = typeof code === 'string' && /^E[A-Z]+$/.test(code);
  const connectTimeout = err instanceof Error && /timeout exceeded when trying to connect|Connection terminated/i.test(err.message);
  if (!(err instanceof StoreTimeoutError) && !unreachable && !connectTimeout) return err;
  return new GatewayError(503, `the async job store does not answer right now (${(err as Error).message}); nothing was stored: retry shortly`, {
    type: 'service_unavailable',
    code: 'async_store_unavailable',
    retryAfter: 1,
  });
}

async function onRequestPath<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw jobStoreUnavailable(err);
  }
}

export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type WebhookState = 'pending' | 'queued' | 'skipped';

export interface NewJob {
  id: string;
  /** execute() operation (chat, embeddings, transcription, ...). */
  operation: string;
  /** The async path after /v1/async/ (chat/completions, audio/speech, ...). */
  path: string;
  request_type: string;
  virtual_key_id: string | undefined;
  /** JSON text of the request (a form: its parts, files base64). */
  request_body: string;
  /** JSON text of the client headers kept for the run (no credentials). */
  request_headers: string;
  webhook: string | undefined;
  created_at: number;
  ttl_seconds: number;
  /** The submit's request id (its x-request-id): the run, its log record and webhook deliveries carry it. */
  request_id?: string;
}

export interface Job {
  id: string;
  operation: string;
  path: string;
  request_type: string;
  status: JobStatus;
  virtual_key_id: string | undefined;
  request_body: string | undefined;
  request_headers: string | undefined;
  webhook: string | undefined;
  webhook_state: WebhookState | undefined;
  created_at: number;
  ttl_seconds: number;
  expires_at: number;
  completed_at: number | undefined;
  status_code: number | undefined;
  result: string | undefined;
  error: string | undefined;
  lease_id: string | undefined;
  attempts: number;
  expired: boolean;
  /** The submit's request id; undefined for jobs stored before migration 11. */
  request_id?: string;
}

export interface Finish {
  status: 'completed' | 'failed';
  status_code: number;
  result?: string;
  error?: string;
  completed_at: number;
  /** completed_at + the job's TTL. */
  expires_at: number;
}

export interface JobUsage {
  pending: number;
  bytes: number;
  nextExpiry: number | undefined;
  keyPending: number;
  keyBytes: number;
  keyNextExpiry: number | undefined;
}

const COLUMNS =
  'id, operation, path, request_type, status, virtual_key_id, request_body, request_headers, webhook, webhook_state, created_at, ttl_seconds, expires_at, completed_at, status_code, result, error, lease_id, attempts, expired, request_id';

const opt = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

function toJob(r: Row): Job {
  return {
    id: String(r.id),
    operation: String(r.operation),
    path: String(r.path),
    request_type: String(r.request_type),
    status: String(r.status) as JobStatus,
    virtual_key_id: opt(r.virtual_key_id),
    request_body: opt(r.request_body),
    request_headers: opt(r.request_headers),
    webhook: opt(r.webhook),
    webhook_state: opt(r.webhook_state) as WebhookState | undefined,
    created_at: Number(r.created_at),
    ttl_seconds: Number(r.ttl_seconds),
    expires_at: Number(r.expires_at),
    completed_at: optNum(r.completed_at),
    status_code: optNum(r.status_code),
    result: opt(r.result),
    error: opt(r.error),
    lease_id: opt(r.lease_id),
    attempts: Number(r.attempts ?? 0),
    expired: Number(r.expired ?? 0) === 1,
    request_id: opt(r.request_id),
  };
}

export class JobStore {
  readonly #db: SqlDriver;
  readonly #skipLocked: string;

  constructor(db: SqlDriver) {
    this.#db = db;
    this.#skipLocked = db.dialect.name === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
  }

  get kind(): 'sqlite' | 'postgres' {
    return this.#db.dialect.name;
  }

  get driver(): SqlDriver {
    return this.#db;
  }

  /**
   * Stores a new job: pending, or (`lease`: the accepting replica has a free slot) already claimed by
   * it, which saves the claim round trip and the wait for a poll. Durability is the same either way:
   * if that replica dies, the lease lapses and any replica takes the job.
   */
  async insert(j: NewJob, lease?: { id: string; owner: string; until: number }): Promise<Job> {
    const expires = j.created_at + j.ttl_seconds * 1000;
    const status = lease ? 'processing' : 'pending';
    const attempts = lease ? 1 : 0;
    await onRequestPath(this.#db.execute(
      `INSERT INTO async_jobs (id, operation, path, request_type, status, virtual_key_id, request_body, request_headers, webhook, webhook_state, created_at, ttl_seconds, expires_at, attempts, expired, lease_id, lease_owner, lease_until, started_at, request_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
      [
        j.id, j.operation, j.path, j.request_type, status, j.virtual_key_id ?? null, j.request_body, j.request_headers, j.webhook ?? null, j.webhook ? 'pending' : null,
        j.created_at, j.ttl_seconds, expires, attempts, lease?.id ?? null, lease?.owner ?? null, lease?.until ?? null, lease ? j.created_at : null, j.request_id ?? null,
      ],
      FAST,
    ));
    return {
      ...j,
      status,
      request_body: j.request_body,
      request_headers: j.request_headers,
      webhook_state: j.webhook ? 'pending' : undefined,
      expires_at: expires,
      completed_at: undefined,
      status_code: undefined,
      result: undefined,
      error: undefined,
      lease_id: lease?.id,
      attempts,
      expired: false,
      request_id: j.request_id,
    };
  }

  async get(id: string): Promise<Job | undefined> {
    const rows = await onRequestPath(this.#db.query(`SELECT ${COLUMNS} FROM async_jobs WHERE id = ?`, [id], FAST));
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /**
   * Takes up to `limit` runnable jobs (pending, or processing with a lapsed lease) each under the new
   * lease `leaseId` until `leaseUntil`; `owner` names the replica (host:pid) for whoever looks at the
   * table. Attempts count claims, so a job whose runs keep dying can be given up on.
   *
   * Fair between virtual keys: a job's turn is its place in its key's queue plus the jobs that key
   * has running (any replica), oldest first among equal turns. So one key's backlog of a hundred
   * jobs does not make another key's job wait behind it: the other key's first job goes at the next
   * free slot. Jobs without a key share one queue.
   */
  async claim(leaseId: string, owner: string, now: number, leaseUntil: number, limit: number): Promise<Job[]> {
    const runnable = "(status = 'pending' OR (status = 'processing' AND lease_until < ?))";
    const key = "COALESCE(virtual_key_id, '')";
    const fair = `SELECT q.id FROM
         (SELECT id, created_at, ${key} AS k, ROW_NUMBER() OVER (PARTITION BY ${key} ORDER BY created_at, id) AS turn FROM async_jobs WHERE ${runnable}) q
         LEFT JOIN (SELECT ${key} AS k, COUNT(*) AS n FROM async_jobs WHERE status = 'processing' AND lease_until >= ? GROUP BY ${key}) busy ON busy.k = q.k
       ORDER BY q.turn + COALESCE(busy.n, 0), q.created_at, q.id LIMIT ?`;
    const rows = await this.#db.query(
      `UPDATE async_jobs SET status = 'processing', lease_id = ?, lease_owner = ?, lease_until = ?, started_at = ?, attempts = attempts + 1
       WHERE id IN (SELECT id FROM async_jobs WHERE id IN (${fair}) AND ${runnable}${this.#skipLocked}) AND ${runnable}
       RETURNING ${COLUMNS}`,
      [leaseId, owner, leaseUntil, now, now, now, limit, now, now],
    );
    return rows.map(toJob);
  }

  /**
   * What live jobs hold in the store, in all and for one virtual key ('' : jobs without a key): jobs
   * waiting or running, and bytes kept (stored requests, results, errors), with the earliest expiry
   * of a finished job (when room is freed for sure). One scan; octet_length reads no text.
   */
  async usage(virtualKeyId: string | undefined): Promise<JobUsage> {
    const live = "status IN ('pending', 'processing')";
    const finished = "status IN ('completed', 'failed')";
    const mine = "COALESCE(virtual_key_id, '') = ?";
    const bytes = 'COALESCE(octet_length(request_body), 0) + COALESCE(octet_length(result), 0) + COALESCE(octet_length(error), 0)';
    const k = virtualKeyId ?? '';
    const [r] = await onRequestPath(this.#db.query(
      `SELECT
         SUM(CASE WHEN ${live} THEN 1 ELSE 0 END) AS pending,
         SUM(${bytes}) AS bytes,
         MIN(CASE WHEN ${finished} THEN expires_at END) AS next_expiry,
         SUM(CASE WHEN ${mine} AND ${live} THEN 1 ELSE 0 END) AS key_pending,
         SUM(CASE WHEN ${mine} THEN ${bytes} ELSE 0 END) AS key_bytes,
         MIN(CASE WHEN ${mine} AND ${finished} THEN expires_at END) AS key_next_expiry
       FROM async_jobs WHERE expired = 0`,
      [k, k, k],
      FAST,
    ));
    const n = (v: unknown) => Number(v ?? 0);
    return {
      pending: n(r?.pending),
      bytes: n(r?.bytes),
      nextExpiry: optNum(r?.next_expiry),
      keyPending: n(r?.key_pending),
      keyBytes: n(r?.key_bytes),
      keyNextExpiry: optNum(r?.key_next_expiry),
    };
  }

  /** Extends the lease; false when it is no longer this worker's (taken over, or the job is gone). */
  async renew(id: string, leaseId: string, leaseUntil: number): Promise<boolean> {
    return (await this.#db.execute(`UPDATE async_jobs SET lease_until = ? WHERE id = ? AND lease_id = ? AND status = 'processing'`, [leaseUntil, id, leaseId])) === 1;
  }

  /**
   * Records the outcome (and drops the request, no longer needed) if the lease is still this
   * worker's. The lease is kept until `leaseUntil`: the finisher hands the webhook event over in
   * that window before a recovering worker would.
   */
  async finish(id: string, leaseId: string, f: Finish, leaseUntil: number): Promise<Job | undefined> {
    const rows = await this.#db.query(
      `UPDATE async_jobs SET status = ?, status_code = ?, result = ?, error = ?, completed_at = ?, expires_at = ?,
         request_body = NULL, request_headers = NULL, lease_until = ?
       WHERE id = ? AND lease_id = ? AND status = 'processing'
       RETURNING ${COLUMNS}`,
      [f.status, f.status_code, f.result ?? null, f.error ?? null, f.completed_at, f.expires_at, leaseUntil, id, leaseId],
    );
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /** Gives a running job back (a replica shutting down): pending again, the cut-off run not counted. */
  async release(id: string, leaseId: string): Promise<void> {
    await this.#db.execute(
      `UPDATE async_jobs SET status = 'pending', lease_id = NULL, lease_until = NULL, attempts = attempts - 1 WHERE id = ? AND lease_id = ? AND status = 'processing'`,
      [id, leaseId],
    );
  }

  async markWebhook(id: string, state: WebhookState): Promise<void> {
    await this.#db.execute(`UPDATE async_jobs SET webhook_state = ? WHERE id = ?`, [state, id]);
  }

  /**
   * Finished jobs whose webhook event was never handed over and whose finisher's window has lapsed
   * (it died in between): taken under a new lease, so two recovering replicas do not both take one.
   */
  async claimUnhandedEvents(leaseId: string, now: number, leaseUntil: number, limit: number): Promise<Job[]> {
    const waiting = "(status IN ('completed', 'failed') AND webhook_state = 'pending' AND expired = 0 AND lease_until < ?)";
    const rows = await this.#db.query(
      `UPDATE async_jobs SET lease_id = ?, lease_until = ?
       WHERE id IN (SELECT id FROM async_jobs WHERE ${waiting} ORDER BY completed_at LIMIT ?${this.#skipLocked}) AND ${waiting}
       RETURNING ${COLUMNS}`,
      [leaseId, leaseUntil, now, limit, now],
    );
    return rows.map(toJob);
  }

  /**
   * Removes the results of finished jobs past their expiry, keeping a tombstone (id, owner, times)
   * so a later fetch can say the job expired; tombstones go `tombstoneMs` after expiry.
   */
  async sweep(now: number, tombstoneMs: number): Promise<{ expired: number; deleted: number }> {
    const expired = await this.#db.execute(
      `UPDATE async_jobs SET expired = 1, result = NULL, error = NULL, request_body = NULL, request_headers = NULL
       WHERE expires_at < ? AND expired = 0 AND status IN ('completed', 'failed')`,
      [now],
    );
    const deleted = await this.#db.execute(`DELETE FROM async_jobs WHERE expired = 1 AND expires_at < ?`, [now - tombstoneMs]);
    return { expired, deleted };
  }

  /** Live jobs by state (expired tombstones left out). */
  async counts(): Promise<Record<JobStatus, number>> {
    const out: Record<JobStatus, number> = { pending: 0, processing: 0, completed: 0, failed: 0 };
    for (const r of await this.#db.query(`SELECT status, COUNT(*) AS n FROM async_jobs WHERE expired = 0 GROUP BY status`)) {
      const s = String(r.status) as JobStatus;
      if (s in out) out[s] = Number(r.n);
    }
    return out;
  }
}
