// The `vault` section of config.json: where `vault.<path>#<field>` references are read from (a
// HashiCorp Vault API server, KV v2) and how the gateway logs in. The vault's own credentials are
// `env.VAR` references only: a literal token in config.json would be the one secret no vault guards.
import { Type, type Static } from '@sinclair/typebox';
import { ENV_REF_SOURCE } from './env-ref.ts';

const EnvOnly = (what: string) => Type.String({ pattern: `^${ENV_REF_SOURCE}$`, description: `${what}: an env.VAR reference (never the value itself)` });

/**
 * One object for the three methods (a union would answer a mistake with every branch's complaint);
 * which fields each method needs is checked where the settings are read (config/vault-client.ts).
 */
export const VaultAuthSchema = Type.Object(
  {
    method: Type.Union([Type.Literal('token'), Type.Literal('approle'), Type.Literal('kubernetes')]),
    /** token: the token. */
    token: Type.Optional(EnvOnly('The token')),
    /** approle: the role id and secret id. */
    role_id: Type.Optional(EnvOnly('The role id')),
    secret_id: Type.Optional(EnvOnly('The secret id')),
    /** kubernetes: the vault role to log in as. */
    role: Type.Optional(Type.String({ minLength: 1 })),
    /** kubernetes: the service account token the login presents (default: the pod's projected token). */
    token_path: Type.Optional(Type.String({ minLength: 1 })),
    /** approle, kubernetes: the auth mount (default: the method's name). */
    mount: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$' })),
  },
  { additionalProperties: false },
);

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
