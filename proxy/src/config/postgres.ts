// A PostgreSQL connection as config.json gives it: the postgres `logs_store` and the pgvector
// `vector_store` take the same fields (the reference gateway's shape), read by one type.
import type pg from 'pg';

export interface PgConnectionConfig {
  host: string;
  port: string | number;
  user: string;
  password?: string;
  db_name: string;
  ssl_mode?: string;
  max_open_conns?: number;
  /** Per statement; each store has its own default. */
  statement_timeout_ms?: number;
}

export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** libpq's sslmode in node-postgres terms; `section` names the setting in the error for an unknown mode. */
export function sslOption(mode: string | undefined, section = 'logs_store.config'): pg.ClientConfig['ssl'] {
  switch (mode ?? 'disable') {
    case '':
    case 'disable':
    case 'allow':
    case 'prefer':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true };
    default:
      throw new Error(`${section}.ssl_mode: unknown mode '${mode}'; expected ${SSL_MODES.join(', ')}`);
  }
}
