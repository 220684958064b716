// /api/management-keys: issue (the value is in the answer once, only its SHA-256 is stored), list
// with last use, show and revoke management API keys (audit/keys.ts). Only a caller holding every
// scope (the admin, a session, a config.json key, or a key with `admin`) reaches these routes: a
// scoped key could otherwise issue itself a wider one. Issuance and revocation are audited.
import { Router, type Request, type Response } from 'express';
import type { AuditLog } from '../audit/log.ts';
import type { ManagementKey, ManagementKeys } from '../audit/keys.ts';
import { IssueManagementKeySchema, MANAGEMENT_SCOPES, type ManagementScope } from '../schema/management.ts';
import { GatewayError } from '../unified/errors.ts';
import { checkSchema, notFound, objectBody } from './errors.ts';
import { reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { actorOf } from './audit-trail.ts';
import { principalOf } from './scopes.ts';
import type { IssuedManagementKey, ManagementKeyList, ManagementKeyView } from './answers.ts';

const noStore = () =>
  new GatewayError(503, 'management API keys need a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart (keys in governance.auth_config.api_keys work without one)', {
    type: 'service_unavailable',
    code: 'management_keys_store_unavailable',
  });

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function keyView(k: ManagementKey, now = Date.now()): ManagementKeyView {
  return {
    id: k.id,
    name: k.name,
    description: k.description ?? null,
    prefix: k.prefix,
    scopes: [...k.scopes],
    status: k.revoked_at !== undefined ? 'revoked' : k.expires_at !== undefined && k.expires_at <= now ? 'expired' : 'active',
    created_at: new Date(k.created_at).toISOString(),
    created_by: k.created_by ?? null,
    expires_at: iso(k.expires_at),
    revoked_at: iso(k.revoked_at),
    revoked_by: iso(k.revoked_at) === null ? null : (k.revoked_by ?? null),
    last_used_at: iso(k.last_used_at),
  };
}

/** Who did it, as the key records name them: the principal's name and id. */
function by(req: Request): string {
  const p = principalOf(req);
  return [p?.kind ?? 'local', p?.name ?? p?.id].filter(Boolean).join(':');
}

export function managementKeysRouter(keys: ManagementKeys | undefined, audit: AuditLog | undefined): Router {
  const router = Router({ caseSensitive: true });
  // The routes exist without a store (they answer 503 naming it), so the route table is the same everywhere.
  const need = (): ManagementKeys => {
    if (!keys) throw noStore();
    return keys;
  };
  const record = (req: Request, action: 'issue' | 'revoke', k: ManagementKey, status: number) =>
    void audit?.record({
      actor: actorOf(req),
      action,
      resource: 'management-keys',
      resource_id: k.id,
      method: req.method,
      path: req.originalUrl.split('?')[0],
      status_code: status,
      outcome: 'success',
      // Never the value: the name, scopes and expiry say what was granted.
      details: { name: k.name, scopes: k.scopes, expires_at: iso(k.expires_at) },
    });

  router
    .route('/')
    .get(async (_req: Request, res: Response) => {
      const list = (await need().list()).map((k) => keyView(k));
      reply(res, 200, { keys: list, count: list.length, scopes: [...MANAGEMENT_SCOPES] } satisfies ManagementKeyList);
    })
    .post(async (req: Request, res: Response) => {
      const store = need();
      const body = checkSchema(IssueManagementKeySchema, objectBody(req.body, 'management key'), 'management key');
      let expires: number | undefined;
      if (body.expires_at !== undefined) {
        expires = Date.parse(body.expires_at);
        if (!Number.isFinite(expires) || !/^\d{4}-\d{2}-\d{2}T/.test(body.expires_at)) throw new GatewayError(400, `invalid management key: expires_at: expected an RFC 3339 time (2030-01-31T00:00:00Z), got '${body.expires_at}'`, { param: 'expires_at', code: 'invalid_field' });
        if (expires <= Date.now()) throw new GatewayError(400, 'invalid management key: expires_at: must be in the future', { param: 'expires_at', code: 'invalid_field' });
      }
      const { key, value } = await store.issue({ name: body.name, scopes: body.scopes as ManagementScope[], ...(body.description !== undefined && { description: body.description }), ...(expires !== undefined && { expires_at: expires }) }, by(req));
      res.setHeader('cache-control', 'no-store');
      record(req, 'issue', key, 201);
      reply(res, 201, { ...keyView(key), value } satisfies IssuedManagementKey);
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req: Request, res: Response) => {
      const id = String(req.params.id);
      const k = id.length <= 64 ? await need().get(id) : undefined;
      if (!k) throw notFound('management key', id.slice(0, 64));
      reply(res, 200, keyView(k));
    })
    // Revocation: the key stays listed (revoked, with who and when) and never works again.
    .delete(async (req: Request, res: Response) => {
      const id = String(req.params.id);
      const store = need();
      const before = id.length <= 64 ? await store.get(id) : undefined;
      if (!before) throw notFound('management key', id.slice(0, 64));
      const after = before.revoked_at === undefined ? await store.revoke(id, by(req)) : before;
      if (before.revoked_at === undefined && after) record(req, 'revoke', after, 200);
      reply(res, 200, keyView(after ?? before));
    })
    .all(methodNotAllowed);

  return router;
}
