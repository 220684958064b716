// Management API keys: the one list of areas and scopes (what a key may do through /api) and the
// body that issues a key. (The `audit_logs` section is in gateway.ts: the operator loads that floor.)
import { Type, type Static } from '@sinclair/typebox';

/** The parts of /api a scope names; every /api route belongs to one (api/scopes.ts). */
export const MANAGEMENT_AREAS = ['config', 'providers', 'governance', 'routing', 'logs', 'cache', 'mcp', 'webhooks', 'skills', 'audit'] as const;
export type ManagementArea = (typeof MANAGEMENT_AREAS)[number];

/** `<area>:read` and `<area>:write` (write includes read). */
export type AreaScope = `${ManagementArea}:${'read' | 'write'}`;

/**
 * Every scope a key may hold. `read_only`: every read of every area. `admin`: everything, the
 * management keys themselves included (what config.json's keys and the admin login can do).
 */
export const MANAGEMENT_SCOPES: readonly ('read_only' | 'admin' | AreaScope)[] = ['read_only', 'admin', ...MANAGEMENT_AREAS.flatMap((a): AreaScope[] => [`${a}:read`, `${a}:write`])];

export const ManagementScopeSchema = Type.Union(
  MANAGEMENT_SCOPES.map((s) => Type.Literal(s)),
  { description: `read_only, admin, or <area>:read / <area>:write for an area of ${MANAGEMENT_AREAS.join(', ')}` },
);
export type ManagementScope = (typeof MANAGEMENT_SCOPES)[number];

/** POST /api/management-keys. */
export const IssueManagementKeySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\x00-\\x1f]+$', description: 'A name people recognise the key by' }),
    scopes: Type.Array(ManagementScopeSchema, { minItems: 1, maxItems: 32, uniqueItems: true }),
    /** ISO 8601 time, or omitted for a key that does not expire. */
    expires_at: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'When the key stops working (ISO 8601, in the future)' })),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);
export type IssueManagementKey = Static<typeof IssueManagementKeySchema>;
