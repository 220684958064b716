// `logs_store`: where request logs are kept, in the reference config's shape. SQLite takes a file
// path; PostgreSQL the connection fields (port as a string, as the reference has it).
import { Type, type Static } from '@sinclair/typebox';

export const SqliteLogsConfigSchema = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: 'Database file path (relative paths are under the app directory).' }) },
  { additionalProperties: false },
);

export const PostgresLogsConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 1024 }),
    port: Type.Union([Type.String({ pattern: '^[0-9]{1,5}$' }), Type.Integer({ minimum: 1, maximum: 65535 })]),
    user: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ maxLength: 4096, description: 'Empty for no password.' }),
    db_name: Type.String({ minLength: 1, maxLength: 256 }),
    ssl_mode: Type.Union(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].map((m) => Type.Literal(m))),
    max_idle_conns: Type.Optional(Type.Integer({ minimum: 0, default: 5 })),
    max_open_conns: Type.Optional(Type.Integer({ minimum: 2, default: 50 })),
  },
  { additionalProperties: false },
);

export const LogsStoreSchema = Type.Union([
  Type.Object(
    { enabled: Type.Boolean(), type: Type.Literal('sqlite'), config: Type.Optional(SqliteLogsConfigSchema) },
    { additionalProperties: false },
  ),
  Type.Object(
    { enabled: Type.Boolean(), type: Type.Literal('postgres'), config: PostgresLogsConfigSchema },
    { additionalProperties: false },
  ),
]);

export type LogsStoreConfig = Static<typeof LogsStoreSchema>;
export type PostgresLogsStoreConfig = Static<typeof PostgresLogsConfigSchema>;
