// /api/audit-logs: search the audit log (who, what, when), one record, verify the hash chain, and
// export as JSON lines. Records are written by the gateway only: there is no route that changes one.
import { Router, type Request, type Response } from 'express';
import type { AuditLog } from '../audit/log.ts';
import type { AuditFilters, AuditRecord } from '../audit/store.ts';
import { GatewayError } from '../unified/errors.ts';
import { queryParam, reply } from './http.ts';
import { methodNotAllowed } from './not-allowed.ts';
import type { AuditLogList, AuditRecordView, AuditVerifyAnswer } from './answers.ts';

const noStore = () =>
  new GatewayError(503, 'the audit log needs a logs store: configure logs_store (sqlite or postgres) or client.enable_logging, then restart', {
    type: 'service_unavailable',
    code: 'audit_store_unavailable',
  });

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
const TEXT_FILTERS = ['actor', 'actor_type', 'action', 'resource', 'outcome'] as const;
const KNOWN = new Set<string>([...TEXT_FILTERS, 'start_time', 'end_time', 'limit', 'cursor']);
const invalid = (param: string, why: string) => new GatewayError(400, `${param}: ${why}`, { param, code: 'invalid_field' });

/** A time as RFC 3339 or milliseconds since the epoch. */
function timeParam(req: Request, name: string): number | undefined {
  const v = queryParam(req, name);
  if (v === undefined) return undefined;
  const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw invalid(name, `expected an RFC 3339 time or milliseconds since the epoch, got '${v.slice(0, 64)}'`);
  return ms;
}

export function auditFilters(req: Request): AuditFilters {
  for (const k of Object.keys(req.query as object)) if (!KNOWN.has(k)) throw invalid(k, `unknown query parameter (known: ${[...KNOWN].join(', ')})`);
  const f: AuditFilters = {};
  for (const k of TEXT_FILTERS) {
    const v = queryParam(req, k);
    if (v === undefined) continue;
    if (v === '' || v.length > 256) throw invalid(k, 'expected a non-empty value of at most 256 characters');
    f[k] = v;
  }
  const start = timeParam(req, 'start_time');
  const end = timeParam(req, 'end_time');
  if (start !== undefined) f.start_time = start;
  if (end !== undefined) f.end_time = end;
  if (start !== undefined && end !== undefined && end <= start) throw invalid('end_time', 'must be after start_time');
  return f;
}

export function recordView(r: AuditRecord): AuditRecordView {
  return {
    seq: r.seq,
    id: r.id,
    timestamp: new Date(r.timestamp).toISOString(),
    actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name, session_id: r.session_id, remote_address: r.remote_address, user_agent: r.user_agent },
    action: r.action,
    resource: r.resource,
    resource_id: r.resource_id,
    method: r.method,
    path: r.path,
    status_code: r.status_code,
    outcome: r.outcome,
    details: r.details,
    prev_hash: r.prev_hash,
    hash: r.hash,
  };
}

export function auditLogsRouter(audit: AuditLog | undefined): Router {
  const router = Router({ caseSensitive: true });
  // The routes exist without a store (they answer 503 naming it), so the route table is the same everywhere.
  const need = (): AuditLog => {
    if (!audit) throw noStore();
    return audit;
  };

  router
    .route('/')
    .get(async (req: Request, res: Response) => {
      const filters = auditFilters(req);
      const limitText = queryParam(req, 'limit');
      const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw invalid('limit', `expected an integer from 1 to ${MAX_LIMIT}`);
      const cursorText = queryParam(req, 'cursor');
      if (cursorText !== undefined && !/^\d{1,15}$/.test(cursorText)) throw invalid('cursor', 'expected the next_cursor of a previous page');
      // Records queued on this replica are written first: a search right after a change finds it.
      const log = need();
      await log.flush();
      const page = await log.store.search(filters, limit, cursorText === undefined ? undefined : Number(cursorText));
      reply(res, 200, { records: page.records.map(recordView), total_count: page.total, next_cursor: page.next_cursor ?? null } satisfies AuditLogList);
    })
    .all(methodNotAllowed);

  router
    .route('/verify')
    .get(async (_req: Request, res: Response) => {
      // Records queued on this replica are written first, so a verify right after a change sees it.
      const log = need();
      await log.flush();
      const key = log.hmacKey;
      const r = await log.store.verify(key);
      reply(res, 200, { ...r, first_broken: r.first_broken ?? null, algorithm: key === undefined ? 'sha256' : 'hmac-sha256' } satisfies AuditVerifyAnswer);
    })
    .all(methodNotAllowed);

  router
    .route('/export')
    .get(async (req: Request, res: Response) => {
      const filters = auditFilters(req);
      const log = need();
      await log.flush();
      res.status(200);
      res.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
      res.setHeader('content-disposition', 'attachment; filename="audit-logs.jsonl"');
      res.setHeader('cache-control', 'no-store');
      // One record per line, oldest first, read a page at a time: an export of any size holds one page.
      for await (const r of log.store.each(filters)) {
        if (!res.write(`${JSON.stringify(recordView(r))}\n`)) await new Promise((resolve) => res.once('drain', resolve));
        if (res.destroyed) return;
      }
      res.end();
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get(async (req: Request, res: Response) => {
      const id = String(req.params.id);
      const r = id.length <= 64 ? await need().store.get(id) : undefined;
      if (!r) throw new GatewayError(404, `audit record '${id.slice(0, 64)}' not found`, { type: 'not_found_error', code: 'not_found' });
      reply(res, 200, recordView(r));
    })
    .all(methodNotAllowed);

  return router;
}
