// One line per request at `info` when its answer closes: who asked for what and how it went. Only
// the path (never the query string, which may carry a `key=`), no headers, no bodies: what an
// endpoint learns (provider, model, virtual key id) it records on `Exchange.access`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { log } from '../log.ts';
import type { Exchange } from './exchange.ts';

/** Probes polled every few seconds would drown the useful lines: they log at debug. */
const QUIET = new Set(['/health', '/metrics']);
/** A path is client-chosen: a bounded excerpt is enough to find it. */
const MAX_PATH = 512;

export function logAccess(req: IncomingMessage, res: ServerResponse, path: string, started: number, access?: Exchange['access']): void {
  const level = QUIET.has(path) ? 'debug' : 'info';
  if (!log.enabled(level)) return;
  log[level]('request', {
    method: req.method,
    path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path,
    // An answer cut before it finished (client gone, stream reset) is reported as 499, as nginx does.
    status: res.writableFinished ? res.statusCode : 499,
    latency_ms: Math.round(performance.now() - started),
    ...(req.httpVersionMajor === 2 ? { http: '2' } : {}),
    provider: access?.provider,
    model: access?.model,
    vk: access?.vk,
  });
}
