// The dashboard's files: `/` and `/index.html` (the page, revalidated on every visit) and
// `/assets/<content-hashed name>` (cached for a year). Nothing is read until the first request for
// it, so a gateway nobody browses pays nothing; each file is then held in memory with its brotli and
// gzip forms, compressed once, off the event loop. Without management auth the page answers only
// loopback clients addressing the gateway by a local name, as /api does.
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { extname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkLocalOnly } from '../api/guards.ts';
import { sendError } from '../http/respond.ts';
import { GatewayError } from '../unified/errors.ts';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
/** Already compressed formats: compressing them again wastes memory for nothing. */
const PRECOMPRESSED = new Set(['.png', '.woff2', '.ico']);
/** Below this size the headers outweigh what compression saves. */
const MIN_COMPRESS_BYTES = 512;
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

const PAGE_CACHE = 'no-cache';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/** A Host header safe to repeat inside the CSP (no spaces, quotes or semicolons that would add a directive). */
const SAFE_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Only this origin: scripts and styles from /assets, no inline script, no framing, no form posting
 * elsewhere. connect-src names ws:// and wss:// of this host explicitly for browsers where 'self'
 * does not cover WebSocket schemes.
 */
export function contentSecurityPolicy(host: string | undefined): string {
  const ws = host && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${ws}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function securityHeaders(res: ServerResponse, req: IncomingMessage, html: boolean): void {
  if (html) res.setHeader('content-security-policy', contentSecurityPolicy(req.headers.host));
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
}

interface Variant {
  body: Buffer;
  etag: string;
}

interface StaticFile {
  type: string;
  identity: Variant;
  br?: Variant;
  gzip?: Variant;
}

async function loadFile(path: string): Promise<StaticFile> {
  const body = await readFile(path);
  const ext = extname(path).toLowerCase();
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  const file: StaticFile = { type: TYPES[ext] ?? 'application/octet-stream', identity: { body, etag: `"${tag}"` } };
  if (body.length >= MIN_COMPRESS_BYTES && !PRECOMPRESSED.has(ext)) {
    const [br, gz] = await Promise.all([
      brotli(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      gzipped(body, { level: 9 }),
    ]);
    // Each encoding is its own representation, with its own strong ETag.
    if (br.length < body.length) file.br = { body: br, etag: `"${tag}-br"` };
    if (gz.length < body.length) file.gzip = { body: gz, etag: `"${tag}-gz"` };
  }
  return file;
}

/** The codings a client accepts (`br;q=0` refuses one); `*` stands for any not named. */
export function acceptedEncodings(header: string | string[] | undefined): { br: boolean; gzip: boolean } {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const q = new Map<string, number>();
  for (const part of value.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    const qp = params.find((p) => p.startsWith('q='));
    const weight = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const ok = (coding: string): boolean => (q.get(coding) ?? q.get('*') ?? 0) > 0;
  return { br: ok('br'), gzip: ok('gzip') || ok('x-gzip') };
}

function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/** Where the built dashboard is: SKYBRIDGE_DASHBOARD_DIR, else dashboard/dist of this checkout (run from source or from dist/). */
export function locateDashboard(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SKYBRIDGE_DASHBOARD_DIR) return resolve(env.SKYBRIDGE_DASHBOARD_DIR);
  for (const rel of ['../../../dashboard/dist', '../../../../dashboard/dist']) {
    const dir = new URL(rel, import.meta.url).pathname;
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return undefined;
}

export interface PagesOptions {
  /** True when management auth is on: the page then answers any client (it holds no data; /api asks for credentials). */
  authEnabled: () => boolean;
  /** The built dashboard's folder; default locateDashboard(). */
  dir?: string;
}

export type PagesHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** True for the paths the dashboard serves (after the route table missed: inference never gets here). */
export function isDashboardPath(path: string): boolean {
  return path === '/' || path === '/index.html' || path.startsWith('/assets/');
}

export function dashboardPages(opts: PagesOptions): PagesHandler {
  let dir: string | undefined | null = opts.dir ?? null;
  const files = new Map<string, Promise<StaticFile>>();
  let assetNames: Promise<Set<string>> | undefined;

  const root = (): string | undefined => {
    if (dir === null) dir = locateDashboard();
    return dir;
  };
  /** The names under assets/, listed once: a request for any other name is a 404 without touching the disk. */
  const listed = (base: string): Promise<Set<string>> => {
    assetNames ??= readdir(join(base, 'assets')).then(
      (names) => new Set(names.filter((n) => ASSET_NAME.test(n))),
      () => new Set<string>(),
    );
    return assetNames;
  };
  const file = (key: string, path: string): Promise<StaticFile> => {
    let p = files.get(key);
    if (!p) {
      p = loadFile(path);
      files.set(key, p);
      // A failed read is not remembered: the next request tries again.
      p.catch(() => files.delete(key));
    }
    return p;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const base = root();
    if (!base) throw new GatewayError(404, 'the dashboard is not built: run `node scripts/build-dashboard.ts` (or set SKYBRIDGE_DASHBOARD_DIR)', { type: 'not_found_error', code: 'dashboard_not_built' });
    const page = path === '/' || path === '/index.html';
    let f: StaticFile;
    if (page) {
      f = await file('index.html', join(base, 'index.html')).catch(() => {
        throw new GatewayError(404, 'the dashboard is not built: run `node scripts/build-dashboard.ts` (or set SKYBRIDGE_DASHBOARD_DIR)', { type: 'not_found_error', code: 'dashboard_not_built' });
      });
    } else {
      const name = path.slice('/assets/'.length);
      if (!ASSET_NAME.test(name) || !(await listed(base)).has(name)) throw new GatewayError(404, `no dashboard asset '${name.slice(0, 200)}'`, { type: 'not_found_error' });
      f = await file(`assets/${name}`, join(base, 'assets', name));
    }
    const accepts = acceptedEncodings(req.headers['accept-encoding']);
    const [variant, coding] = f.br && accepts.br ? [f.br, 'br'] : f.gzip && accepts.gzip ? [f.gzip, 'gzip'] : [f.identity, undefined];
    securityHeaders(res, req, page);
    res.setHeader('cache-control', page ? PAGE_CACHE : ASSET_CACHE);
    res.setHeader('etag', variant.etag);
    if (f.br || f.gzip) res.setHeader('vary', 'accept-encoding');
    if (notModified(req, variant.etag)) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.setHeader('content-type', f.type);
    if (coding) res.setHeader('content-encoding', coding);
    res.setHeader('content-length', variant.body.length);
    res.writeHead(200);
    res.end(req.method === 'HEAD' ? undefined : variant.body);
  };

  return (req, res) => {
    // A GET carries no body worth reading; drained so the connection stays usable.
    req.resume();
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    let path = q < 0 ? raw : raw.slice(0, q);
    while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        throw new GatewayError(405, `method ${req.method} is not allowed on ${path}`, { type: 'method_not_allowed' });
      }
      if (!opts.authEnabled()) checkLocalOnly(req);
    } catch (err) {
      sendError(res, err);
      return;
    }
    serve(req, res, path).catch((err: unknown) => sendError(res, err));
  };
}
