// The audit record's shape, types only: the chain hashes it (chain.ts), the store keeps it
// (store.ts), and /api answers a view derived from it (api/answers.ts AuditRecordView), so the
// dashboard's bundle reaches these types without any server code.

/** What a record says, without its place in the chain. */
export interface AuditContent {
  seq: number;
  id: string;
  timestamp: number;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  session_id: string | null;
  remote_address: string | null;
  user_agent: string | null;
  action: string;
  resource: string;
  resource_id: string | null;
  method: string | null;
  path: string | null;
  status_code: number | null;
  outcome: string;
  /** The change itself, secrets masked, as stored (JSON text). */
  details: string | null;
}

/** A stored record: its content (details parsed) and its place in the chain. */
export interface AuditRecord extends Omit<AuditContent, 'details'> {
  details: unknown;
  key_id: string;
  prev_hash: string;
  hash: string;
}
