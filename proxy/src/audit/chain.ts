// The audit log's hash chain, as pure functions: each record's hash covers the previous record's
// hash and its own canonical content, so editing or removing a record breaks every link after it.
// With `audit_logs.hmac_key` the hash is an HMAC under that key: whoever can write the database but
// not read the key cannot forge a chain that verifies.
import { createHash, createHmac } from 'node:crypto';
import type { AuditContent } from './record.ts';

export type { AuditContent } from './record.ts';

/** The hash the first record links to (nothing before it). */
export const GENESIS = '0'.repeat(64);

export const CONTENT_FIELDS: readonly (keyof AuditContent)[] = [
  'seq', 'id', 'timestamp', 'actor_type', 'actor_id', 'actor_name', 'session_id', 'remote_address', 'user_agent',
  'action', 'resource', 'resource_id', 'method', 'path', 'status_code', 'outcome', 'details',
];

/** One line of JSON with the fields in a fixed order: the same bytes wherever it is computed. */
export function canonical(c: AuditContent): string {
  return JSON.stringify(CONTENT_FIELDS.map((f) => [f, c[f] ?? null]));
}

/** The chain's key: `sha256` without a key, else `hmac:` and the key's fingerprint (never the key). */
export function keyId(hmacKey: string | undefined): string {
  if (hmacKey === undefined) return 'sha256';
  return `hmac:${createHash('sha256').update(`skybridge-audit-key:${hmacKey}`).digest('hex').slice(0, 16)}`;
}

export function linkHash(prev: string, c: AuditContent, hmacKey: string | undefined): string {
  const text = `${prev}\n${canonical(c)}`;
  return (hmacKey === undefined ? createHash('sha256') : createHmac('sha256', hmacKey)).update(text).digest('hex');
}

export interface StoredLink extends AuditContent {
  key_id: string;
  prev_hash: string;
  hash: string;
}

/** Why a chain is broken at one record. */
export interface Break {
  seq: number;
  id: string;
  reason: 'missing_records' | 'prev_hash_mismatch' | 'hash_mismatch';
  message: string;
}

/**
 * Checks one run of consecutive records against the link before them (`prevSeq`, `prevHash`).
 * Records under another key than the current one are linked but their own hash is not recomputed
 * (`unverifiable` counts them): it needs the key they were written with.
 */
export function checkRun(records: readonly StoredLink[], prevSeq: number, prevHash: string, hmacKey: string | undefined): { broken?: Break; unverifiable: number; lastSeq: number; lastHash: string } {
  const current = keyId(hmacKey);
  let unverifiable = 0;
  let seq = prevSeq;
  let hash = prevHash;
  for (const r of records) {
    if (r.seq !== seq + 1) {
      return { broken: { seq: r.seq, id: r.id, reason: 'missing_records', message: `record ${r.seq} follows record ${seq}: ${r.seq - seq - 1 > 0 ? `${r.seq - seq - 1} record(s) before it were removed` : 'its sequence number was changed'}` }, unverifiable, lastSeq: seq, lastHash: hash };
    }
    if (r.prev_hash !== hash) {
      return { broken: { seq: r.seq, id: r.id, reason: 'prev_hash_mismatch', message: `record ${r.seq} does not link to the record before it (a record before it was edited or replaced)` }, unverifiable, lastSeq: seq, lastHash: hash };
    }
    if (r.key_id === current) {
      if (linkHash(r.prev_hash, r, hmacKey) !== r.hash) {
        return { broken: { seq: r.seq, id: r.id, reason: 'hash_mismatch', message: `record ${r.seq}'s content does not match its hash: it was edited after it was written` }, unverifiable, lastSeq: seq, lastHash: hash };
      }
    } else unverifiable++;
    seq = r.seq;
    hash = r.hash;
  }
  return { unverifiable, lastSeq: seq, lastHash: hash };
}
