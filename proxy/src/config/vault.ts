// The vault's values as the configuration check reads them: every KV v2 secret a `vault.` reference
// names, read at start (before the first check) and again every TTL in the background, so no request
// ever waits for the vault. A changed value is handed to `onChange`, which re-checks the document
// and swaps the snapshot like a config reload. When the vault cannot answer, the last good values
// stay and the outage is reported once (log, status, metric hooks). One per process: the config
// check runs in many places (file reload, /api writes, the store's sync) and all read this one.
import { vaultKey, type VaultLookup } from '../schema/env-ref.ts';
import { vaultReferences, type VaultReference } from './vault-refs.ts';

export { vaultReferences };
import { VaultConfigSchema } from '../schema/gateway.ts';
import { validator, type FieldError } from '../schema/validate.ts';
import { VaultClient, VaultError, vaultSettings, type VaultSettings } from './vault-client.ts';
import { setVaultLookup } from './check.ts';
import { log } from '../log.ts';

/** What /api/vault/status shows: never a value. */
export interface VaultStatus {
  configured: boolean;
  /** `up`: the last refresh read every secret; `down`: the vault could not answer (last good values served). */
  state: 'up' | 'down' | 'off';
  address?: string;
  auth_method?: string;
  mount?: string;
  ttl_seconds?: number;
  /** The paths read (below the mount); a path the vault refused says why. */
  secrets: { path: string; ok: boolean; error?: string; read_at?: string }[];
  last_refresh_at?: string;
  last_success_at?: string;
  last_error?: string;
  refresh_failures: number;
}

interface Entry {
  data?: Record<string, unknown>;
  error?: string;
  readAt?: number;
}

export interface VaultHooks {
  /** Some value changed: re-check the document and swap (awaited before the next refresh). */
  onChange?: () => Promise<unknown>;
  /** After each background refresh: whether the vault answered. */
  onRefresh?: (ok: boolean) => void;
}

const validateSection = validator(VaultConfigSchema);

export class VaultSecrets {
  #client: VaultClient | undefined;
  #entries = new Map<string, Entry>();
  #timer: NodeJS.Timeout | undefined;
  #hooks: VaultHooks = {};
  #down = false;
  #lastRefresh: number | undefined;
  #lastSuccess: number | undefined;
  #lastError: string | undefined;
  #failures = 0;
  #settingsKey = '';

  /** Resolves a reference from what was read; the config check calls it. */
  readonly lookup: VaultLookup = (ref) => {
    if (!this.#client) return { error: `vault reference ${vaultKey(ref)}: no vault is configured (set the vault section of config.json, or VAULT_ADDR and VAULT_TOKEN)` };
    const e = this.#entries.get(ref.path);
    if (!e) return { error: `vault reference ${vaultKey(ref)} was not read yet` };
    if (!e.data) return { error: `vault reference ${vaultKey(ref)}: ${e.error ?? 'not readable'}` };
    const v = e.data[ref.field];
    if (v === undefined || v === null) return { error: `vault reference ${vaultKey(ref)}: the secret at ${this.#client.settings.mount}/${ref.path} has no field '${ref.field}'` };
    return { value: typeof v === 'string' ? v : JSON.stringify(v) };
  };

  /**
   * Configures the client from the document's `vault` section (or VAULT_ADDR/VAULT_TOKEN) and reads
   * every path its references name that is not read yet. Errors in the section name its fields;
   * a path that cannot be read is left for the config check to report against its field.
   */
  async prime(document: unknown, env: NodeJS.ProcessEnv = process.env): Promise<FieldError[]> {
    return this.primeListed((document as { vault?: unknown } | null)?.vault, () => vaultReferences(document), env);
  }

  /** prime() with the document's references listed elsewhere (the reload's reader thread lists them off the event loop). */
  async primeListed(section: unknown, listRefs: () => VaultReference[], env: NodeJS.ProcessEnv = process.env): Promise<FieldError[]> {
    if (section !== undefined && Array.isArray(validateSection(section))) return []; // the config check reports the schema's errors
    const refs = listRefs();
    // VAULT_ADDR alone (set for other tools) configures nothing while no reference needs the vault.
    const settings = section === undefined && refs.length === 0 ? undefined : vaultSettings(section as Parameters<typeof vaultSettings>[0], env);
    if (settings && 'errors' in settings) return settings.errors;
    this.#configure(settings);
    if (!this.#client) return [];
    const paths = new Set<string>();
    for (const { ref } of refs) if ('path' in ref && !this.#entries.get(ref.path)?.data) paths.add(ref.path);
    // Failures are recorded per path: the config check reports each against the field naming it.
    await Promise.allSettled([...paths].map((p) => this.#read(p)));
    return [];
  }

  #configure(settings: VaultSettings | undefined): void {
    // The same settings keep the client (and its login) and what was read.
    const key = JSON.stringify(settings ?? null);
    if (key === this.#settingsKey) return;
    this.#settingsKey = key;
    this.#client = settings && new VaultClient(settings);
    this.#entries.clear();
    setVaultLookup(this.#client && this.lookup);
  }

  async #read(path: string): Promise<boolean> {
    const client = this.#client!;
    const previous = this.#entries.get(path);
    try {
      const data = await client.read(path);
      this.#entries.set(path, { data, readAt: Date.now() });
      return JSON.stringify(previous?.data) !== JSON.stringify(data);
    } catch (err) {
      const message = (err as Error).message;
      // An outage keeps the last good data; a refusal (deleted secret, revoked policy) too, reported.
      this.#entries.set(path, { ...(previous?.data && { data: previous.data, readAt: previous.readAt }), error: message });
      throw err;
    }
  }

  /** Reads every known path again; true when a value changed. Failures are recorded, never thrown. */
  async refresh(): Promise<{ changed: boolean; ok: boolean }> {
    if (!this.#client) return { changed: false, ok: true };
    this.#lastRefresh = Date.now();
    const results = await Promise.allSettled([...this.#entries.keys()].map((p) => this.#read(p)));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as Error);
    const changed = results.some((r) => r.status === 'fulfilled' && r.value);
    if (failed.length === 0) {
      if (this.#down) log.info('vault: reachable again; secrets are read from it', { address: this.#client.settings.address });
      this.#down = false;
      this.#lastError = undefined;
      this.#lastSuccess = Date.now();
      return { changed, ok: true };
    }
    this.#failures++;
    const first = failed[0];
    this.#lastError = first.message;
    // Once per outage: the next refreshes fail the same way until it ends.
    if (!this.#down) {
      const unavailable = first instanceof VaultError && first.unavailable;
      log.warn(unavailable ? 'vault: unreachable; serving the last good values until it answers again' : 'vault: a secret could not be read; serving its last good value', { address: this.#client.settings.address, failed: failed.length, error: first.message });
    }
    this.#down = true;
    return { changed, ok: false };
  }

  /** Refreshes every TTL until stop(); a change calls onChange. */
  start(hooks: VaultHooks): void {
    this.stop();
    this.#hooks = hooks;
    if (!this.#client) return;
    const ttl = this.#client.settings.ttlMs;
    this.#lastSuccess ??= Date.now();
    const tick = async () => {
      const { changed, ok } = await this.refresh();
      this.#hooks.onRefresh?.(ok);
      if (changed) await this.#hooks.onChange?.().catch((err: unknown) => log.error('vault: a rotated value could not be applied; keeping the served configuration', { error: (err as Error).message }));
      if (this.#timer) this.#timer = setTimeout(() => void tick(), ttl).unref();
    };
    this.#timer = setTimeout(() => void tick(), ttl).unref();
    hooks.onRefresh?.(!this.#down);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  status(): VaultStatus {
    const c = this.#client;
    const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
    if (!c) return { configured: false, state: 'off', secrets: [], refresh_failures: 0 };
    return {
      configured: true,
      state: this.#down ? 'down' : 'up',
      address: c.settings.address,
      auth_method: c.settings.login.method,
      mount: c.settings.mount,
      ttl_seconds: c.settings.ttlMs / 1000,
      secrets: [...this.#entries].map(([path, e]) => ({ path, ok: e.error === undefined, ...(e.error !== undefined && { error: e.error }), ...(e.readAt !== undefined && { read_at: iso(e.readAt) }) })),
      ...(this.#lastRefresh !== undefined && { last_refresh_at: iso(this.#lastRefresh) }),
      ...(this.#lastSuccess !== undefined && { last_success_at: iso(this.#lastSuccess) }),
      ...(this.#lastError !== undefined && { last_error: this.#lastError }),
      refresh_failures: this.#failures,
    };
  }

  /** Forgets the client and every value (a gateway closing; tests starting another). */
  reset(): void {
    this.stop();
    this.#configure(undefined);
    this.#down = false;
    this.#failures = 0;
    this.#lastError = this.#lastRefresh = this.#lastSuccess = undefined;
  }
}

/** The process's vault values. */
export const vaultSecrets = new VaultSecrets();
