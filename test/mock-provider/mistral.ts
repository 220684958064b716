// Mistral wire format under /mistral: document OCR (POST /v1/ocr) and the Files API it reads
// uploaded documents from (POST /v1/files with purpose `ocr`, GET /v1/files/{id}); every other
// path is Mistral's OpenAI-compatible API, answered by the openai module. Errors are Mistral's:
// `{object: "error", message, type, param, code}`, and a body that fails validation is a 422 whose
// message carries FastAPI-style `detail` entries naming the field (`loc`).
//
// OCR is deterministic. A PDF data URL (or an uploaded PDF) has one page per `/Type /Page` object;
// page k's markdown is the text of the k-th content stream's `(...) Tj` strings. A PNG (data URL)
// is one page with its pixel size as dimensions and one embedded image. An http(s) URL cannot be
// fetched by the mock: it is a 3-page document whose pages name the URL, except a URL containing
// `unreachable`, which fails as Mistral does when it cannot download the document.

import { isNonexistentModel } from './models.ts';
import { json } from './reply.ts';
import { isObject } from './text.ts';
import { openai } from './openai.ts';
import { isForm, UploadedFile } from './multipart.ts';
import type { ErrorExtra, FormatModule, Reply, RequestContext } from './types.ts';

const PARAMS = new Set([
  'model', 'document', 'pages', 'include_image_base64', 'image_limit', 'image_min_size', 'bbox_annotation_format',
  'document_annotation_format', 'document_annotation_prompt', 'table_format', 'extract_header', 'extract_footer',
  'include_blocks', 'confidence_scores_granularity', 'id',
]);

export function mistralError(status: number, message = 'Internal server error', extra: ErrorExtra = {}): Reply {
  return json(status, { object: 'error', message, type: extra.type ?? 'invalid_request_error', param: extra.param ?? null, code: extra.code ?? null }, extra.headers);
}

/** FastAPI's validation error, as Mistral's API answers it (422). */
function invalid(loc: string[], msg: string, type = 'value_error'): Reply {
  return json(422, { object: 'error', message: { detail: [{ type, loc: ['body', ...loc], msg }] }, type: 'invalid_request_message_error', param: null, code: null });
}

interface Doc {
  /** Markdown of each page. */
  pages: string[];
  bytes: number | null;
  dimensions: { dpi: number; height: number; width: number };
  /** An image document: its bytes as base64, shown as the page's one image. */
  image?: { base64: string; width: number; height: number };
}

interface Upload {
  id: string;
  filename: string;
  data: Buffer;
  created_at: number;
}
const uploads = new Map<string, Upload>();

const A4 = { dpi: 200, height: 2339, width: 1654 };

/** The text of each page of a simple PDF: the `(...) Tj` strings of its content streams, in order. */
export function pdfPages(pdf: Buffer): string[] {
  const text = pdf.toString('latin1');
  const count = (text.match(/\/Type\s*\/Page(?![s\w])/g) ?? []).length;
  const streams = [...text.matchAll(/stream\r?\n([\s\S]*?)endstream/g)].map((m) => [...m[1].matchAll(/\(((?:\\.|[^\\)])*)\)\s*Tj/g)].map((t) => t[1].replace(/\\(.)/g, '$1')).join(' '));
  return Array.from({ length: count }, (_, i) => streams[i] ?? '');
}

function pngSize(png: Buffer): { width: number; height: number } | undefined {
  if (png.length < 24 || png.readUInt32BE(0) !== 0x89504e47) return undefined;
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function fromBytes(data: Buffer, mime: string, at: string[]): Doc | Reply {
  if (mime === 'application/pdf' || data.subarray(0, 5).toString('latin1') === '%PDF-') {
    const pages = pdfPages(data);
    if (pages.length === 0) return mistralError(400, 'Invalid document: the PDF has no pages.', { code: '3310' });
    return { pages: pages.map((t, i) => `# Page ${i + 1}\n\n${t}`), bytes: data.length, dimensions: A4 };
  }
  const size = pngSize(data);
  if (!size) return invalid(at, `Unsupported document type '${mime}': expected a PDF or a PNG image`);
  return { pages: ['![img-0.png](img-0.png)'], bytes: data.length, dimensions: { dpi: 72, ...size }, image: { base64: `data:image/png;base64,${data.toString('base64')}`, ...size } };
}

function fromUrl(url: string, at: string[]): Doc | Reply {
  const data = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(url);
  if (data) return fromBytes(Buffer.from(data[3], data[2] ? 'base64' : 'utf8'), data[1], at);
  if (!/^https?:\/\//.test(url)) return invalid(at, 'URL scheme should be http, https or data');
  if (url.includes('unreachable')) return mistralError(400, `Failed to download document from ${url}`, { code: '3201' });
  return { pages: [1, 2, 3].map((n) => `# ${url}\n\nPage ${n} of the document.`), bytes: null, dimensions: A4 };
}

function documentOf(doc: unknown): Doc | Reply {
  if (!isObject(doc)) return invalid(['document'], 'Field required', 'missing');
  if (doc.type === 'document_url' || (doc.type === undefined && 'document_url' in doc)) {
    if (typeof doc.document_url !== 'string') return invalid(['document', 'document_url'], 'Input should be a valid string', 'string_type');
    return fromUrl(doc.document_url, ['document', 'document_url']);
  }
  if (doc.type === 'image_url' || (doc.type === undefined && 'image_url' in doc)) {
    const u = isObject(doc.image_url) ? doc.image_url.url : doc.image_url;
    if (typeof u !== 'string') return invalid(['document', 'image_url'], 'Input should be a valid string', 'string_type');
    return fromUrl(u, ['document', 'image_url']);
  }
  if (doc.type === 'file' || (doc.type === undefined && 'file_id' in doc)) {
    if (typeof doc.file_id !== 'string') return invalid(['document', 'file_id'], 'Input should be a valid string', 'string_type');
    const f = uploads.get(doc.file_id);
    if (!f) return mistralError(404, `File ${doc.file_id} not found`, { code: '1500', type: 'not_found' });
    return fromBytes(f.data, f.filename.endsWith('.pdf') ? 'application/pdf' : 'image/png', ['document', 'file_id']);
  }
  return invalid(['document', 'type'], "Input tag should be 'document_url', 'image_url' or 'file'", 'union_tag_invalid');
}

/** The 0-based page indices selected: a list, or a string of indices and ranges (`0-2,5`). */
function selection(pages: unknown, count: number): number[] | Reply {
  if (pages === undefined || pages === null) return Array.from({ length: count }, (_, i) => i);
  let list: number[] = [];
  if (Array.isArray(pages) && pages.every((p) => Number.isInteger(p) && p >= 0)) list = pages as number[];
  else if (typeof pages === 'string' && /^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/.test(pages)) {
    for (const part of pages.split(',')) {
      const [a, b] = part.split('-').map((x) => Number(x.trim()));
      for (let i = a; i <= (b ?? a); i++) list.push(i);
    }
  } else return invalid(['pages'], 'Input should be a valid list of page indices or a string like "0-2,5"');
  const out = [...new Set(list)].sort((a, b) => a - b);
  const beyond = out.find((i) => i >= count);
  if (beyond !== undefined) return mistralError(400, `Page ${beyond} is out of range: the document has ${count} pages (indices from 0).`, { code: '3300' });
  return out;
}

export function ocr(ctx: RequestContext): Reply {
  const body = ctx.body;
  if (ctx.badJson || !isObject(body)) return invalid([], 'Input should be a valid dictionary', 'model_attributes_type');
  for (const k of Object.keys(body)) if (!PARAMS.has(k)) return invalid([k], 'Extra inputs are not permitted', 'extra_forbidden');
  if (typeof body.model !== 'string') return invalid(['model'], 'Field required', 'missing');
  if (isNonexistentModel(body.model)) return mistralError(400, `Invalid model: ${body.model}`, { code: '1500' });
  const doc = documentOf(body.document);
  if ('kind' in doc) return doc;
  const chosen = selection(body.pages, doc.pages.length);
  if (!Array.isArray(chosen)) return chosen;
  const withImages = body.include_image_base64 === true;
  const limit = typeof body.image_limit === 'number' ? body.image_limit : Infinity;
  const pages = chosen.map((i) => ({
    index: i,
    markdown: doc.pages[i],
    images: doc.image && limit > 0
      ? [{ id: 'img-0.png', top_left_x: 0, top_left_y: 0, bottom_right_x: doc.image.width, bottom_right_y: doc.image.height, image_base64: withImages ? doc.image.base64 : null }]
      : [],
    tables: [],
    hyperlinks: [],
    header: null,
    footer: null,
    dimensions: doc.dimensions,
  }));
  return json(200, { pages, model: body.model, document_annotation: null, usage_info: { pages_processed: pages.length, doc_size_bytes: doc.bytes } });
}

function upload(ctx: RequestContext): Reply {
  const form = ctx.body;
  if (!isForm(form)) return invalid(['file'], 'Field required', 'missing');
  const file = form.file;
  if (!(file instanceof UploadedFile)) return invalid(['file'], 'Field required', 'missing');
  const purpose = typeof form.purpose === 'string' ? form.purpose : 'fine-tune';
  if (!['ocr', 'fine-tune', 'batch'].includes(purpose)) return invalid(['purpose'], "Input should be 'fine-tune', 'batch' or 'ocr'", 'enum');
  const f: Upload = { id: crypto.randomUUID(), filename: file.filename, data: file.data, created_at: Math.floor(Date.now() / 1000) };
  uploads.set(f.id, f);
  return json(200, { id: f.id, object: 'file', bytes: f.data.length, created_at: f.created_at, filename: f.filename, purpose, sample_type: 'ocr_input', num_lines: null, source: 'upload' });
}

export const mistral: FormatModule = {
  format: 'mistral',
  route(method, path, body) {
    if (method === 'POST' && path === '/v1/ocr') return { model: isObject(body) && typeof body.model === 'string' ? body.model : undefined, handle: ocr };
    if (method === 'POST' && path === '/v1/files') return { model: undefined, handle: upload };
    return openai.route(method, path, body);
  },
  authenticate(ctx) {
    const auth = ctx.headers.authorization;
    const key = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1] : undefined;
    if (!key || key.startsWith('invalid')) return json(401, { message: 'Unauthorized', request_id: 'mock' });
    return undefined;
  },
  error: mistralError,
  notFound: (method, path) => mistralError(404, `Not Found: ${method} ${path}`, { type: 'not_found' }),
};
