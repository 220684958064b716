// The conversion webhook over HTTPS (the API server only calls webhooks over TLS): POST /convert
// with a ConversionReview, answered by review.ts. Every replica serves it, leader or not, since the
// API server needs it to read or write any object stored in the other version.
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { log } from '../../../proxy/src/contract.ts';
import { BadReview, review } from './review.ts';
import type { OperatorMetrics } from '../metrics.ts';

export const CONVERT_PATH = '/convert';
/** A list of thousands of resources arrives in one review. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface ConversionServerOptions {
  port: number;
  host: string;
  /** PEM files of the serving certificate and its key (the chart's Secret, mounted). */
  certFile: string;
  keyFile: string;
  metrics?: OperatorMetrics;
  /** Read the certificate files again this often and serve a renewed pair (0: never). */
  reloadMs?: number;
}

export function serveConversion(opts: ConversionServerOptions): Promise<Server> {
  const server = createServer({ cert: readFileSync(opts.certFile), key: readFileSync(opts.keyFile) }, (req, res) => {
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const path = (req.url ?? '/').split('?')[0];
    if (path !== CONVERT_PATH) return void send(404, { message: `not found: the conversion webhook is POST ${CONVERT_PATH}` });
    if (req.method !== 'POST') return void send(405, { message: `method ${req.method}: the conversion webhook takes POST` });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        send(413, { message: `the ConversionReview is larger than ${MAX_BODY_BYTES} bytes` });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        opts.metrics?.conversions.inc({ version: '', result: 'bad_request' });
        return void send(400, { message: 'the body is not JSON (a ConversionReview)' });
      }
      try {
        const answer = review(body);
        const version = String((body as { request: { desiredAPIVersion?: unknown } }).request.desiredAPIVersion ?? '').split('/')[1] ?? '';
        const ok = answer.response.result.status === 'Success';
        opts.metrics?.conversions.inc({ version, result: ok ? 'success' : 'failure' });
        if (!ok) log.warn('conversion refused', { message: (answer.response.result as { message: string }).message });
        send(200, answer);
      } catch (err) {
        if (!(err instanceof BadReview)) throw err;
        opts.metrics?.conversions.inc({ version: '', result: 'bad_request' });
        send(400, { message: err.message });
      }
    });
  });
  if (opts.reloadMs) {
    // A renewed Secret changes the mounted files; new connections get the new pair.
    let current = `${readFileSync(opts.certFile, 'utf8')}${readFileSync(opts.keyFile, 'utf8')}`;
    const timer = setInterval(() => {
      try {
        const cert = readFileSync(opts.certFile, 'utf8');
        const key = readFileSync(opts.keyFile, 'utf8');
        if (cert + key === current) return;
        server.setSecureContext({ cert, key });
        current = cert + key;
        log.info('conversion webhook certificate reloaded');
      } catch (err) {
        log.warn('cannot reload the conversion webhook certificate; serving the previous one', { error: (err as Error).message });
      }
    }, opts.reloadMs);
    timer.unref();
    server.on('close', () => clearInterval(timer));
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve(server));
  });
}
