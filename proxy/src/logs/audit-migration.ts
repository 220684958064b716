// The audit log's tables (audit/store.ts) and the management API keys (audit/keys.ts), in the
// request-log store's database so every replica sharing the store writes one chain and sees every
// key and revocation.
import type { Migration } from './driver.ts';

export const AUDIT_MIGRATION: Migration = {
  version: 10,
  description: 'audit log (a hash chain: seq is its order, the primary key makes two writers take turns), retention checkpoints, management API keys',
  statements: (d) => [
    // `seq` is assigned by the writer as the last seq + 1; a second replica writing the same seq
    // loses the insert and retries on the new head, so the chain never forks.
    `CREATE TABLE audit_logs (
      seq BIGINT PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      timestamp BIGINT NOT NULL,
      actor_type TEXT NOT NULL,
      actor_id TEXT,
      actor_name TEXT,
      session_id TEXT,
      remote_address TEXT,
      user_agent TEXT,
      action TEXT NOT NULL,
      resource TEXT NOT NULL,
      resource_id TEXT,
      method TEXT,
      path TEXT,
      status_code INTEGER,
      outcome TEXT NOT NULL,
      details TEXT,
      key_id TEXT NOT NULL,
      prev_hash TEXT NOT NULL,
      hash TEXT NOT NULL
    )`,
    // Append-only in the database too: an UPDATE is refused (retention's DELETE from the head is the
    // one removal). Whoever owns the database can drop the trigger; verification still shows the edit.
    ...(d.name === 'postgres'
      ? [
          "CREATE FUNCTION audit_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit records are append-only'; END $$",
          'CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs FOR EACH ROW EXECUTE FUNCTION audit_logs_append_only()',
        ]
      : ["CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END"]),
    'CREATE INDEX audit_logs_time ON audit_logs (timestamp, seq)',
    'CREATE INDEX audit_logs_actor ON audit_logs (actor_id, timestamp)',
    'CREATE INDEX audit_logs_action ON audit_logs (action, timestamp)',
    'CREATE INDEX audit_logs_resource ON audit_logs (resource, timestamp)',
    // Retention deletes the oldest records; the checkpoint keeps the hash they ended on, so the
    // first record left still links to something known.
    `CREATE TABLE audit_checkpoints (
      through_seq BIGINT PRIMARY KEY,
      hash TEXT NOT NULL,
      deleted BIGINT NOT NULL,
      created_at BIGINT NOT NULL
    )`,
    `CREATE TABLE management_keys (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      description TEXT,
      prefix TEXT NOT NULL,
      hash TEXT NOT NULL UNIQUE,
      scopes TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      created_by TEXT,
      expires_at BIGINT,
      revoked_at BIGINT,
      revoked_by TEXT,
      last_used_at BIGINT,
      updated_at BIGINT NOT NULL
    )`,
  ],
};
