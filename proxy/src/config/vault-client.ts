// A HashiCorp Vault API client, as much of it as references need: read a KV v2 secret, and log in
// (token, AppRole, Kubernetes), logging in again when the token's lease runs out or a read is denied.
// Plain fetch: the vault's address is the deployment's (config.json or VAULT_ADDR), not a caller's.
// Errors name the path and the status, never a token or a value.
import { readFile } from 'node:fs/promises';
import type { VaultConfig } from '../schema/gateway.ts';
import { readEnvRef } from '../schema/env-ref.ts';
import type { FieldError } from '../schema/validate.ts';

export const DEFAULT_VAULT_TTL_SECONDS = 60;
export const DEFAULT_VAULT_TIMEOUT_MS = 5000;
export const DEFAULT_KUBERNETES_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export type VaultLogin =
  | { method: 'token'; token: string }
  | { method: 'approle'; mount: string; roleId: string; secretId: string }
  | { method: 'kubernetes'; mount: string; role: string; tokenPath: string };

/** The `vault` section with its env references read and its defaults filled in. */
export interface VaultSettings {
  address: string;
  login: VaultLogin;
  mount: string;
  namespace?: string;
  ttlMs: number;
  timeoutMs: number;
}

/** The settings each auth method takes, and those it needs. */
const METHOD_FIELDS: Record<'token' | 'approle' | 'kubernetes', { all: string[]; required: string[] }> = {
  token: { all: ['token'], required: ['token'] },
  approle: { all: ['role_id', 'secret_id', 'mount'], required: ['role_id', 'secret_id'] },
  kubernetes: { all: ['role', 'token_path', 'mount'], required: ['role'] },
};

/**
 * The settings from the `vault` section, else from VAULT_ADDR/VAULT_TOKEN; undefined when neither
 * names a server. Errors name the field (or variable), never a value.
 */
export function vaultSettings(section: VaultConfig | undefined, env: NodeJS.ProcessEnv): VaultSettings | undefined | { errors: FieldError[] } {
  const address = section?.address ?? env.VAULT_ADDR;
  if (!section && !address) return undefined;
  const errors: FieldError[] = [];
  if (!address) errors.push({ path: 'vault.address', message: 'is required (or set VAULT_ADDR)' });
  const read = (ref: string, path: string): string => {
    if (ref === '') return '';
    const r = readEnvRef(ref, env);
    if ('missing' in r) errors.push({ path, message: `environment variable ${r.missing} is not set` });
    return 'value' in r ? r.value : '';
  };
  const auth = section?.auth;
  let login: VaultLogin;
  if (!auth) {
    const token = env.VAULT_TOKEN;
    if (!token) errors.push({ path: 'vault.auth', message: 'is required (or set VAULT_TOKEN for token auth)' });
    login = { method: 'token', token: token ?? '' };
  } else {
    const fields = METHOD_FIELDS[auth.method];
    for (const f of Object.keys(auth)) {
      if (f !== 'method' && !fields.all.includes(f)) errors.push({ path: `vault.auth.${f}`, message: `is not a setting of ${auth.method} auth (it takes ${fields.all.join(', ')})` });
    }
    for (const f of fields.required) if ((auth as Record<string, unknown>)[f] === undefined) errors.push({ path: `vault.auth.${f}`, message: `is required for ${auth.method} auth` });
    if (auth.method === 'token') login = { method: 'token', token: read(auth.token ?? '', 'vault.auth.token') };
    else if (auth.method === 'approle') login = { method: 'approle', mount: auth.mount ?? 'approle', roleId: read(auth.role_id ?? '', 'vault.auth.role_id'), secretId: read(auth.secret_id ?? '', 'vault.auth.secret_id') };
    else login = { method: 'kubernetes', mount: auth.mount ?? 'kubernetes', role: auth.role ?? '', tokenPath: auth.token_path ?? DEFAULT_KUBERNETES_TOKEN_PATH };
  }
  if (errors.length) return { errors };
  return {
    address: address!.replace(/\/+$/, ''),
    login,
    mount: section?.mount ?? 'secret',
    ...(section?.namespace !== undefined && { namespace: section.namespace }),
    ttlMs: (section?.ttl_seconds ?? DEFAULT_VAULT_TTL_SECONDS) * 1000,
    timeoutMs: section?.timeout_ms ?? DEFAULT_VAULT_TIMEOUT_MS,
  };
}

/** A vault call that failed. `unavailable`: the server could not answer (down, 5xx, timeout); otherwise it refused. */
export class VaultError extends Error {
  readonly unavailable: boolean;
  constructor(message: string, unavailable: boolean) {
    super(message);
    this.unavailable = unavailable;
  }
}

/** The login request of a method other than token: where it is posted and its body. */
export async function loginRequest(login: Exclude<VaultLogin, { method: 'token' }>, readToken: (path: string) => Promise<string> = (p) => readFile(p, 'utf8')): Promise<{ path: string; body: Record<string, string> }> {
  if (login.method === 'approle') return { path: `/v1/auth/${login.mount}/login`, body: { role_id: login.roleId, secret_id: login.secretId } };
  let jwt: string;
  try {
    jwt = (await readToken(login.tokenPath)).trim();
  } catch (err) {
    throw new VaultError(`kubernetes login: cannot read the service account token at ${login.tokenPath} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, false);
  }
  return { path: `/v1/auth/${login.mount}/login`, body: { role: login.role, jwt } };
}

/** Logs in again this long before a lease ends, so no read meets an expired token. */
const LEASE_MARGIN = 0.2;

export class VaultClient {
  readonly settings: VaultSettings;
  #token: string | undefined;
  #expiresAt = Infinity;

  constructor(settings: VaultSettings) {
    this.settings = settings;
    if (settings.login.method === 'token') this.#token = settings.login.token;
  }

  /** The data of the KV v2 secret at `path` (its latest version). */
  async read(path: string): Promise<Record<string, unknown>> {
    const where = `${this.settings.mount}/${path}`;
    const once = async () => this.#call('GET', `/v1/${this.settings.mount}/data/${path}`, await this.#ensureToken(), undefined, where);
    let res = await once();
    // A denied read with a login token: the token may have been revoked or expired early.
    if (res.status === 403 && this.settings.login.method !== 'token') {
      this.#token = undefined;
      res = await once();
    }
    if (res.status === 404) {
      // OpenBao and Vault answer an unknown mount with a 404 saying no route handles the path.
      const errors = (res.body as { errors?: unknown[] } | undefined)?.errors ?? [];
      const noMount = errors.some((e) => typeof e === 'string' && e.includes('no handler for route'));
      throw new VaultError(noMount ? `no KV v2 mount '${this.settings.mount}' on the vault (reading ${where})` : `no secret at ${where}`, false);
    }
    if (res.status === 403) throw new VaultError(`reading ${where}: permission denied`, false);
    if (res.status >= 500) throw new VaultError(`reading ${where}: the vault answered ${res.status}`, true);
    if (res.status !== 200) throw new VaultError(`reading ${where}: the vault answered ${res.status}`, false);
    const data = (res.body as { data?: { data?: unknown } } | undefined)?.data?.data;
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new VaultError(`${where} is not a KV v2 secret (no data.data in the answer; is '${this.settings.mount}' a KV v2 mount?)`, false);
    return data as Record<string, unknown>;
  }

  async #ensureToken(): Promise<string> {
    if (this.#token !== undefined && Date.now() < this.#expiresAt) return this.#token;
    const login = this.settings.login;
    if (login.method === 'token') return login.token;
    const { path, body } = await loginRequest(login);
    const res = await this.#call('POST', path, undefined, body, `${login.method} login`);
    if (res.status >= 500) throw new VaultError(`${login.method} login: the vault answered ${res.status}`, true);
    const auth = (res.body as { auth?: { client_token?: string; lease_duration?: number } } | undefined)?.auth;
    if (res.status !== 200 || !auth?.client_token) throw new VaultError(`${login.method} login at ${path} refused (${res.status})`, false);
    this.#token = auth.client_token;
    const lease = auth.lease_duration ?? 0;
    this.#expiresAt = lease > 0 ? Date.now() + lease * 1000 * (1 - LEASE_MARGIN) : Infinity;
    return this.#token;
  }

  async #call(method: string, path: string, token: string | undefined, body: unknown, what: string): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token !== undefined) headers['x-vault-token'] = token;
    if (this.settings.namespace !== undefined) headers['x-vault-namespace'] = this.settings.namespace;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.settings.address}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }), signal: AbortSignal.timeout(this.settings.timeoutMs) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const why = e.name === 'TimeoutError' ? `no answer within ${this.settings.timeoutMs} ms` : (e.cause?.code ?? e.message);
      throw new VaultError(`${what}: the vault at ${this.settings.address} is unreachable (${why})`, true);
    }
    const text = await res.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }
}
