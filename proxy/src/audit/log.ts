// What the gateway records into the audit log: one queue per process, so this replica's records are
// appended one at a time in the order they happened (appends race only with other replicas, which
// the store resolves), off the request path: an /api answer never waits on the audit write. The
// settings (`audit_logs` in config.json) are read at each record, so a reload applies at once.
import { log } from '../log.ts';
import type { AuditLogsConfig } from '../schema/gateway.ts';
import { AuditStore, type AuditEntry, type AuditRecord } from './store.ts';
import type { SqlDriver } from '../logs/driver.ts';

export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
const DAY_MS = 86_400_000;

export interface AuditLogOptions {
  /** The live `audit_logs` section (references resolved). */
  settings: () => AuditLogsConfig | undefined;
  /** Retention sweep interval (default hourly; first sweep 10 s after start). */
  intervalMs?: number;
  firstDelayMs?: number;
  now?: () => number;
  /** Called for each record that could not be written (a metric counts them). */
  onFailure?: (entry: AuditEntry, err: Error) => void;
}

export class AuditLog {
  readonly store: AuditStore;
  #tail: Promise<unknown> = Promise.resolve();
  #failures = 0;
  readonly #opts: AuditLogOptions;
  readonly #timers: NodeJS.Timeout[] = [];
  #sweeping: Promise<number> | undefined;

  constructor(driver: SqlDriver, opts: AuditLogOptions) {
    this.store = new AuditStore(driver);
    this.#opts = opts;
    const first = setTimeout(() => void this.sweep(), opts.firstDelayMs ?? 10_000);
    const every = setInterval(() => void this.sweep(), opts.intervalMs ?? 3600_000);
    first.unref();
    every.unref();
    this.#timers.push(first, every);
  }

  get enabled(): boolean {
    return this.#opts.settings()?.disabled !== true;
  }

  get hmacKey(): string | undefined {
    return this.#opts.settings()?.hmac_key;
  }

  /** Records that could not be written since start (the store was down past its deadline). */
  get failures(): number {
    return this.#failures;
  }

  /** Queues one record; resolves once it is written (or could not be: it is then counted and logged). */
  record(entry: AuditEntry): Promise<AuditRecord | undefined> {
    if (!this.enabled) return Promise.resolve(undefined);
    const now = (this.#opts.now ?? Date.now)();
    const written = this.#tail.then(() => this.store.append(entry, this.hmacKey, now)).catch((err: unknown) => {
      this.#failures++;
      const e = err instanceof Error ? err : new Error(String(err));
      // Names what was not recorded, never its details (they may hold masked secrets' shapes).
      log.error('audit log: a record could not be written', { action: entry.action, resource: entry.resource, error: e.message });
      this.#opts.onFailure?.(entry, e);
      return undefined;
    });
    this.#tail = written;
    return written;
  }

  /** Resolves once every record queued so far is written. */
  flush(): Promise<void> {
    return this.#tail.then(() => undefined);
  }

  /** Deletes records past retention (0 days: none), attested in the chain; resolves with how many. */
  sweep(): Promise<number> {
    const days = this.#opts.settings()?.retention_days ?? DEFAULT_AUDIT_RETENTION_DAYS;
    if (days === 0) return Promise.resolve(0);
    const cutoff = (this.#opts.now ?? Date.now)() - days * DAY_MS;
    this.#sweeping ??= this.store
      .deleteOlderThan(cutoff, async (details) => {
        const r = await this.store.append({ actor: { type: 'system', name: 'retention' }, action: 'retention', resource: 'audit-logs', outcome: 'success', details: { ...details, retention_days: days } }, this.hmacKey);
        return r;
      })
      .then((n) => {
        if (n > 0) log.info('audit records past retention deleted', { deleted: n, retention_days: days });
        return n;
      })
      .catch((err: unknown) => {
        log.warn('audit log retention sweep failed', { error: (err as Error)?.message ?? String(err) });
        return 0;
      })
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    await this.flush();
    await this.#sweeping;
  }
}
