// CRUD over one list of the governance section (teams, customers, budgets, rate limits, model
// configs, virtual keys): ids generated when not given, names unique, 404 for an unknown id, 409
// for a duplicate or a record still referenced, 400 naming the field for anything invalid.
import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import type { TSchema } from '@sinclair/typebox';
import type { ConfigService } from '../config/service.ts';
import type { GatewayConfig } from '../schema/gateway.ts';
import type { Governance } from '../schema/governance.ts';
import type { FieldError } from '../schema/validate.ts';
import { checkSchema, conflict, invalidFields, notFound, objectBody } from './errors.ts';
import { mergePatch, namedParam, queryFlag, reply, without } from './http.ts';
import { SAFE_ID, SAFE_ID_RULE } from '../schema/names.ts';
import { referrers, stillUsed, type RecordKind } from './references.ts';
import { governanceOf, write, type WriteContext } from './write.ts';
import { methodNotAllowed } from './not-allowed.ts';
import { markManaged } from './managed.ts';

type Section = 'budgets' | 'rate_limits' | 'customers' | 'teams' | 'virtual_keys' | 'model_configs' | 'pricing_overrides';
export type StoredRecord = Record<string, unknown> & { id: string };

export interface CollectionSpec {
  section: Section;
  /** For the referrer check on delete; without it nothing can point at the record. */
  kind?: RecordKind;
  /** `virtual key`: in messages. */
  label: string;
  /** Keys of the answers: `{virtual_key}`, `{virtual_keys, count}`. */
  singular: string;
  plural: string;
  schema: TSchema;
  /** Fields unique across the list (409 on a clash). */
  unique?: readonly string[];
  /** Fields of answers that a write may send back and that are not stored. */
  responseOnly?: readonly string[];
  /** Turns body fields into stored ones (inline limits, generated values); runs inside the write. */
  prepare?(record: StoredRecord, draft: GatewayConfig, ctx: WriteContext, stored: StoredRecord | undefined): void;
  /** Rules beyond the schema, on the prepared record. */
  check?(record: StoredRecord): FieldError[];
  view(record: StoredRecord, doc: GatewayConfig): Record<string, unknown>;
  /** The create answer, when it differs (a virtual key's value is shown in full once). */
  createdView?(record: StoredRecord, doc: GatewayConfig): Record<string, unknown>;
  filter?(list: StoredRecord[], req: Request): StoredRecord[];
}

const listOf = (g: Governance | undefined, section: Section): StoredRecord[] => ((g?.[section] ?? []) as unknown as StoredRecord[]);

function draftList(draft: GatewayConfig, section: Section): StoredRecord[] {
  const g = governanceOf(draft) as Record<Section, unknown>;
  g[section] ??= [];
  return g[section] as StoredRecord[];
}

const describe = (spec: CollectionSpec, r: StoredRecord) => `${spec.label} '${typeof r.name === 'string' ? r.name : r.id}'`;

export function collectionRouter(service: ConfigService, spec: CollectionSpec): Router {
  const router = Router();
  const what = spec.label;

  // Reads only: the stored document as it is (views copy what they show), not a copy of it all.
  const readDoc = (req: Request): Readonly<GatewayConfig> => (queryFlag(req, 'from_memory') ? service.current().config : service.storedDocument());

  const checkUnique = (list: StoredRecord[], record: StoredRecord) => {
    for (const field of spec.unique ?? []) {
      const v = record[field];
      if (v === undefined) continue;
      if (list.some((x) => x.id !== record.id && x[field] === v)) throw conflict(`a ${what} with this ${field}${field === 'value' ? '' : ` ('${String(v)}')`} already exists`, field);
    }
  };

  const finish = (record: StoredRecord, list: StoredRecord[], index: number, ctx: WriteContext) => {
    const checked = checkSchema(spec.schema, record, what) as StoredRecord;
    const extra = spec.check?.(checked) ?? [];
    if (extra.length) throw invalidFields(what, extra);
    list[index] = checked;
    ctx.alias(`governance.${spec.section}[${index}]`, '');
    return checked;
  };

  router
    .route('/')
    .get((req: Request, res: Response) => {
      let list = listOf(readDoc(req).governance, spec.section);
      if (spec.filter) list = spec.filter(list, req);
      const doc = service.storedDocument();
      reply(res, 200, { [spec.plural]: list.map((r) => markManaged(service, spec.section, r.id, spec.view(r, doc))), count: list.length });
    })
    .post(async (req: Request, res: Response) => {
      const { id, ...body } = without(objectBody(req.body, what), spec.responseOnly ?? []);
      const record = { id: id ?? randomUUID(), ...body } as StoredRecord;
      const created = await write(service, what, (draft, ctx) => {
        const list = draftList(draft, spec.section);
        if (typeof record.id === 'string' && list.some((x) => x.id === record.id)) throw conflict(`a ${what} with id '${record.id}' already exists`, 'id');
        const prepared = structuredClone(record);
        spec.prepare?.(prepared, draft, ctx, undefined);
        checkUnique(list, prepared);
        return finish(prepared, list, list.length, ctx);
      });
      const doc = service.document();
      reply(res, 201, { message: `${what} created successfully`, [spec.singular]: markManaged(service, spec.section, created.id, (spec.createdView ?? spec.view)(created, doc)) });
    })
    .all(methodNotAllowed);

  router
    .route('/:id')
    .get((req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const found = listOf(readDoc(req).governance, spec.section).find((x) => x.id === id);
      if (!found) throw notFound(what, id);
      reply(res, 200, { [spec.singular]: markManaged(service, spec.section, id, spec.view(found, service.storedDocument())) });
    })
    .put(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      const body = without(objectBody(req.body, what), spec.responseOnly ?? []);
      if (body.id !== undefined && body.id !== id) throw invalidFields(what, [{ path: 'id', message: 'cannot be changed' }]);
      const updated = await write(service, what, (draft, ctx) => {
        const list = draftList(draft, spec.section);
        const index = list.findIndex((x) => x.id === id);
        if (index < 0) throw notFound(what, id);
        const stored = list[index];
        const merged = mergePatch(stored, body);
        merged.id = id;
        spec.prepare?.(merged, draft, ctx, stored);
        checkUnique(list, merged);
        return finish(merged, list, index, ctx);
      });
      reply(res, 200, { message: `${what} updated successfully`, [spec.singular]: markManaged(service, spec.section, id, spec.view(updated, service.document())) });
    })
    .delete(async (req: Request, res: Response) => {
      const id = namedParam(req, 'id', SAFE_ID, SAFE_ID_RULE);
      await write(service, what, (draft) => {
        const list = draftList(draft, spec.section);
        const index = list.findIndex((x) => x.id === id);
        if (index < 0) throw notFound(what, id);
        const users = spec.kind ? referrers(draft, spec.kind, id) : [];
        if (users.length) throw conflict(stillUsed(describe(spec, list[index]), users));
        list.splice(index, 1);
      });
      reply(res, 200, { message: `${what} deleted successfully` });
    })
    .all(methodNotAllowed);

  return router;
}
