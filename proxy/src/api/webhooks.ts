// /api/webhooks: the config document's `webhooks` (reconciled by name; the name is the id in paths),
// their signing secrets (kept in the logs store, shown once on create and on rotation), test
// deliveries, and the delivery history with redelivery. See docs/webhooks.md.
import { Router, type Request, type Response } from 'express';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import { SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import { isReference, isVaultRef } from '../schema/env-ref.ts';
import { WEBHOOK_EVENTS, WebhookApiBodySchema, withDefaults, type WebhookEndpoint, type WebhookEvent, type WebhookSettings } from '../schema/webhooks.ts';
import { GatewayError } from '../unified/errors.ts';
import type { Row } from '../logs/driver.ts';
import { seal } from '../webhooks/crypto.ts';
import type { Dispatcher } from '../webhooks/dispatcher.ts';
import { encryptionKey, privateReceiverRefusal } from '../webhooks/endpoints.ts';
import { storedData } from '../webhooks/payload.ts';
import { DELIVERY_STATES } from '../webhooks/queue.ts';
import { checkSchema, conflict, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, pathParam, queryParam, reply } from './http.ts';
import { markManaged } from './managed.ts';
import { REDACTED, redact } from './mask.ts';
import { write } from './write.ts';
import type { WebhookView } from './answers.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const STATUS_CLASSES: Record<string, string> = {
  '2xx': 'd.last_status BETWEEN 200 AND 299',
  '3xx': 'd.last_status BETWEEN 300 AND 399',
  '4xx': 'd.last_status BETWEEN 400 AND 499',
  '5xx': 'd.last_status BETWEEN 500 AND 599',
  none: 'd.last_status IS NULL',
};

const bad = (param: string, message: string): GatewayError => new GatewayError(400, `invalid ${param}: ${message}`, { param, code: 'invalid_field' });

function listOf(doc: GatewayConfig): WebhookEndpoint[] {
  const v = doc.webhooks;
  return Array.isArray(v) ? v : [];
}

function storeMissing(): GatewayError {
  return new GatewayError(503, 'webhooks need the request-log store (logs_store, or client.enable_logging) and none is open on this gateway', { type: 'service_unavailable', code: 'store_unavailable' });
}

function secretRefused(): GatewayError {
  return new GatewayError(400, 'invalid webhook: secret: is never accepted here; it is generated on create and replaced by POST /api/webhooks/{id}/rotate-secret', { param: 'secret', code: 'invalid_field' });
}

/** The endpoint as answered: defaults filled in, header values redacted, where the secret comes from. */
function view(service: ConfigService, e: WebhookEndpoint): WebhookView {
  const { secret, headers, ...rest } = withDefaults(e);
  return markManaged(service, 'webhooks', e.name, {
    id: e.name,
    ...rest,
    headers: Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k, redact(v)])),
    secret_source: secret === undefined ? ('generated' as const) : secret.startsWith('env.') ? ('env' as const) : ('config' as const),
    status: rest.disabled ? ('disabled' as const) : ('active' as const),
  });
}

function sealHeaders(headers: Record<string, string> | undefined, key: string | undefined, stored: Record<string, string> = {}): Record<string, string> | undefined {
  if (!headers) return undefined;
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => {
      // A redacted value sent back unchanged keeps what is stored.
      if (v === REDACTED && Object.hasOwn(stored, k)) return [k, stored[k]];
      return [k, isReference(v) ? v : seal(v, key)];
    }),
  );
}

/** 403 when a delivery to this endpoint would be refused at send time (webhooks/endpoints.ts). */
function refuseUnlessMaySend(service: ConfigService, name: string, settings: WebhookSettings): void {
  const refused = privateReceiverRefusal(service.current(), name, settings);
  if (refused) throw new GatewayError(403, refused, { type: 'permission_error', code: 'auth_required' });
}

const iso = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : new Date(Number(v)).toISOString());

function deliveryView(row: Row, attempts: Row[]): Record<string, unknown> {
  return {
    id: row.id,
    webhook: row.endpoint,
    event: row.event,
    request_id: row.job_id,
    state: row.state,
    sends: Number(row.send_no),
    attempt_count: Number(row.attempts),
    ...(row.state === 'pending' && { next_attempt_at: iso(row.next_attempt_at) }),
    last_status_code: row.last_status === null || row.last_status === undefined ? null : Number(row.last_status),
    last_error: row.last_error ?? null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    attempts: attempts.map((a) => ({
      send: Number(a.send_no),
      attempt: Number(a.attempt),
      started_at: iso(a.started_at),
      duration_ms: a.duration_ms === null ? null : Math.round(Number(a.duration_ms) * 10) / 10,
      status_code: a.status_code === null || a.status_code === undefined ? null : Number(a.status_code),
      outcome: a.outcome,
      ...(a.error !== null && a.error !== undefined && { error: a.error }),
      ...(a.response_body !== null && a.response_body !== undefined && { response_body: a.response_body }),
      node: a.node,
    })),
  };
}

function timeParam(req: Request, name: string): number | undefined {
  const v = queryParam(req, name);
  if (v === undefined || v === '') return undefined;
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t)) throw bad(name, 'must be an ISO 8601 time or milliseconds since the epoch');
  return t;
}

function intParam(req: Request, name: string, fallback: number, min: number, max: number): number {
  const v = queryParam(req, name);
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw bad(name, `must be an integer from ${min} to ${max}`);
  return n;
}

function oneOf(req: Request, name: string, values: readonly string[]): string | undefined {
  const v = queryParam(req, name);
  if (v === undefined || v === '') return undefined;
  if (!values.includes(v)) throw bad(name, `must be one of ${values.join(', ')}`);
  return v;
}

export function webhooksRouter(service: ConfigService, dispatcher: Dispatcher | undefined): Router {
  const router = Router();
  const need = (): Dispatcher => {
    if (!dispatcher) throw storeMissing();
    return dispatcher;
  };
  const find = (id: string): WebhookEndpoint => {
    const e = listOf(service.document()).find((w) => w.name === id);
    if (!e) throw notFound('webhook', id);
    return e;
  };
  const idParam = (req: Request) => namedParam(req, 'id', /^[^/]{1,256}$/, 'must be a webhook name');

  async function history(req: Request, res: Response, webhook?: string): Promise<void> {
    const d = need();
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, ...values: unknown[]) => {
      where.push(sql);
      params.push(...values);
    };
    const name = webhook ?? queryParam(req, 'webhook');
    if (name) add('d.endpoint = ?', name);
    const outcome = oneOf(req, 'outcome', DELIVERY_STATES);
    if (outcome) add('d.state = ?', outcome);
    const event = oneOf(req, 'event', WEBHOOK_EVENTS);
    if (event) add('d.event = ?', event);
    const cls = oneOf(req, 'status_class', Object.keys(STATUS_CLASSES));
    if (cls) add(STATUS_CLASSES[cls]);
    const start = timeParam(req, 'start_time');
    const end = timeParam(req, 'end_time');
    if (start !== undefined && end !== undefined && start > end) throw bad('start_time', 'is after end_time');
    if (start !== undefined) add('d.created_at >= ?', start);
    if (end !== undefined) add('d.created_at <= ?', end);
    const requestId = queryParam(req, 'request_id');
    if (requestId) add('d.job_id = ?', requestId);
    const deliveryId = queryParam(req, 'delivery_id');
    if (deliveryId) add('d.id = ?', deliveryId);
    const limit = intParam(req, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT);
    const offset = intParam(req, 'offset', 0, 0, 1_000_000);
    const { rows, total } = await d.queue.rows(where.length ? ` WHERE ${where.join(' AND ')}` : '', params, limit, offset);
    const attempts = await d.queue.attemptsOf(rows.map((r) => String(r.id)));
    const byId = new Map<string, Row[]>();
    for (const a of attempts) byId.set(String(a.delivery_id), [...(byId.get(String(a.delivery_id)) ?? []), a]);
    reply(res, 200, { deliveries: rows.map((r) => deliveryView(r, byId.get(String(r.id)) ?? [])), total_count: total, limit, offset });
  }

  async function oneDelivery(id: string): Promise<Record<string, unknown>> {
    const { rows } = await need().queue.rows(' WHERE d.id = ?', [id], 1, 0);
    if (!rows[0]) throw notFound('webhook delivery', id);
    return deliveryView(rows[0], await need().queue.attemptsOf([id]));
  }

  router.get('/deliveries', (req: Request, res: Response) => history(req, res));

  router.post('/deliveries/:id/redeliver', async (req: Request, res: Response) => {
    const id = pathParam(req, 'id');
    const d = need();
    // The rule a test delivery answers 403 for holds here too (the dispatcher checks it again at send time).
    const endpoint = String((await oneDelivery(id)).webhook);
    const e = listOf(service.document()).find((w) => w.name === endpoint);
    if (e) refuseUnlessMaySend(service, endpoint, withDefaults(e));
    const outcome = await d.queue.redeliver(id);
    if (outcome === 'missing') throw notFound('webhook delivery', id);
    if (outcome === 'pending') throw conflict(`webhook delivery '${id}' is still pending: it can be redelivered once it is delivered, exhausted or discarded`);
    const delivery = await oneDelivery(id);
    d.wake(String(delivery.webhook));
    reply(res, 202, { delivery });
  });

  router
    .route('/')
    .get((req: Request, res: Response) => {
      const search = queryParam(req, 'search')?.toLowerCase();
      const event = oneOf(req, 'event', WEBHOOK_EVENTS);
      const status = oneOf(req, 'status', ['active', 'disabled']);
      const list = listOf(service.document()).filter(
        (e) =>
          (!search || e.name.toLowerCase().includes(search) || e.url.toLowerCase().includes(search)) &&
          (!event || e.events.includes(event as WebhookEvent)) &&
          (!status || (status === 'disabled') === (e.disabled === true)),
      );
      reply(res, 200, { webhooks: list.map((e) => view(service, e)), count: list.length });
    })
    .post(async (req: Request, res: Response) => {
      const body = objectBody(req.body, 'webhook');
      if (Object.hasOwn(body, 'secret')) throw secretRefused();
      const checked = checkSchema(WebhookApiBodySchema, body, 'webhook');
      if (!SAFE_ID.test(checked.name)) throw bad('name', SAFE_ID_RULE);
      const d = need();
      const key = encryptionKey(service.current());
      const endpoint: WebhookEndpoint = { ...checked, ...(checked.headers && { headers: sealHeaders(checked.headers, key) }) };
      if (listOf(service.document()).some((w) => w.name === endpoint.name)) throw conflict(`webhook '${endpoint.name}' already exists`, 'name');
      // The secret is stored first, so the endpoint is never live without it.
      const secret = await d.secrets.replace(endpoint.name, key);
      try {
        await write(service, 'webhook', (draft, ctx) => {
          const list = listOf(draft);
          if (list.some((w) => w.name === endpoint.name)) throw conflict(`webhook '${endpoint.name}' already exists`, 'name');
          ctx.alias(`webhooks[${list.length}]`, '');
          draft.webhooks = [...list, endpoint];
        });
      } catch (err) {
        await d.secrets.delete(endpoint.name).catch(() => undefined);
        throw err;
      }
      reply(res, 201, { webhook: view(service, endpoint), secret });
    });

  router
    .route('/:id')
    .get((req: Request, res: Response) => {
      reply(res, 200, { webhook: view(service, find(idParam(req))) });
    })
    .put(async (req: Request, res: Response) => {
      const id = idParam(req);
      const body = objectBody(req.body, 'webhook');
      if (Object.hasOwn(body, 'secret')) throw secretRefused();
      if (body.name !== undefined && body.name !== id) throw bad('name', `cannot change (the name is the webhook's id, '${id}'): create a new webhook and delete this one`);
      const existing = find(id);
      const { secret, ...stored } = existing;
      const merged = mergePatch(stored as Record<string, unknown>, { ...body, name: id });
      const checked = checkSchema(WebhookApiBodySchema, merged, 'webhook');
      const key = encryptionKey(service.current());
      const next: WebhookEndpoint = { ...checked, ...(checked.headers && { headers: sealHeaders(checked.headers, key, existing.headers) }), ...(secret !== undefined && { secret }) };
      await write(service, 'webhook', (draft, ctx) => {
        const list = listOf(draft);
        const i = list.findIndex((w) => w.name === id);
        if (i < 0) throw notFound('webhook', id);
        ctx.alias(`webhooks[${i}]`, '');
        list[i] = next;
        draft.webhooks = list;
      });
      reply(res, 200, { webhook: view(service, next) });
    })
    .delete(async (req: Request, res: Response) => {
      const id = idParam(req);
      await write(service, 'webhook', (draft) => {
        const list = listOf(draft);
        const i = list.findIndex((w) => w.name === id);
        if (i < 0) throw notFound('webhook', id);
        list.splice(i, 1);
        draft.webhooks = list;
      });
      await dispatcher?.secrets.delete(id);
      reply(res, 200, { message: 'webhook deleted successfully' });
    });

  router.post('/:id/rotate-secret', async (req: Request, res: Response) => {
    const id = idParam(req);
    const e = find(id);
    if (e.secret !== undefined) {
      const from = e.secret.startsWith('env.') ? `the environment variable ${e.secret.slice(4)}` : isVaultRef(e.secret) ? `the vault (${e.secret})` : 'config.json';
      throw conflict(`the secret of webhook '${id}' comes from ${from}: change it there`, 'secret');
    }
    const secret = await need().secrets.replace(id, encryptionKey(service.current()));
    reply(res, 200, { webhook: view(service, e), secret });
  });

  router.post('/:id/test', async (req: Request, res: Response) => {
    const id = idParam(req);
    const e = withDefaults(find(id));
    refuseUnlessMaySend(service, id, e);
    if (e.disabled) throw conflict(`webhook '${id}' is disabled: enable it to send a test delivery`);
    const raw = req.body === undefined || req.body === null ? {} : objectBody(req.body, 'test delivery');
    const event = raw.event ?? e.events[0];
    if (typeof event !== 'string' || !(WEBHOOK_EVENTS as readonly string[]).includes(event)) throw bad('event', `must be one of ${WEBHOOK_EVENTS.join(', ')}`);
    const d = need();
    const failed = event === 'async_job.failed';
    const jobId = `job_test_${Date.now().toString(36)}`;
    const data = storedData(
      {
        id: jobId,
        request_type: 'test',
        status: failed ? 'failed' : 'completed',
        status_code: failed ? 500 : 200,
        result_url: `/v1/async/test/${jobId}`,
        result_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        ...(failed ? { error: { error: { message: 'test delivery: this job never ran', type: 'test' } } } : { response: { object: 'test', message: 'test delivery: this job never ran' } }),
      },
      e.include_response,
      e.max_response_payload_kbs,
    );
    const deliveryId = await d.queue.add({ endpoint: id, event, data });
    d.wake(id);
    reply(res, 202, { delivery: await oneDelivery(deliveryId) });
  });

  router.get('/:id/deliveries', (req: Request, res: Response) => {
    const id = idParam(req);
    find(id);
    return history(req, res, id);
  });

  return router;
}
