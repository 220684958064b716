// Reading a non-streaming upstream answer whole, with a bound: a provider (or whatever answers at
// its address) sending hundreds of megabytes must not make the gateway hold them. Past the bound
// the body is dropped, which closes the upstream connection, and a 502 names the limit.
import type { Dispatcher } from 'undici';
import { invalidUpstreamResponse, upstreamTooLarge } from '../unified/errors.ts';

export const RESPONSE_LIMIT_SETTING = 'max_response_body_size_mb';

export async function readBounded(body: Dispatcher.ResponseData['body'], headers: Dispatcher.ResponseData['headers'], limit: number, provider: string): Promise<string> {
  const declared = Number(headers['content-length']);
  if (declared > limit) {
    body.destroy();
    throw upstreamTooLarge(provider, 'response body', limit, RESPONSE_LIMIT_SETTING);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw upstreamTooLarge(provider, 'response body', limit, RESPONSE_LIMIT_SETTING);
    }
    chunks.push(chunk);
  }
  return (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8');
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
