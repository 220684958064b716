// Management API keys issued through /api/management-keys, in the logs store's database (logs
// migration 10) so every replica sharing the store accepts them. Only a key's SHA-256 is stored (the
// value is 256 random bits, shown once). Each replica keeps the active keys in memory, read again
// every `pollMs` (default 500 ms): a revocation on any replica takes effect on all of them within a
// second, and checking a key costs no query. A key issued elsewhere and not polled yet is looked up
// once by its hash. Last use is kept in memory and written at most once a minute per key.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Row, SqlDriver } from '../logs/driver.ts';
import { log } from '../log.ts';
import type { ManagementScope } from '../schema/management.ts';

export interface ManagementKey {
  id: string;
  name: string;
  description: string | undefined;
  /** The value's first characters, to recognise it (never enough to use it). */
  prefix: string;
  scopes: ManagementScope[];
  created_at: number;
  created_by: string | undefined;
  expires_at: number | undefined;
  revoked_at: number | undefined;
  revoked_by: string | undefined;
  last_used_at: number | undefined;
}

/** Issued values start with this, so a leaked one is recognisable (secret scanners) and never taken for a session token. */
export const KEY_PREFIX = 'sbk_';
const VALUE_LENGTH = KEY_PREFIX.length + 43; // 32 bytes as base64url
const SHOWN = KEY_PREFIX.length + 6;
const LAST_USE_EVERY_MS = 60_000;

const hashOf = (value: string): string => createHash('sha256').update(value).digest('hex');
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));
const optStr = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));

function toKey(r: Row): ManagementKey & { hash: string } {
  return {
    id: String(r.id),
    name: String(r.name),
    description: optStr(r.description),
    prefix: String(r.prefix),
    hash: String(r.hash),
    scopes: JSON.parse(String(r.scopes)) as ManagementScope[],
    created_at: Number(r.created_at),
    created_by: optStr(r.created_by),
    expires_at: optNum(r.expires_at),
    revoked_at: optNum(r.revoked_at),
    revoked_by: optStr(r.revoked_by),
    last_used_at: optNum(r.last_used_at),
  };
}

const COLUMNS = 'id, name, description, prefix, hash, scopes, created_at, created_by, expires_at, revoked_at, revoked_by, last_used_at';

export class ManagementKeys {
  readonly #driver: SqlDriver;
  /** Active (not revoked) keys by the hex SHA-256 of their value. */
  #active = new Map<string, ManagementKey & { hash: string }>();
  /** Uses not written yet: id → time. */
  readonly #used = new Map<string, number>();
  readonly #written = new Map<string, number>();
  readonly #timers: NodeJS.Timeout[] = [];
  #polling: Promise<void> | undefined;
  #pollFailing = false;

  constructor(driver: SqlDriver, opts: { pollMs?: number } = {}) {
    this.#driver = driver;
    const poll = setInterval(() => void this.poll(), opts.pollMs ?? 500);
    const flush = setInterval(() => void this.flushLastUse(), LAST_USE_EVERY_MS);
    poll.unref();
    flush.unref();
    this.#timers.push(poll, flush);
    void this.poll();
  }

  /** Reads the active keys again (revocations and issues on any replica). */
  poll(): Promise<void> {
    this.#polling ??= this.#driver
      .query(`SELECT ${COLUMNS} FROM management_keys WHERE revoked_at IS NULL`)
      .then((rows) => {
        this.#active = new Map(rows.map((r) => toKey(r)).map((k): [string, ManagementKey & { hash: string }] => [k.hash, k]));
        if (this.#pollFailing) log.info('management keys: the store answers again');
        this.#pollFailing = false;
      })
      .catch((err: unknown) => {
        // The last list read stays in force: a revocation made meanwhile applies once it answers.
        if (!this.#pollFailing) log.warn('management keys: cannot read the store; keys are checked against the last list read', { error: (err as Error).message });
        this.#pollFailing = true;
      })
      .finally(() => (this.#polling = undefined));
    return this.#polling;
  }

  async issue(input: { name: string; description?: string; scopes: ManagementScope[]; expires_at?: number }, createdBy: string | undefined, now = Date.now()): Promise<{ key: ManagementKey; value: string }> {
    const value = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = `mk-${randomUUID()}`;
    const row = { id, name: input.name, description: input.description ?? null, prefix: value.slice(0, SHOWN), hash: hashOf(value), scopes: JSON.stringify(input.scopes), created_at: now, created_by: createdBy ?? null, expires_at: input.expires_at ?? null, updated_at: now };
    await this.#driver.execute(
      'INSERT INTO management_keys (id, name, description, prefix, hash, scopes, created_at, created_by, expires_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [row.id, row.name, row.description, row.prefix, row.hash, row.scopes, row.created_at, row.created_by, row.expires_at, row.updated_at],
    );
    const key = toKey({ ...row, revoked_at: null, revoked_by: null, last_used_at: null });
    this.#active.set(key.hash, key);
    return { key: withoutHash(key), value };
  }

  async list(): Promise<ManagementKey[]> {
    const rows = await this.#driver.query(`SELECT ${COLUMNS} FROM management_keys ORDER BY created_at DESC, id`);
    return rows.map((r) => this.withLocalUse(withoutHash(toKey(r))));
  }

  async get(id: string): Promise<ManagementKey | undefined> {
    const [row] = await this.#driver.query(`SELECT ${COLUMNS} FROM management_keys WHERE id = ?`, [id]);
    return row && this.withLocalUse(withoutHash(toKey(row)));
  }

  /** Revokes a key on every replica (this one at once, the others at their next poll); undefined when there is no such key. */
  async revoke(id: string, by: string | undefined, now = Date.now()): Promise<ManagementKey | undefined> {
    await this.#driver.execute('UPDATE management_keys SET revoked_at = ?, revoked_by = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL', [now, by ?? null, now, id]);
    for (const [hash, k] of this.#active) if (k.id === id) this.#active.delete(hash);
    return this.get(id);
  }

  /** The active, unexpired key with this value, from memory; undefined when none (yet). */
  lookup(value: string, now = Date.now()): ManagementKey | undefined {
    if (!looksIssued(value)) return undefined;
    const digest = hashOf(value);
    const key = this.#active.get(digest);
    // The map found it by the digest; the compare is constant-time all the same.
    if (!key || !timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(digest, 'hex'))) return undefined;
    if (key.expires_at !== undefined && key.expires_at <= now) return undefined;
    this.#used.set(key.id, now);
    return key;
  }

  /** `lookup`, then the store once for a key issued on another replica since the last poll. */
  async lookupFresh(value: string, now = Date.now()): Promise<ManagementKey | undefined> {
    const known = this.lookup(value, now);
    if (known || !looksIssued(value)) return known;
    const [row] = await this.#driver.query(`SELECT ${COLUMNS} FROM management_keys WHERE hash = ? AND revoked_at IS NULL`, [hashOf(value)]);
    if (!row) return undefined;
    const key = toKey(row);
    this.#active.set(key.hash, key);
    return this.lookup(value, now);
  }

  private withLocalUse(k: ManagementKey): ManagementKey {
    const local = this.#used.get(k.id);
    return local !== undefined && (k.last_used_at === undefined || local > k.last_used_at) ? { ...k, last_used_at: local } : k;
  }

  /** Writes each key's last use, at most once a minute per key (an update never goes back in time). */
  async flushLastUse(): Promise<void> {
    const due = [...this.#used].filter(([id, at]) => at !== this.#written.get(id));
    for (const [id, at] of due) {
      try {
        await this.#driver.execute('UPDATE management_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [at, id, at]);
        this.#written.set(id, at);
      } catch (err) {
        log.warn('management keys: last use not written', { error: (err as Error).message });
        return;
      }
    }
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    await this.#polling;
    await this.flushLastUse();
  }
}

/** Shaped like an issued value: others (session tokens, config.json keys) never reach the store. */
export const looksIssued = (value: string): boolean => value.length === VALUE_LENGTH && value.startsWith(KEY_PREFIX);

function withoutHash(k: ManagementKey & { hash?: string }): ManagementKey {
  const { hash: _hash, ...rest } = k;
  return rest;
}
