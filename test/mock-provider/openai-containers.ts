// OpenAI Containers API, in memory: containers (create with `name`, `expires_after`, `file_ids`
// copied from the Files API's store, `memory_limit`; list with `after` / `limit` / `order` / `name`;
// retrieve; delete) and the files in a container (create by multipart upload or by `file_id`, list,
// retrieve, delete, content as the bytes stored, written in 64 KiB pieces). Unknown parameters and
// bad values are the API's 400s; an unknown container or file is its 404. State is per process,
// shared by every mock server in it.

import { json } from './reply.ts';
import { isObject, nowSeconds } from './text.ts';
import { page, parseMultipart, storedFile } from './openai-files.ts';
import type { ErrorExtra, JsonObject, Reply, RequestContext, Route } from './types.ts';

type ErrorReply = (status: number, message?: string, extra?: ErrorExtra) => Reply;

const MEMORY_LIMITS = ['1g', '4g', '16g', '64g'];
const CREATE_PARAMS = new Set(['name', 'expires_after', 'file_ids', 'memory_limit', 'network_policy', 'skills']);
const CONTENT_PIECE = 64 * 1024;

interface ContainerFile {
  id: string;
  container_id: string;
  path: string;
  created_at: number;
  source: 'user' | 'assistant';
  data: Buffer;
}

interface Container {
  id: string;
  name: string;
  created_at: number;
  last_active_at: number;
  memory_limit: string;
  expires_after: { anchor: 'last_active_at'; minutes: number };
  network_policy: JsonObject;
  files: Map<string, ContainerFile>;
}

const containers = new Map<string, Container>();

function containerObject(c: Container): JsonObject {
  return {
    id: c.id, object: 'container', name: c.name, created_at: c.created_at, status: 'running', expires_after: c.expires_after,
    last_active_at: c.last_active_at, memory_limit: c.memory_limit, network_policy: c.network_policy,
  };
}

function fileObject(f: ContainerFile): JsonObject {
  return { id: f.id, object: 'container.file', container_id: f.container_id, path: f.path, bytes: f.data.length, created_at: f.created_at, source: f.source };
}

const listOf = (data: JsonObject[], hasMore: boolean) => json(200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });

/** `limit` 1..100 and `order` asc|desc, as the API checks them; undefined when fine. */
function badPaging(query: Record<string, string>, error: ErrorReply): Reply | undefined {
  if (query.limit !== undefined && !(/^\d+$/.test(query.limit) && Number(query.limit) >= 1 && Number(query.limit) <= 100)) {
    return error(400, `Invalid 'limit': integer below minimum value. Expected a value between 1 and 100, but got ${query.limit} instead.`, { param: 'limit', code: 'invalid_value' });
  }
  if (query.order !== undefined && query.order !== 'asc' && query.order !== 'desc') {
    return error(400, `Invalid value: '${query.order}'. Supported values are: 'asc' and 'desc'.`, { param: 'order', code: 'invalid_value' });
  }
  return undefined;
}

function addFile(ctx: RequestContext, c: Container, filename: string, data: Buffer): ContainerFile {
  const f: ContainerFile = { id: `cfile_${ctx.nextId()}`, container_id: c.id, path: `/mnt/data/${filename}`, created_at: nowSeconds(), source: 'user', data };
  c.files.set(f.id, f);
  c.last_active_at = f.created_at;
  return f;
}

function create(ctx: RequestContext, error: ErrorReply): Reply {
  if (ctx.badJson) return error(400, 'We could not parse the JSON body of your request.');
  const body = ctx.body;
  if (!isObject(body)) return error(400, 'Invalid type for request body: expected an object.');
  for (const k of Object.keys(body)) if (!CREATE_PARAMS.has(k)) return error(400, `Unknown parameter: '${k}'.`, { param: k, code: 'unknown_parameter' });
  if (typeof body.name !== 'string') return error(400, "Missing required parameter: 'name'.", { param: 'name', code: 'missing_required_parameter' });
  const memory = body.memory_limit ?? '1g';
  if (typeof memory !== 'string' || !MEMORY_LIMITS.includes(memory)) {
    return error(400, `Invalid value: '${String(memory)}'. Supported values are: ${MEMORY_LIMITS.map((m) => `'${m}'`).join(', ')}.`, { param: 'memory_limit', code: 'invalid_value' });
  }
  const expires = isObject(body.expires_after) ? body.expires_after : { anchor: 'last_active_at', minutes: 20 };
  if (expires.anchor !== 'last_active_at' || typeof expires.minutes !== 'number') {
    return error(400, "Invalid value for 'expires_after'.", { param: 'expires_after', code: 'invalid_value' });
  }
  const fileIds = body.file_ids ?? [];
  if (!Array.isArray(fileIds)) return error(400, "Invalid type for 'file_ids': expected an array of strings.", { param: 'file_ids', code: 'invalid_type' });
  const copies = fileIds.map((id) => [id, storedFile(String(id))] as const);
  const missing = copies.find(([, f]) => !f);
  if (missing) return error(404, `No such File object: ${String(missing[0])}`, { param: 'file_ids', code: null });
  const now = nowSeconds();
  const c: Container = {
    id: `cntr_${ctx.nextId()}`, name: body.name, created_at: now, last_active_at: now, memory_limit: memory,
    expires_after: { anchor: 'last_active_at', minutes: expires.minutes }, network_policy: isObject(body.network_policy) ? body.network_policy : { type: 'disabled' },
    files: new Map(),
  };
  for (const [, f] of copies) addFile(ctx, c, f!.filename, f!.data);
  containers.set(c.id, c);
  return json(200, containerObject(c));
}

function list(ctx: RequestContext, error: ErrorReply): Reply {
  const bad = badPaging(ctx.query, error);
  if (bad) return bad;
  const all = [...containers.values()].filter((c) => ctx.query.name === undefined || c.name === ctx.query.name);
  const { data, hasMore } = page(all, ctx.query, 20);
  return listOf(data.map(containerObject), hasMore);
}

function createFile(ctx: RequestContext, c: Container, error: ErrorReply): Reply {
  const ct = ctx.headers['content-type'];
  if (typeof ct === 'string' && /^multipart\/form-data/i.test(ct)) {
    const parts = parseMultipart(ctx.raw, ct);
    if (typeof parts === 'string') return error(400, parts);
    for (const p of parts) if (p.name !== 'file' && p.name !== 'file_id') return error(400, `Unknown parameter: '${p.name}'.`, { param: p.name, code: 'unknown_parameter' });
    const file = parts.find((p) => p.name === 'file');
    if (!file || file.filename === undefined) return error(400, "Missing required parameter: 'file'.", { param: 'file', code: 'missing_required_parameter' });
    return json(200, fileObject(addFile(ctx, c, file.filename, Buffer.from(file.data))));
  }
  if (ctx.badJson) return error(400, 'We could not parse the JSON body of your request.');
  const body = ctx.body;
  if (!isObject(body)) return error(400, 'Invalid type for request body: expected an object.');
  for (const k of Object.keys(body)) if (k !== 'file_id') return error(400, `Unknown parameter: '${k}'.`, { param: k, code: 'unknown_parameter' });
  if (typeof body.file_id !== 'string') return error(400, "Missing required parameter: 'file_id'.", { param: 'file_id', code: 'missing_required_parameter' });
  const source = storedFile(body.file_id);
  if (!source) return error(404, `No such File object: ${body.file_id}`, { param: 'file_id', code: null });
  return json(200, fileObject(addFile(ctx, c, source.filename, source.data)));
}

function content(f: ContainerFile): Reply {
  const pieces: string[] = [];
  for (let at = 0; at < f.data.length; at += CONTENT_PIECE) pieces.push(f.data.subarray(at, at + CONTENT_PIECE).toString('latin1'));
  return { kind: 'sse', events: pieces, encoding: 'latin1', headers: { 'content-type': 'application/octet-stream', 'content-length': String(f.data.length) } };
}

const noContainer = (id: string, error: ErrorReply) => error(404, `Container with id '${id}' not found.`, { param: null, code: null, type: 'invalid_request_error' });
const noFile = (id: string, error: ErrorReply) => error(404, `File with id '${id}' not found in container.`, { param: null, code: null, type: 'invalid_request_error' });

const BY_ID = /^\/v1\/containers\/([^/]+)(?:\/files(?:\/([^/]+)(\/content)?)?)?$/;

/** The route for a Containers API path, or undefined for other paths and methods. */
export function openaiContainersRoute(method: string, path: string, error: ErrorReply): Route | undefined {
  const route = (handle: Route['handle']): Route => ({ model: undefined, handle });
  if (path === '/v1/containers') {
    if (method === 'POST') return route((ctx) => create(ctx, error));
    if (method === 'GET') return route((ctx) => list(ctx, error));
    return undefined;
  }
  const m = BY_ID.exec(path);
  if (!m) return undefined;
  const id = decodeURIComponent(m[1]);
  const onFiles = path.includes('/files');
  const fileId = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
  const withContainer = (fn: (c: Container, ctx: RequestContext) => Reply): Route =>
    route((ctx) => {
      const c = containers.get(id);
      return c ? fn(c, ctx) : noContainer(id, error);
    });
  if (!onFiles) {
    if (method === 'GET') return withContainer((c) => json(200, containerObject(c)));
    if (method === 'DELETE') return withContainer((c) => (containers.delete(c.id), json(200, { id: c.id, object: 'container.deleted', deleted: true })));
    return undefined;
  }
  if (fileId === undefined) {
    if (method === 'POST') return withContainer((c, ctx) => createFile(ctx, c, error));
    if (method === 'GET') {
      return withContainer((c, ctx) => {
        const bad = badPaging(ctx.query, error);
        if (bad) return bad;
        const { data, hasMore } = page([...c.files.values()], ctx.query, 20);
        return listOf(data.map(fileObject), hasMore);
      });
    }
    return undefined;
  }
  const withFile = (fn: (f: ContainerFile, c: Container) => Reply): Route =>
    withContainer((c) => {
      const f = c.files.get(fileId);
      return f ? fn(f, c) : noFile(fileId, error);
    });
  if (m[3]) return method === 'GET' ? withFile(content) : undefined;
  if (method === 'GET') return withFile((f) => json(200, fileObject(f)));
  if (method === 'DELETE') return withFile((f, c) => (c.files.delete(f.id), json(200, { id: f.id, object: 'container.file.deleted', deleted: true })));
  return undefined;
}
