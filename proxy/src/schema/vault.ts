// The `vault` section of config.json: where `vault.<path>#<field>` references are read from (a
// HashiCorp Vault API server, KV v2) and how the gateway logs in. The vault's own credentials are
// `env.VAR` references only: a literal token in config.json would be the one secret no vault guards.
import { Type, type Static } from '@sinclair/typebox';

const EnvOnly = (what: string) => Type.String({ pattern: '^env\\.[A-Za-z_][A-Za-z0-9_]*$', description: `${what}: an env.VAR reference (never the value itself)` });

export const VaultAuthSchema = Type.Union([
  Type.Object({ method: Type.Literal('token'), token: EnvOnly('The token') }, { additionalProperties: false }),
  Type.Object(
    {
      method: Type.Literal('approle'),
      role_id: EnvOnly('The role id'),
      secret_id: EnvOnly('The secret id'),
      /** The auth mount (default `approle`). */
      mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      method: Type.Literal('kubernetes'),
      role: Type.String({ minLength: 1 }),
      /** The service account token the login presents (default: the pod's projected token). */
      token_path: Type.Optional(Type.String({ minLength: 1 })),
      /** The auth mount (default `kubernetes`). */
      mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    },
    { additionalProperties: false },
  ),
]);

export const VaultConfigSchema = Type.Object(
  {
    /** The server, e.g. `https://vault.internal:8200` (default: VAULT_ADDR). */
    address: Type.Optional(Type.String({ pattern: '^https?://', description: 'http(s) URL of the Vault API server (default: the VAULT_ADDR variable)' })),
    /** Default: token auth with the VAULT_TOKEN variable. */
    auth: Type.Optional(VaultAuthSchema),
    /** The KV v2 mount the references' paths are below (default `secret`). */
    mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
    /** Enterprise/OpenBao namespace, sent as X-Vault-Namespace. */
    namespace: Type.Optional(Type.String({ minLength: 1 })),
    /** How long a value is served before it is read again (default 60). */
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    /** One call's time limit (default 5000). */
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 60000 })),
  },
  { additionalProperties: false },
);

export type VaultAuthConfig = Static<typeof VaultAuthSchema>;
export type VaultConfig = Static<typeof VaultConfigSchema>;
