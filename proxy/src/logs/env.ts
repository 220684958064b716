// `logs_store` from the environment (SKYBRIDGE_LOGS_STORE_*), as the Helm chart sets it: in Kubernetes
// mode the configuration is rendered from custom resources and carries no `logs_store`, and the store
// is a property of the deployment (every replica writes the same database), not of a resource.
import type { LogsStoreConfig } from '../schema/logs.ts';
import { SSL_MODES } from '../config/postgres.ts';

/**
 * SKYBRIDGE_LOGS_STORE_TYPE=postgres with _HOST, _PORT (default 5432), _USER, _PASSWORD, _DB_NAME,
 * _SSL_MODE (default require); or =sqlite with _PATH. Undefined when unset; a bad value throws
 * (start-up fails naming the variable rather than serving without the logs it was told to keep).
 */
export function logsStoreFromEnv(env: NodeJS.ProcessEnv = process.env): LogsStoreConfig | undefined {
  const type = env.SKYBRIDGE_LOGS_STORE_TYPE;
  if (!type) return undefined;
  if (type === 'sqlite') return { enabled: true, type, config: { path: env.SKYBRIDGE_LOGS_STORE_PATH || 'logs.db' } };
  if (type !== 'postgres') throw new Error(`SKYBRIDGE_LOGS_STORE_TYPE must be sqlite or postgres, got '${type}'`);
  const need = (name: string): string => {
    const v = env[`SKYBRIDGE_LOGS_STORE_${name}`];
    if (!v) throw new Error(`SKYBRIDGE_LOGS_STORE_${name} is required when SKYBRIDGE_LOGS_STORE_TYPE is postgres`);
    return v;
  };
  const port = env.SKYBRIDGE_LOGS_STORE_PORT || '5432';
  if (!/^[0-9]{1,5}$/.test(port)) throw new Error(`SKYBRIDGE_LOGS_STORE_PORT must be a port number, got '${port}'`);
  const ssl = env.SKYBRIDGE_LOGS_STORE_SSL_MODE || 'require';
  if (!(SSL_MODES as readonly string[]).includes(ssl)) throw new Error(`SKYBRIDGE_LOGS_STORE_SSL_MODE must be one of ${SSL_MODES.join(', ')}, got '${ssl}'`);
  return {
    enabled: true,
    type,
    config: {
      host: need('HOST'),
      port,
      user: need('USER'),
      password: env.SKYBRIDGE_LOGS_STORE_PASSWORD ?? '',
      db_name: need('DB_NAME'),
      ssl_mode: ssl as (typeof SSL_MODES)[number],
    },
  };
}
