// Relays an upstream answer that is not JSON (audio bytes, a plain-text transcript) to the client
// chunk by chunk, with the upstream's content type, never holding the whole body: each chunk is
// written as it arrives and the next is read only once the client has drained the last.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { UpstreamAnswer } from './upstream-call.ts';
import { transportError } from './upstream-call.ts';

/** Upstream headers worth keeping on a relayed body. */
const KEPT = ['content-type', 'content-length', 'content-encoding', 'content-disposition', 'x-request-id'];

export function relayHeaders(upstream: UpstreamAnswer['headers'], fallbackType: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT) {
    const v = upstream[name];
    if (typeof v === 'string') out[name] = v;
  }
  out['content-type'] ??= fallbackType;
  return out;
}

export async function relayBody(
  res: ServerResponse,
  answer: UpstreamAnswer,
  opts: { provider: string; signal: AbortSignal; fallbackType: string },
): Promise<void> {
  res.writeHead(200, relayHeaders(answer.headers, opts.fallbackType));
  try {
    for await (const chunk of answer.body) {
      if (!res.write(chunk) && !res.destroyed) await once(res, 'drain', { signal: opts.signal });
    }
    res.end();
  } catch (err) {
    // Headers are out: the only honest signal left is a cut connection (the client sees a short body).
    res.destroy();
    throw transportError(opts.provider, err, opts.signal);
  }
}
