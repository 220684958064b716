// multipart/form-data: reading a client's form (busboy) into its parts, in order and in memory
// within the request size limit (upstream/form-encode.ts writes parts back out for an upstream).
import type { IncomingMessage } from 'node:http';
import type busboy from 'busboy';
import { lazy } from '../lazy.ts';
import { GatewayError, invalidRequest } from '../unified/errors.ts';

// The parts' shape is the unified form (unified/form.ts), which providers use without importing http.
import type { FormPart } from '../unified/form.ts';

const parser = lazy<typeof busboy>('busboy');

export { isFile, type FormField, type FormFile, type FormPart } from '../unified/form.ts';

export function isMultipart(req: IncomingMessage): boolean {
  return /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
}

/**
 * The form's parts in arrival order; a body over `maxBytes` is a 413, a malformed one a 400.
 * `preservePath` keeps a file part's filename as sent (`dir/file`) instead of its last segment:
 * for uploads whose filenames are paths (a skill directory), checked by whoever reads them.
 */
export function readForm(req: IncomingMessage, maxBytes: number, opts: { preservePath?: boolean } = {}): Promise<FormPart[]> {
  return new Promise((resolve, reject) => {
    if (!isMultipart(req)) {
      req.resume();
      return reject(invalidRequest('the request must be multipart/form-data'));
    }
    if (Number(req.headers['content-length']) > maxBytes) {
      req.resume();
      return reject(tooLarge(maxBytes));
    }
    let bb: busboy.Busboy;
    try {
      bb = parser()({ headers: req.headers, limits: { fileSize: maxBytes }, ...(opts.preservePath && { preservePath: true }) });
    } catch (err) {
      req.resume();
      return reject(invalidRequest(`malformed multipart/form-data request: ${(err as Error).message}`));
    }
    // Files finish asynchronously: each takes its slot on arrival so the order is kept.
    const parts: (FormPart | undefined)[] = [];
    let pending = 0;
    let closed = false;
    let failed = false;
    let size = 0;
    const done = () => {
      if (!failed && closed && pending === 0) resolve(parts.filter((p): p is FormPart => p !== undefined));
    };
    const fail = (e: GatewayError) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume();
      reject(e);
    };
    bb.on('field', (name, value) => {
      size += value.length;
      parts.push({ name, value });
    });
    bb.on('file', (name, stream, info) => {
      const slot = parts.push(undefined) - 1;
      pending++;
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) {
          stream.resume();
          fail(tooLarge(maxBytes));
          return;
        }
        chunks.push(c);
      });
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      stream.on('end', () => {
        parts[slot] = { name, filename: info.filename ?? name, contentType: info.mimeType || 'application/octet-stream', data: Buffer.concat(chunks) };
        pending--;
        done();
      });
    });
    bb.on('error', (err: Error) => fail(invalidRequest(`malformed multipart/form-data request: ${err.message}`)));
    bb.on('close', () => {
      closed = true;
      done();
    });
    req.on('error', (err) => fail(new GatewayError(400, `request body could not be read: ${err.message}`)));
    req.pipe(bb);
  });
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, `request body exceeds the limit of ${maxBytes} bytes`, { code: 'request_too_large' });
}
