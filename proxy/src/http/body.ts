// Reading a request body with a size cap, and turning it into a validated request object.
import type { IncomingMessage } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import { GatewayError, invalidRequest } from '../unified/errors.ts';
import { validator } from '../schema/validate.ts';
import { MAX_JSON_DEPTH, depthOf, unsafeJson } from '../schema/names.ts';

// Plain 'data'/'end' listeners: cheaper than async iteration on the hot path. Over the limit, the
// rest is not read: the 413 closes the connection (respond.ts) instead of draining it. Once the read
// settled, the listeners stay on and answer nothing (`once` wrappers and removals cost per request).
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > maxBytes) return reject(tooLarge(maxBytes));
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        settled = true;
        req.off('data', onData);
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.on('error', (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    });
    // Cut before the end (client gone, or the body timeout reset the stream): settle, so nothing waits forever.
    // 'close' comes for every request: the flag comes first, as an error built per request (stack
    // trace included) for an already settled promise cost ~5% of the CPU per request.
    req.on('close', () => {
      if (settled) return;
      settled = true;
      reject(new GatewayError(499, 'the client closed the request before sending its whole body'));
    });
  });
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, `request body exceeds the limit of ${maxBytes} bytes`, { code: 'request_too_large' });
}

export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw invalidRequest('request body is empty; a JSON object is required');
  const text = buf.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (mayNestDeeperThan(text, MAX_JSON_DEPTH) && depthOf(value) > MAX_JSON_DEPTH) {
    throw invalidRequest(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (mayHoldProtoKey(text)) refuseProtoMembers(value);
  return value;
}

/**
 * The rule for every JSON value a caller sends (an inference body at any depth, tool-call
 * arguments, an in-process input; /api and configuration documents apply the same check): a
 * `__proto__` member is refused with a 400 naming it. JSON.parse keeps it as an own field, but the
 * first copy by assignment turns it into the prototype of the copy, whose fields validation and
 * translators then read while the cache key, the log and `raw_request` (own fields only) do not
 * see them. `constructor` and `prototype` are ordinary fields: nothing treats them specially on a
 * copy, and the gateway reads caller-named keys as own fields only.
 */
export function refuseProtoMembers(value: unknown, root = ''): void {
  const problem = unsafeJson(value, root);
  if (problem) throw new GatewayError(400, `invalid request body: ${problem.path}: ${problem.message}`, { param: problem.path, code: 'invalid_field' });
}

/**
 * Cheap pre-check on the body text: a `__proto__` key is there literally, or with one of its
 * letters written as a \u escape (`\u005f` is `_`; `p`, `r`, `o`, `t` are \u006x / \u007x).
 * Non-ASCII escapes (what many JSON encoders write for every accented letter) do not match.
 */
function mayHoldProtoKey(text: string): boolean {
  return text.includes('__proto__') || /\\u00[5-7]/.test(text);
}

/**
 * Cheap pre-check: nesting needs an opening bracket per level, and most bodies have few of them.
 * Counted on the decoded text: a string's indexOf is a builtin call, a Buffer's a trip to C++ each.
 */
function mayNestDeeperThan(text: string, depth: number): boolean {
  let count = 0;
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++count > depth) return true;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++count > depth) return true;
  return false;
}

/** Validates a parsed body; the first problem becomes a 400 naming the field, all of them listed. */
export function validated<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const check = validator(schema);
  return (body) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('request body must be a JSON object');
    const result = check(body);
    if (!Array.isArray(result)) return result;
    const [first] = result;
    const all = result.map((e) => `${e.path} ${e.message}`).join('; ');
    throw invalidRequest(`invalid request: ${all}`, first.path);
  };
}
