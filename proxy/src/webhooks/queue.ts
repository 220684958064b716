// The durable delivery queue: one webhook_deliveries row per delivery (its id is the webhook-id),
// one webhook_attempts row per HTTP attempt. A node claims due rows with a lease (a random token and
// an expiry); only the holder of the current token may record the outcome, and a lease that runs out
// (the node died) makes the row claimable again, so a delivery survives a restart or a lost replica.
// PostgreSQL claims with FOR UPDATE SKIP LOCKED so replicas never wait on (or take) each other's rows.
import { createHash, randomBytes } from 'node:crypto';
import type { Row, SqlDriver } from '../logs/driver.ts';

/** Delivery states: pending (queued, or a retry scheduled), and the three final ones. */
export type DeliveryState = 'pending' | 'delivered' | 'exhausted' | 'discarded';
export const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'delivered', 'exhausted', 'discarded'];

/** A finished async job as the webhook seam receives it. */
export interface JobOutcome {
  id: string;
  request_type: string;
  status: 'completed' | 'failed';
  status_code: number;
  result_url: string;
  result_expires_at: string;
  /** The submit's request id (its x-request-id), when the job has one. */
  request_id?: string;
  response?: unknown;
  error?: unknown;
  /** The W3C trace context the job was submitted in, sent with each attempt (never in the body). */
  trace?: TraceContext;
}

export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** What a delivery row keeps of the job: its id as `job_id`, the answer inlined or marked omitted. */
export type StoredData = Omit<JobOutcome, 'id'> & { job_id: string; response_omitted?: true; error_omitted?: true };

export interface NewDelivery {
  endpoint: string;
  event: string;
  data: StoredData;
}

export interface ClaimedDelivery {
  id: string;
  endpoint: string;
  event: string;
  data: StoredData;
  resultExpiresAt: number | undefined;
  sendNo: number;
  /** Attempts already made in this send. */
  attempts: number;
  createdAt: number;
  leaseToken: string;
}

export interface AttemptRecord {
  deliveryId: string;
  sendNo: number;
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode?: number;
  outcome: 'success' | 'failure';
  error?: string;
  responseBody?: string;
  node: string;
}

export const newDeliveryId = (): string => `msg_${randomBytes(18).toString('base64url')}`;

/** The delivery id of a job's event to an endpoint: the same on every enqueue of it. */
export const jobDeliveryId = (endpoint: string, event: string, jobId: string): string =>
  `msg_${createHash('sha256').update(`${endpoint}\u0000${event}\u0000${jobId}`).digest('base64url').slice(0, 24)}`;
export const newLeaseToken = (): string => randomBytes(12).toString('base64url');

const ATTEMPT_COLUMNS = ['delivery_id', 'send_no', 'attempt', 'started_at', 'duration_ms', 'status_code', 'outcome', 'error', 'response_body', 'node'] as const;
const ATTEMPT_TYPES = ['text', 'integer', 'integer', 'bigint', 'double precision', 'integer', 'text', 'text', 'text', 'text'] as const;

function parseTime(iso: string): number | undefined {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : undefined;
}

export class DeliveryQueue {
  readonly db: SqlDriver;
  constructor(db: SqlDriver) {
    this.db = db;
  }

  /**
   * Stores a new delivery, due now; resolves once the row is written. With `id` given, a delivery
   * with that id already stored is kept as it is (an enqueue repeated after a crash adds nothing).
   */
  async add(d: NewDelivery, now = Date.now(), id = newDeliveryId()): Promise<string> {
    await this.db.execute(
      `INSERT INTO webhook_deliveries (id, endpoint, event, job_id, data, result_expires_at, state, send_no, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 1, 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      [id, d.endpoint, d.event, d.data.job_id, JSON.stringify(d.data), parseTime(d.data.result_expires_at) ?? null, now, now, now],
    );
    return id;
  }

  /** Takes up to `limit` due deliveries of one endpoint under a lease of `leaseMs`. */
  async claim(endpoint: string, limit: number, leaseMs: number, now = Date.now()): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const token = newLeaseToken();
    const skipLocked = this.db.dialect.name === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const rows = await this.db.query(
      `UPDATE webhook_deliveries SET lease_token = ?, lease_until = ?
       WHERE id IN (SELECT id FROM webhook_deliveries
         WHERE state = 'pending' AND endpoint = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)
         ORDER BY next_attempt_at LIMIT ?${skipLocked})
       RETURNING id, endpoint, event, data, result_expires_at, send_no, attempts, created_at`,
      [token, now + leaseMs, endpoint, now, now, limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      endpoint: String(r.endpoint),
      event: String(r.event),
      data: JSON.parse(String(r.data)) as StoredData,
      resultExpiresAt: r.result_expires_at === null || r.result_expires_at === undefined ? undefined : Number(r.result_expires_at),
      sendNo: Number(r.send_no),
      attempts: Number(r.attempts),
      createdAt: Number(r.created_at),
      leaseToken: token,
    }));
  }

  /** Endpoints with due, unleased deliveries (so deliveries of a deleted endpoint are found too). */
  async dueEndpoints(now = Date.now()): Promise<string[]> {
    const rows = await this.db.query(
      "SELECT DISTINCT endpoint FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)",
      [now, now],
    );
    return rows.map((r) => String(r.endpoint));
  }

  /**
   * Records an attempt and moves the delivery on: to `state` (a final one), or back to pending due
   * at `nextAt`. Resolves false when the lease was lost (another node took the row over): the
   * attempt is still recorded, the row is left to its new holder.
   */
  async finish(d: ClaimedDelivery, attempt: AttemptRecord, next: { state: DeliveryState; nextAt?: number }): Promise<boolean> {
    await this.recordAttempt(attempt);
    const changed = await this.db.execute(
      `UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, last_status = ?, last_error = ?, lease_token = NULL, lease_until = NULL, updated_at = ?
       WHERE id = ? AND lease_token = ?`,
      [next.state, next.nextAt ?? Date.now(), attempt.statusCode ?? null, attempt.error ?? null, Date.now(), d.id, d.leaseToken],
    );
    return changed > 0;
  }

  async recordAttempt(a: AttemptRecord): Promise<void> {
    await this.db.insert([
      {
        table: 'webhook_attempts',
        columns: ATTEMPT_COLUMNS,
        types: ATTEMPT_TYPES,
        rows: [[a.deliveryId, a.sendNo, a.attempt, a.startedAt, a.durationMs, a.statusCode ?? null, a.outcome, a.error ?? null, a.responseBody ?? null, a.node]],
      },
    ]);
  }

  /** Ends a claimed delivery without an attempt (its endpoint was deleted or disabled). */
  async discard(d: ClaimedDelivery, reason: string): Promise<void> {
    await this.db.execute(
      "UPDATE webhook_deliveries SET state = 'discarded', last_error = ?, lease_token = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND lease_token = ?",
      [reason, Date.now(), d.id, d.leaseToken],
    );
  }

  /** Re-queues a delivery that reached a final state as a new send under the same row. */
  async redeliver(id: string): Promise<'queued' | 'pending' | 'missing'> {
    const now = Date.now();
    const changed = await this.db.execute(
      "UPDATE webhook_deliveries SET state = 'pending', send_no = send_no + 1, attempts = 0, next_attempt_at = ?, lease_token = NULL, lease_until = NULL, updated_at = ? WHERE id = ? AND state <> 'pending'",
      [now, now, id],
    );
    if (changed > 0) return 'queued';
    const rows = await this.db.query('SELECT state FROM webhook_deliveries WHERE id = ?', [id]);
    return rows.length ? 'pending' : 'missing';
  }

  /** Pending deliveries and the age of the oldest one (ms), for the metrics. */
  async depth(now = Date.now()): Promise<{ pending: number; oldestAgeMs: number }> {
    const rows = await this.db.query("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries WHERE state = 'pending'");
    const n = Number(rows[0]?.n ?? 0);
    const oldest = rows[0]?.oldest;
    return { pending: n, oldestAgeMs: n > 0 && oldest !== null && oldest !== undefined ? Math.max(0, now - Number(oldest)) : 0 };
  }

  /** Deletes finished deliveries (and their attempts) last changed before `cutoff`, in batches. */
  async deleteFinishedBefore(cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = (await this.db.query("SELECT id FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ? LIMIT 1000", [cutoff])).map((r) => String(r.id));
      if (ids.length === 0) return total;
      const marks = ids.map(() => '?').join(', ');
      await this.db.execute(`DELETE FROM webhook_attempts WHERE delivery_id IN (${marks})`, ids);
      total += await this.db.execute(`DELETE FROM webhook_deliveries WHERE id IN (${marks})`, ids);
      if (ids.length < 1000) return total;
    }
  }

  async rows(where: string, params: readonly unknown[], limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
    const total = Number((await this.db.query(`SELECT COUNT(*) AS n FROM webhook_deliveries d${where}`, params))[0]?.n ?? 0);
    const rows = await this.db.query(`SELECT d.* FROM webhook_deliveries d${where} ORDER BY d.created_at DESC, d.id DESC LIMIT ? OFFSET ?`, [...params, limit, offset]);
    return { rows, total };
  }

  async attemptsOf(ids: readonly string[]): Promise<Row[]> {
    if (ids.length === 0) return [];
    return this.db.query(`SELECT * FROM webhook_attempts WHERE delivery_id IN (${ids.map(() => '?').join(', ')}) ORDER BY send_no, attempt`, ids);
  }
}
