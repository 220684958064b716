// Reading a non-streaming upstream answer whole, with a bound: a provider (or whatever answers at
// its address) sending hundreds of megabytes must not make the gateway hold them. Past the bound
// the body is dropped, which closes the upstream connection, and a 502 names the limit.
import type { Dispatcher } from 'undici';
import { invalidUpstreamResponse, upstreamTooLarge } from '../unified/errors.ts';

export const RESPONSE_LIMIT_SETTING = 'max_response_body_size_mb';

/**
 * The whole body as text, or a 502 past `limit`. Read with 'data'/'end' listeners rather than
 * `for await`: a stream's async iterator (its promises and end-of-stream watch) cost more than the
 * read itself for the small answers most calls get. The listeners stay on once the read settled
 * (the body is done with; each answers nothing more): taking four off undici's body cost more than
 * the read (a tick per 'data' listener removed), and `once` wrappers an allocation each.
 */
export function readBounded(body: Dispatcher.ResponseData['body'], headers: Dispatcher.ResponseData['headers'], limit: number, provider: string): Promise<string> {
  const declared = Number(headers['content-length']);
  if (declared > limit) {
    body.destroy();
    return Promise.reject(upstreamTooLarge(provider, 'response body', limit, RESPONSE_LIMIT_SETTING));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        body.destroy();
        reject(upstreamTooLarge(provider, 'response body', limit, RESPONSE_LIMIT_SETTING));
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => {
      if (settled) return;
      settled = true;
      resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8'));
    });
    body.on('error', (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    });
    // Closed before its end without an error (destroyed by someone else): as the iterator would say it.
    // 'close' follows every end too: the flag comes first, so no error is built for a settled read.
    body.on('close', () => {
      if (settled) return;
      settled = true;
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

/** Up to `limit` bytes of a body the gateway only needs the start of (an error message); the rest is dropped. */
export async function readPrefix(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        body.destroy();
        break;
      }
    }
  } catch {
    // A broken error body still yields what arrived.
  }
  return Buffer.concat(chunks, size).subarray(0, limit).toString('utf8');
}

export function parseAnswerJson(text: string, provider: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalidUpstreamResponse(provider, 'the body is not JSON');
  }
}
