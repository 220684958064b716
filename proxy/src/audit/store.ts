// The audit log over the logs store's SqlDriver (logs migration 10): append-only records chained
// by hashes (chain.ts), the same SQL on SQLite and PostgreSQL. Replicas sharing a PostgreSQL store
// write one chain: a record takes the head's seq + 1, and the primary key lets one writer of that
// seq win; the other reads the new head and tries again. Retention deletes from the oldest end only
// and leaves a checkpoint (the hash the deleted run ended on), attested by a chained record.
import { randomUUID } from 'node:crypto';
import type { Row, SqlDriver } from '../logs/driver.ts';
import { checkRun, GENESIS, keyId, linkHash, type AuditContent, type Break, type StoredLink } from './chain.ts';
import type { AuditRecord } from './record.ts';

export type { AuditRecord } from './record.ts';

/** Who did it. */
export interface AuditActor {
  /** `admin` (Basic), `session` (the dashboard's login), `api_key` (config.json), `management_key`, `local` (auth off, loopback), `system` (a reload), `anonymous` (a failed login). */
  type: 'admin' | 'session' | 'api_key' | 'management_key' | 'local' | 'system' | 'anonymous';
  id?: string;
  name?: string;
  session_id?: string;
  remote_address?: string;
  user_agent?: string;
}

/** What a caller records; the store adds the id, time and chain. */
export interface AuditEntry {
  actor: AuditActor;
  /** `create`, `update`, `delete`, `rotate`, `login`, `logout`, `login_failed`, `issue`, `revoke`, `reload`, `retention`… */
  action: string;
  /** What was acted on: `governance/virtual-keys`, `session`, `config`, `management-keys`… */
  resource: string;
  resource_id?: string;
  method?: string;
  path?: string;
  status_code?: number;
  outcome: 'success' | 'failure' | 'denied';
  /** The change itself (a masked request body, before/after), stored as JSON. */
  details?: unknown;
}

export interface AuditFilters {
  actor?: string;
  actor_type?: string;
  action?: string;
  resource?: string;
  outcome?: string;
  /** ms, inclusive. */
  start_time?: number;
  /** ms, exclusive. */
  end_time?: number;
}

export interface VerifyResult {
  valid: boolean;
  records_checked: number;
  /** Records written under another hmac_key than the current one: linked, but their hash is not recomputed. */
  unverifiable: number;
  head: { seq: number; hash: string } | null;
  /** Where verification started: the retention checkpoint the first record links to, if any. */
  checkpoint: { through_seq: number; hash: string } | null;
  first_broken?: Break;
}

const COLUMNS = [
  'seq', 'id', 'timestamp', 'actor_type', 'actor_id', 'actor_name', 'session_id', 'remote_address', 'user_agent',
  'action', 'resource', 'resource_id', 'method', 'path', 'status_code', 'outcome', 'details', 'key_id', 'prev_hash', 'hash',
] as const;
const SELECT = `SELECT ${COLUMNS.join(', ')} FROM audit_logs`;
const APPEND_TRIES = 50;
const PAGE = 1000;
/** Field lengths stored: enough for any real value, bounded against an abusive client. */
const CAP = 512;

const s = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const cap = (v: string | undefined): string | null => (v === undefined ? null : v.slice(0, CAP));

function toLink(r: Row): StoredLink {
  return {
    seq: Number(r.seq),
    id: String(r.id),
    timestamp: Number(r.timestamp),
    actor_type: String(r.actor_type),
    actor_id: s(r.actor_id),
    actor_name: s(r.actor_name),
    session_id: s(r.session_id),
    remote_address: s(r.remote_address),
    user_agent: s(r.user_agent),
    action: String(r.action),
    resource: String(r.resource),
    resource_id: s(r.resource_id),
    method: s(r.method),
    path: s(r.path),
    status_code: r.status_code === null || r.status_code === undefined ? null : Number(r.status_code),
    outcome: String(r.outcome),
    details: s(r.details),
    key_id: String(r.key_id),
    prev_hash: String(r.prev_hash),
    hash: String(r.hash),
  };
}

export function toRecord(link: StoredLink): AuditRecord {
  let details: unknown = null;
  try {
    details = link.details === null ? null : JSON.parse(link.details);
  } catch {
    details = link.details; // an edited row may hold anything; verification names it
  }
  return { ...link, details };
}

function where(f: AuditFilters, d: SqlDriver['dialect']): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, ...p: unknown[]) => {
    parts.push(sql);
    params.push(...p);
  };
  if (f.actor !== undefined) add(`(actor_id = ? OR actor_name ${d.ilike} ?)`, f.actor, f.actor);
  if (f.actor_type !== undefined) add('actor_type = ?', f.actor_type);
  if (f.action !== undefined) add('action = ?', f.action);
  // A resource filter matches the resource and everything below it (`governance` finds `governance/teams`).
  if (f.resource !== undefined) add("(resource = ? OR resource LIKE ? ESCAPE '\\')", f.resource, `${f.resource.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`);
  if (f.outcome !== undefined) add('outcome = ?', f.outcome);
  if (f.start_time !== undefined) add('timestamp >= ?', f.start_time);
  if (f.end_time !== undefined) add('timestamp < ?', f.end_time);
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export class AuditStore {
  readonly driver: SqlDriver;

  constructor(driver: SqlDriver) {
    this.driver = driver;
  }

  /** The last link: the newest record, else the newest checkpoint, else the genesis. */
  private async head(): Promise<{ seq: number; hash: string }> {
    const [last] = await this.driver.query('SELECT seq, hash FROM audit_logs ORDER BY seq DESC LIMIT 1');
    if (last) return { seq: Number(last.seq), hash: String(last.hash) };
    const [cp] = await this.driver.query('SELECT through_seq, hash FROM audit_checkpoints ORDER BY through_seq DESC LIMIT 1');
    return cp ? { seq: Number(cp.through_seq), hash: String(cp.hash) } : { seq: 0, hash: GENESIS };
  }

  /** Appends one record at the head of the chain; resolves with it. */
  async append(entry: AuditEntry, hmacKey: string | undefined, now = Date.now()): Promise<AuditRecord> {
    const id = randomUUID();
    const details = entry.details === undefined ? null : JSON.stringify(entry.details);
    for (let attempt = 0; attempt < APPEND_TRIES; attempt++) {
      const head = await this.head();
      const content: AuditContent = {
        seq: head.seq + 1,
        id,
        timestamp: now,
        actor_type: entry.actor.type,
        actor_id: cap(entry.actor.id),
        actor_name: cap(entry.actor.name),
        session_id: cap(entry.actor.session_id),
        remote_address: cap(entry.actor.remote_address),
        user_agent: cap(entry.actor.user_agent),
        action: entry.action,
        resource: entry.resource.slice(0, CAP),
        resource_id: cap(entry.resource_id),
        method: cap(entry.method),
        path: cap(entry.path),
        status_code: entry.status_code ?? null,
        outcome: entry.outcome,
        details,
      };
      const link: StoredLink = { ...content, key_id: keyId(hmacKey), prev_hash: head.hash, hash: linkHash(head.hash, content, hmacKey) };
      const values = COLUMNS.map((c) => link[c]);
      // Another writer took this seq first: read the new head and link to it instead.
      const inserted = await this.driver.execute(`INSERT INTO audit_logs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`, values);
      if (inserted === 1) return toRecord(link);
      await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
    }
    throw new Error(`audit log: could not append after ${APPEND_TRIES} tries (other writers kept taking the head)`);
  }

  /** Newest first; `before` is the seq the next page starts below. */
  async search(filters: AuditFilters, limit: number, before?: number): Promise<{ records: AuditRecord[]; total: number; next_cursor?: string }> {
    const w = where(filters, this.driver.dialect);
    const page = before === undefined ? w : { sql: `${w.sql ? `${w.sql} AND` : 'WHERE'} seq < ?`, params: [...w.params, before] };
    const rows = await this.driver.query(`${SELECT} ${page.sql} ORDER BY seq DESC LIMIT ?`, [...page.params, limit + 1]);
    const [count] = await this.driver.query(`SELECT count(*) AS n FROM audit_logs ${w.sql}`, w.params);
    const records = rows.slice(0, limit).map((r) => toRecord(toLink(r)));
    return { records, total: Number(count?.n ?? 0), ...(rows.length > limit && { next_cursor: String(records.at(-1)!.seq) }) };
  }

  async get(id: string): Promise<AuditRecord | undefined> {
    const [row] = await this.driver.query(`${SELECT} WHERE id = ?`, [id]);
    return row && toRecord(toLink(row));
  }

  /** Every matching record, oldest first, a page at a time (the JSON lines export). */
  async *each(filters: AuditFilters): AsyncGenerator<AuditRecord> {
    const w = where(filters, this.driver.dialect);
    let after = -1;
    for (;;) {
      const rows = await this.driver.query(`${SELECT} ${w.sql ? `${w.sql} AND` : 'WHERE'} seq > ? ORDER BY seq LIMIT ?`, [...w.params, after, PAGE]);
      for (const r of rows) yield toRecord(toLink(r));
      if (rows.length < PAGE) return;
      after = Number(rows.at(-1)!.seq);
    }
  }

  /**
   * Walks the whole chain from its first record: each seq follows the last, links to its hash, and
   * hashes to what it says. The first record links to the genesis, or to a retention checkpoint
   * that a chained `retention` record attests (a checkpoint row alone proves nothing: it is as
   * writable as the records).
   */
  async verify(hmacKey: string | undefined): Promise<VerifyResult> {
    const [first] = await this.driver.query('SELECT min(seq) AS s FROM audit_logs');
    const firstSeq = first?.s === null || first?.s === undefined ? undefined : Number(first.s);
    const checkpoints = await this.driver.query('SELECT through_seq, hash FROM audit_checkpoints ORDER BY through_seq DESC');
    const latest = checkpoints[0] ? { through_seq: Number(checkpoints[0].through_seq), hash: String(checkpoints[0].hash) } : null;
    if (firstSeq === undefined) return { valid: true, records_checked: 0, unverifiable: 0, head: latest && { seq: latest.through_seq, hash: latest.hash }, checkpoint: latest };
    let start = { seq: 0, hash: GENESIS };
    let checkpoint: { through_seq: number; hash: string } | null = null;
    if (firstSeq > 1) {
      const cp = checkpoints.find((c) => Number(c.through_seq) === firstSeq - 1);
      if (cp) {
        checkpoint = { through_seq: Number(cp.through_seq), hash: String(cp.hash) };
        start = { seq: checkpoint.through_seq, hash: checkpoint.hash };
      }
    }
    let checked = 0;
    let unverifiable = 0;
    let attested = checkpoint === null;
    let prev = start;
    // Read from the first record left; the link it must make is `start`'s.
    let cursor = firstSeq - 1;
    for (;;) {
      const rows = (await this.driver.query(`${SELECT} WHERE seq > ? ORDER BY seq LIMIT ?`, [cursor, PAGE])).map(toLink);
      const run = checkRun(rows, prev.seq, prev.hash, hmacKey);
      unverifiable += run.unverifiable;
      for (const r of rows) {
        if (run.broken && r.seq >= run.broken.seq) break;
        checked++;
        if (!attested && r.action === 'retention' && r.resource === 'audit-logs') {
          const d = toRecord(r).details as { through_seq?: unknown; hash?: unknown } | null;
          attested = d?.through_seq === checkpoint!.through_seq && d.hash === checkpoint!.hash;
        }
      }
      if (run.broken) return this.result(false, checked, unverifiable, checkpoint, run.broken);
      prev = { seq: run.lastSeq, hash: run.lastHash };
      cursor = run.lastSeq;
      if (rows.length < PAGE) break;
    }
    if (!attested) {
      const [r] = await this.driver.query(`${SELECT} WHERE seq = ?`, [firstSeq]);
      const broken: Break = {
        seq: firstSeq,
        id: String(r?.id ?? ''),
        reason: 'missing_records',
        message: `record ${firstSeq} is the first left, and no chained retention record attests that the records before it were removed by retention`,
      };
      return this.result(false, checked, unverifiable, checkpoint, broken);
    }
    return { valid: true, records_checked: checked, unverifiable, head: prev, checkpoint };
  }

  private async result(valid: boolean, checked: number, unverifiable: number, checkpoint: VerifyResult['checkpoint'], broken: Break): Promise<VerifyResult> {
    const [last] = await this.driver.query('SELECT seq, hash FROM audit_logs ORDER BY seq DESC LIMIT 1');
    return { valid, records_checked: checked, unverifiable, head: last ? { seq: Number(last.seq), hash: String(last.hash) } : null, checkpoint, first_broken: broken };
  }

  /**
   * Deletes the records older than `cutoff` (ms), from the oldest end only. The run deleted ends at
   * the newest record older than the cutoff; its hash is kept as a checkpoint, attested first by a
   * chained `retention` record (`attest` appends it), so verification still starts from a known link.
   */
  async deleteOlderThan(cutoff: number, attest: (details: { through_seq: number; hash: string; deleted: number; cutoff: string }) => Promise<unknown>): Promise<number> {
    const [edge] = await this.driver.query('SELECT max(seq) AS s FROM audit_logs WHERE timestamp < ?', [cutoff]);
    if (edge?.s === null || edge?.s === undefined) return 0;
    const through = Number(edge.s);
    const [row] = await this.driver.query('SELECT hash FROM audit_logs WHERE seq = ?', [through]);
    const [count] = await this.driver.query('SELECT count(*) AS n FROM audit_logs WHERE seq <= ?', [through]);
    if (!row) return 0;
    const deleted = Number(count?.n ?? 0);
    await attest({ through_seq: through, hash: String(row.hash), deleted, cutoff: new Date(cutoff).toISOString() });
    await this.driver.execute('INSERT INTO audit_checkpoints (through_seq, hash, deleted, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [through, String(row.hash), deleted, Date.now()]);
    return this.driver.execute('DELETE FROM audit_logs WHERE seq <= ?', [through]);
  }
}
