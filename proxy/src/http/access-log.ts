// One line per request at `info` when its answer closes: who asked for what and how it went, with
// the request id and, on a failure, the error code the client was answered. Only the path (never
// the query string, which may carry a `key=`), no headers, no bodies: what an endpoint learns
// (provider, model, virtual key id) it records on `Exchange.access`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from '../log.ts';
import type { Exchange } from './exchange.ts';
import { answeredError } from './answer-errors.ts';

/** Probes polled every few seconds would drown the useful lines: they log at debug. */
const QUIET = new Set(['/health', '/ready', '/metrics']);
/** A path is client-chosen: a bounded excerpt is enough to find it. */
const MAX_PATH = 512;

/**
 * Reads are polled (the dashboard refreshes its pages, probes and scrapers ask every few seconds):
 * debug. Inference and management writes stay at info.
 */
export function accessLevel(method: string | undefined, path: string): 'debug' | 'info' {
  if (QUIET.has(path)) return 'debug';
  if (method !== 'GET' && method !== 'HEAD') return 'info';
  return path.startsWith('/api/') || path === '/api' || path === '/' || path === '/index.html' || path.startsWith('/assets/') ? 'debug' : 'info';
}

export function logAccess(req: IncomingMessage, res: ServerResponse, path: string, started: number, access: Exchange['access'] | undefined, requestId: string): void {
  const level = accessLevel(req.method, path);
  if (!log.enabled(level)) return;
  // An answer cut before it finished (client gone, stream reset) is reported as 499, as nginx does.
  const status = res.writableFinished ? res.statusCode : 499;
  const error = answeredError(res) ?? (status >= 400 ? (status === 499 ? 'client_closed' : `http_${status}`) : undefined);
  log[level]('request', {
    request_id: requestId,
    method: req.method,
    path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path,
    status,
    latency_ms: Math.round(performance.now() - started),
    ...(req.httpVersionMajor === 2 ? { http: '2' } : {}),
    provider: access?.provider,
    model: access?.model,
    vk: access?.vk,
    ...(error !== undefined && { error }),
  });
}
