// An upstream answer that is not JSON (audio bytes, a plain-text transcript) as a bytes outcome:
// relayed chunk by chunk with the upstream's content type, never held whole (respond writes each
// chunk as it arrives and reads the next only once the client has drained the last).
import type { UpstreamAnswer } from './upstream-call.ts';
import { transportError } from './upstream-call.ts';
import type { Outcome } from './outcome.ts';
import { relayed } from '../upstream/relay-memory.ts';
import { REQUEST_ID_HEADER, UPSTREAM_REQUEST_ID_HEADER } from '../request-id.ts';

/** Upstream headers worth keeping on a relayed body. */
const KEPT = ['content-type', 'content-length', 'content-encoding', 'content-disposition'];

export function relayHeaders(upstream: UpstreamAnswer['headers'], fallbackType: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT) {
    const v = upstream[name];
    if (typeof v === 'string') out[name] = v;
  }
  // `x-request-id` is the gateway's own (server.ts); the provider's goes on under its own name.
  const upstreamId = upstream[REQUEST_ID_HEADER];
  if (typeof upstreamId === 'string') out[UPSTREAM_REQUEST_ID_HEADER] = upstreamId;
  out['content-type'] ??= fallbackType;
  return out;
}

export function bodyOutcome(answer: UpstreamAnswer, provider: string, signal: AbortSignal, fallbackType: string): Outcome {
  return { kind: 'bytes', status: 200, headers: relayHeaders(answer.headers, fallbackType), body: upstreamBytes(answer.body, provider, signal) };
}

/**
 * The body's chunks; a failure mid-way is the provider's (a transport error), as a GatewayError.
 * Each chunk is counted once passed on, so spent chunks are collected as the relay goes (relay-memory.ts).
 */
export async function* upstreamBytes(body: AsyncIterable<Uint8Array>, provider: string, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) {
      yield chunk;
      relayed(chunk.byteLength);
    }
  } catch (err) {
    throw transportError(provider, err, signal);
  }
}
