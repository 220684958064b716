// OpenAI Files and Batch APIs, in memory: multipart uploads checked as the real API checks them
// (`file` and a known `purpose` required, `.jsonl` for batch files), list/retrieve/delete/content,
// and batches over an uploaded .jsonl file. A batch moves one step per retrieve: validating →
// in_progress (or failed, listing bad lines) → completed, when each line is answered by the mock's
// own endpoint handler into an output file (2xx) or an error file. Cancel goes through cancelling
// to cancelled the same way. State is per process, shared by every mock server in it.

import { json } from './reply.ts';
import { isObject, nowSeconds } from './text.ts';
import type { ErrorExtra, JsonObject, Reply, RequestContext, Route } from './types.ts';

type ErrorReply = (status: number, message?: string, extra?: ErrorExtra) => Reply;
type Handler = (ctx: RequestContext) => Reply;

const PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];
const UPLOAD_FIELDS = new Set(['file', 'purpose', 'expires_after[anchor]', 'expires_after[seconds]']);
const BATCH_PARAMS = new Set(['input_file_id', 'endpoint', 'completion_window', 'metadata', 'output_expires_after']);

interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  created_at: number;
  data: Buffer;
}

type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

interface LineError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

interface Batch {
  id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  created_at: number;
  metadata: unknown;
  errors: { object: 'list'; data: LineError[] } | null;
  output_file_id: string | null;
  error_file_id: string | null;
  times: Partial<Record<'in_progress_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'cancelling_at' | 'cancelled_at', number>>;
  counts: { total: number; completed: number; failed: number };
  /** Headers of the create call, so lines run with the caller's credentials. */
  headers: RequestContext['headers'];
}

const files = new Map<string, StoredFile>();
const batches = new Map<string, Batch>();

// ---------------------------------------------------------------- multipart

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** A strict multipart/form-data reader: the boundary from the header, CRLF framing. */
export function parseMultipart(raw: Buffer, contentType: string): Part[] | string {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) return 'Missing boundary in multipart/form-data Content-Type header.';
  const delimiter = Buffer.from(`--${m[1] ?? m[2]}`);
  const parts: Part[] = [];
  let at = raw.indexOf(delimiter);
  if (at < 0) return 'Malformed multipart/form-data body: no boundary found.';
  for (;;) {
    at += delimiter.length;
    if (raw.subarray(at, at + 2).toString() === '--') return parts;
    if (raw.subarray(at, at + 2).toString() !== '\r\n') return 'Malformed multipart/form-data body.';
    const headEnd = raw.indexOf('\r\n\r\n', at + 2);
    if (headEnd < 0) return 'Malformed multipart/form-data body: part headers not terminated.';
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headEnd + 4);
    if (next < 0) return 'Malformed multipart/form-data body: missing closing boundary.';
    const head = raw.subarray(at + 2, headEnd).toString('utf8');
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) return 'Malformed multipart/form-data body: a part has no name.';
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
    parts.push({ name, ...(filename !== undefined ? { filename } : {}), ...(type ? { contentType: type } : {}), data: raw.subarray(headEnd + 4, next) });
    at = next + 2;
  }
}

// ---------------------------------------------------------------- files

/** An uploaded file's name and bytes (a container copies it by id). */
export function storedFile(id: string): { filename: string; data: Buffer } | undefined {
  return files.get(id);
}

function fileObject(f: StoredFile): JsonObject {
  return { id: f.id, object: 'file', bytes: f.data.length, created_at: f.created_at, expires_at: null, filename: f.filename, purpose: f.purpose, status: 'processed', status_details: null };
}

function storeFile(ctx: RequestContext, filename: string, purpose: string, data: Buffer): StoredFile {
  const f: StoredFile = { id: `file-${ctx.nextId()}`, filename, purpose, created_at: nowSeconds(), data };
  files.set(f.id, f);
  return f;
}

function upload(ctx: RequestContext, error: ErrorReply): Reply {
  const ct = ctx.headers['content-type'];
  if (typeof ct !== 'string' || !/^multipart\/form-data/i.test(ct)) {
    return error(400, `Invalid Content-Type header (${String(ct ?? 'none')}), expected multipart/form-data.`, { param: null, code: null });
  }
  const parts = parseMultipart(ctx.raw, ct);
  if (typeof parts === 'string') return error(400, parts);
  for (const p of parts) {
    if (!UPLOAD_FIELDS.has(p.name)) return error(400, `Unknown parameter: '${p.name}'.`, { param: p.name, code: 'unknown_parameter' });
  }
  const file = parts.find((p) => p.name === 'file');
  const purposePart = parts.find((p) => p.name === 'purpose');
  if (!purposePart) return error(400, "Missing required parameter: 'purpose'.", { param: 'purpose', code: 'missing_required_parameter' });
  const purpose = purposePart.data.toString('utf8');
  if (!PURPOSES.includes(purpose)) {
    return error(400, `Invalid value: '${purpose}'. Supported values are: ${PURPOSES.map((p) => `'${p}'`).join(', ')}.`, { param: 'purpose', code: 'invalid_value' });
  }
  if (!file || file.filename === undefined) return error(400, "Missing required parameter: 'file'.", { param: 'file', code: 'missing_required_parameter' });
  if (purpose === 'batch' && !file.filename.endsWith('.jsonl')) {
    return error(400, 'Invalid file format for Batch API. Must be .jsonl', { param: 'file', code: null });
  }
  return json(200, fileObject(storeFile(ctx, file.filename, purpose, Buffer.from(file.data))));
}

/** Newest first unless `order=asc`; `after` is an id of the previous page. */
export function page<T extends { id: string; created_at: number }>(items: T[], query: Record<string, string>, defaultLimit: number, order = query.order ?? 'desc'): { data: T[]; hasMore: boolean } {
  const sorted = [...items].sort((a, b) => (order === 'asc' ? a.created_at - b.created_at || a.id.localeCompare(b.id) : b.created_at - a.created_at || b.id.localeCompare(a.id)));
  const start = query.after ? sorted.findIndex((x) => x.id === query.after) + 1 : 0;
  const limit = Number(query.limit ?? defaultLimit);
  const data = sorted.slice(start, start + limit);
  return { data, hasMore: start + limit < sorted.length };
}

function listFiles(ctx: RequestContext): Reply {
  const all = [...files.values()].filter((f) => !ctx.query.purpose || f.purpose === ctx.query.purpose);
  const { data, hasMore } = page(all, ctx.query, 10000);
  return json(200, { object: 'list', data: data.map(fileObject), first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}

function noFile(id: string, error: ErrorReply): Reply {
  return error(404, `No such File object: ${id}`, { param: 'id', code: null, type: 'invalid_request_error' });
}

function fileRoute(method: string, id: string, content: boolean, error: ErrorReply): Route | undefined {
  const handle = (): Reply => {
    const f = files.get(id);
    if (!f) return noFile(id, error);
    if (content) {
      // Bytes as stored: a latin1 string is written back byte for byte.
      return { kind: 'sse', events: [f.data.toString('latin1')], encoding: 'latin1', headers: { 'content-type': 'application/octet-stream', 'content-length': String(f.data.length) } };
    }
    if (method === 'DELETE') {
      files.delete(id);
      return json(200, { id, object: 'file', deleted: true });
    }
    return json(200, fileObject(f));
  };
  if (content ? method === 'GET' : method === 'GET' || method === 'DELETE') return { model: undefined, handle };
  return undefined;
}

// ---------------------------------------------------------------- batches

function batchObject(b: Batch): JsonObject {
  return {
    id: b.id, object: 'batch', endpoint: b.endpoint, errors: b.errors, input_file_id: b.input_file_id,
    completion_window: b.completion_window, status: b.status, output_file_id: b.output_file_id, error_file_id: b.error_file_id,
    created_at: b.created_at, in_progress_at: b.times.in_progress_at ?? null, expires_at: b.created_at + 86400,
    finalizing_at: b.times.finalizing_at ?? null, completed_at: b.times.completed_at ?? null, failed_at: b.times.failed_at ?? null,
    expired_at: null, cancelling_at: b.times.cancelling_at ?? null, cancelled_at: b.times.cancelled_at ?? null,
    request_counts: b.counts, metadata: b.metadata ?? null,
  };
}

function createBatch(ctx: RequestContext, error: ErrorReply, endpoints: ReadonlyMap<string, Handler>): Reply {
  if (ctx.badJson) return error(400, 'We could not parse the JSON body of your request.');
  const body = ctx.body;
  if (!isObject(body)) return error(400, 'Invalid type for request body: expected an object.');
  for (const k of Object.keys(body)) if (!BATCH_PARAMS.has(k)) return error(400, `Unknown parameter: '${k}'.`, { param: k, code: 'unknown_parameter' });
  for (const k of ['input_file_id', 'endpoint', 'completion_window']) {
    if (typeof body[k] !== 'string') return error(400, `Missing required parameter: '${k}'.`, { param: k, code: 'missing_required_parameter' });
  }
  const endpoint = body.endpoint as string;
  if (!endpoints.has(endpoint)) {
    return error(400, `Invalid value: '${endpoint}'. Supported values are: ${[...endpoints.keys()].map((e) => `'${e}'`).join(', ')}.`, { param: 'endpoint', code: 'invalid_value' });
  }
  if (body.completion_window !== '24h') return error(400, `Invalid value: '${String(body.completion_window)}'. Supported values are: '24h'.`, { param: 'completion_window', code: 'invalid_value' });
  const input = files.get(body.input_file_id as string);
  if (!input) return error(400, `No such File object: ${String(body.input_file_id)}`, { param: 'input_file_id', code: null });
  if (input.purpose !== 'batch') return error(400, `The input file must have purpose 'batch', not '${input.purpose}'.`, { param: 'input_file_id', code: null });
  const b: Batch = {
    id: `batch_${ctx.nextId()}`, endpoint, input_file_id: input.id, completion_window: '24h', status: 'validating',
    created_at: nowSeconds(), metadata: body.metadata, errors: null, output_file_id: null, error_file_id: null, times: {},
    counts: { total: 0, completed: 0, failed: 0 }, headers: ctx.headers,
  };
  batches.set(b.id, b);
  return json(200, batchObject(b));
}

interface Line {
  custom_id: string;
  body: JsonObject;
}

/** Checks every line as the validating step does; bad lines fail the whole batch. */
function validateLines(b: Batch): Line[] | LineError[] {
  const text = files.get(b.input_file_id)?.data.toString('utf8');
  if (text === undefined) return [{ code: 'file_not_found', message: `The input file ${b.input_file_id} was deleted.`, param: 'input_file_id', line: null }];
  const errors: LineError[] = [];
  const lines: Line[] = [];
  const ids = new Set<string>();
  let model: unknown;
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return;
    const line = i + 1;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      errors.push({ code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.', param: null, line });
      return;
    }
    if (!isObject(v) || typeof v.custom_id !== 'string') {
      errors.push({ code: 'missing_required_parameter', message: "Missing required parameter: 'custom_id'.", param: 'custom_id', line });
      return;
    }
    if (ids.has(v.custom_id)) errors.push({ code: 'duplicate_custom_id', message: `The custom_id '${v.custom_id}' is used more than once.`, param: 'custom_id', line });
    ids.add(v.custom_id);
    if (v.method !== 'POST') errors.push({ code: 'invalid_value', message: "Invalid value for 'method': only POST is supported.", param: 'method', line });
    if (v.url !== b.endpoint) errors.push({ code: 'mismatched_endpoint', message: `The url '${String(v.url)}' does not match the batch endpoint '${b.endpoint}'.`, param: 'url', line });
    if (!isObject(v.body)) {
      errors.push({ code: 'missing_required_parameter', message: "Missing required parameter: 'body'.", param: 'body', line });
      return;
    }
    if (model === undefined) model = v.body.model;
    else if (v.body.model !== model) errors.push({ code: 'mismatched_model', message: 'The provided model does not match the other lines of the batch.', param: 'body.model', line });
    lines.push({ custom_id: v.custom_id, body: v.body });
  });
  if (!lines.length && !errors.length) errors.push({ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null });
  return errors.length ? errors : lines;
}

/** Answers every line with the endpoint's own handler; 2xx to the output file, the rest to the error file. */
function runLines(b: Batch, lines: Line[], ctx: RequestContext, endpoints: ReadonlyMap<string, Handler>): void {
  const handler = endpoints.get(b.endpoint)!;
  const ok: string[] = [];
  const failed: string[] = [];
  for (const l of lines) {
    const raw = Buffer.from(JSON.stringify(l.body));
    const reply = handler({ method: 'POST', path: b.endpoint, query: {}, headers: b.headers, body: l.body, raw, badJson: false, nextId: ctx.nextId });
    const requestId = `req_${ctx.nextId()}`;
    const status = reply.kind === 'json' ? reply.status : 400;
    const body: unknown = reply.kind === 'json' ? JSON.parse(reply.body) : { error: { message: 'Streaming is not supported in the Batch API.', type: 'invalid_request_error', param: 'stream', code: null } };
    const out = JSON.stringify({ id: `batch_req_${ctx.nextId()}`, custom_id: l.custom_id, response: { status_code: status, request_id: requestId, body }, error: null });
    (status >= 200 && status < 300 ? ok : failed).push(out);
  }
  b.counts = { total: lines.length, completed: ok.length, failed: failed.length };
  const name = (kind: string) => `${b.id}_${kind}.jsonl`;
  b.output_file_id = ok.length ? storeFile(ctx, name('output'), 'batch_output', Buffer.from(ok.join('\n') + '\n')).id : null;
  b.error_file_id = failed.length ? storeFile(ctx, name('error'), 'batch_output', Buffer.from(failed.join('\n') + '\n')).id : null;
}

/** One step of the batch's life, taken when it is looked at. */
function advance(b: Batch, ctx: RequestContext, endpoints: ReadonlyMap<string, Handler>): void {
  const now = nowSeconds();
  if (b.status === 'validating') {
    const checked = validateLines(b);
    if (checked.length && 'code' in checked[0]) {
      b.status = 'failed';
      b.errors = { object: 'list', data: checked as LineError[] };
      b.times.failed_at = now;
      return;
    }
    b.status = 'in_progress';
    b.times.in_progress_at = now;
    b.counts = { total: checked.length, completed: 0, failed: 0 };
  } else if (b.status === 'in_progress') {
    const checked = validateLines(b);
    if (checked.length && 'code' in checked[0]) {
      b.status = 'failed';
      b.errors = { object: 'list', data: checked as LineError[] };
      b.times.failed_at = now;
      return;
    }
    runLines(b, checked as Line[], ctx, endpoints);
    b.status = 'completed';
    b.times.finalizing_at = now;
    b.times.completed_at = now;
  } else if (b.status === 'cancelling') {
    b.status = 'cancelled';
    b.times.cancelled_at = now;
  }
}

function noBatch(id: string, error: ErrorReply): Reply {
  return error(404, `No batch found with id '${id}'.`, { param: null, code: null, type: 'invalid_request_error' });
}

function cancel(b: Batch, error: ErrorReply): Reply {
  if (b.status !== 'validating' && b.status !== 'in_progress') {
    return error(409, `Cannot cancel a batch with status '${b.status}'.`, { param: null, code: null, type: 'invalid_request_error' });
  }
  b.status = 'cancelling';
  b.times.cancelling_at = nowSeconds();
  return json(200, batchObject(b));
}

function listBatches(ctx: RequestContext): Reply {
  const { data, hasMore } = page([...batches.values()], ctx.query, 20, 'desc');
  return json(200, { object: 'list', data: data.map(batchObject), first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore });
}

// ---------------------------------------------------------------- routes

const BY_ID = /^\/v1\/(files|batches)\/([^/]+)(\/content|\/cancel)?$/;

/**
 * The route for a Files or Batch API path, or undefined for other paths. `endpoints` are the
 * mock's own handlers (by URL path) that batch lines are answered with.
 */
export function openaiFilesRoute(method: string, path: string, error: ErrorReply, endpoints: ReadonlyMap<string, Handler>): Route | undefined {
  if (path === '/v1/files') {
    if (method === 'POST') return { model: undefined, handle: (ctx) => upload(ctx, error) };
    if (method === 'GET') return { model: undefined, handle: listFiles };
    return undefined;
  }
  if (path === '/v1/batches') {
    if (method === 'POST') return { model: undefined, handle: (ctx) => createBatch(ctx, error, endpoints) };
    if (method === 'GET') return { model: undefined, handle: listBatches };
    return undefined;
  }
  const m = BY_ID.exec(path);
  if (!m) return undefined;
  const [, kind, rawId, suffix] = m;
  const id = decodeURIComponent(rawId);
  if (kind === 'files') {
    if (suffix === '/cancel') return undefined;
    return fileRoute(method, id, suffix === '/content', error);
  }
  if (suffix === '/content') return undefined;
  if (suffix === '/cancel') {
    if (method !== 'POST') return undefined;
    return { model: undefined, handle: () => (batches.has(id) ? cancel(batches.get(id)!, error) : noBatch(id, error)) };
  }
  if (method !== 'GET') return undefined;
  return {
    model: undefined,
    handle: (ctx) => {
      const b = batches.get(id);
      if (!b) return noBatch(id, error);
      advance(b, ctx, endpoints);
      return json(200, batchObject(b));
    },
  };
}
