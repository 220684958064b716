// References: a configuration value that names where a secret lives instead of holding it.
//   env.VAR             an environment variable of the gateway
//   vault.<path>#<field> a field of a KV v2 secret in a HashiCorp Vault API server (config/vault.ts)
// This file is the one grammar both are read by: the config check, the /api masks and write rules,
// and the Kubernetes rendering.

/** A vault reference: the secret's path below the KV v2 mount, and the field of its data. */
export interface VaultRef {
  path: string;
  field: string;
}

/** An `env.VAR` reference, as a JSON Schema pattern fragment (no anchors). */
export const ENV_REF_SOURCE = 'env\\.[A-Za-z_][A-Za-z0-9_]*';
/** A `vault.<path>#<field>` reference, likewise: path segments and a field of what a KV v2 path and a JSON key reasonably hold, nothing a URL would need escaped. */
export const VAULT_REF_SOURCE = 'vault\\.[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*#[A-Za-z0-9_.-]+';
const VAULT_REF = new RegExp(`^${VAULT_REF_SOURCE}$`);

export const isEnvRef = (value: string): boolean => value.startsWith('env.');
export const isVaultRef = (value: string): boolean => value.startsWith('vault.');
/** Whether the string is a reference of either kind (shown as it is, never masked). */
export const isReference = (value: string): boolean => isEnvRef(value) || isVaultRef(value);

/** The vault reference in `value`, or why it is not one (`value` starts with `vault.`). */
export function parseVaultRef(value: string): VaultRef | { error: string } {
  if (VAULT_REF.test(value)) {
    const hash = value.indexOf('#');
    return { path: value.slice('vault.'.length, hash), field: value.slice(hash + 1) };
  }
  if (!value.includes('#')) return { error: 'a vault reference is vault.<path>#<field>: the #<field> is missing' };
  return { error: 'a vault reference is vault.<path>#<field>, with path segments and field of letters, digits, _ . - (segments separated by /)' };
}

/** The cache key of a vault reference: `path#field`. */
export const vaultKey = (ref: VaultRef): string => `${ref.path}#${ref.field}`;

/** The value itself, or the variable's value; `missing` names a variable that is unset or empty. */
export function readEnvRef(value: string, env: NodeJS.ProcessEnv): { value: string } | { missing: string } {
  if (!isEnvRef(value)) return { value };
  const name = value.slice(4);
  const resolved = env[name];
  return resolved === undefined || resolved === '' ? { missing: name } : { value: resolved };
}

/** What a vault reference resolved to: its value, or why there is none (never the value). */
export type VaultLookup = (ref: VaultRef) => { value: string } | { error: string };

/**
 * The value of any reference: a literal as it is, `env.VAR` from `env`, `vault.<path>#<field>` from
 * `vault` (none configured: an error). `error` says why, naming the variable or path, never a value.
 */
export function readRef(value: string, env: NodeJS.ProcessEnv, vault: VaultLookup | undefined): { value: string } | { error: string } {
  if (isEnvRef(value)) {
    const r = readEnvRef(value, env);
    return 'missing' in r ? { error: `environment variable ${r.missing} is not set` } : r;
  }
  if (!isVaultRef(value)) return { value };
  const ref = parseVaultRef(value);
  if ('error' in ref) return ref;
  if (!vault) return { error: `vault reference ${vaultKey(ref)}: no vault is configured (set the vault section of config.json, or VAULT_ADDR and VAULT_TOKEN)` };
  return vault(ref);
}

/** Where secret material lives: `env.VAR` and `vault.<path>#<field>` there are read as references. */
const ENV_REF_ROOTS = ['providers', 'governance.virtual_keys', 'governance.auth_config', 'auth_config', 'redis', 'logs_store.config', 'vector_store.config', 'mcp.client_configs', 'webhooks', 'encryption_key', 'audit_logs.hmac_key'];

/** A plugin's headers (the otel plugin's collector headers: a token, by the reference's own example). */
const PLUGIN_HEADERS = /^plugins\[\d+\]\.config\.headers\./;

/** Whether a string at this document path is read as a reference. */
export const resolvesEnvRef = (path: string): boolean => ENV_REF_ROOTS.some((r) => path.startsWith(r)) || PLUGIN_HEADERS.test(path);
