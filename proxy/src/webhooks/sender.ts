// One HTTP attempt to a receiver: a POST through an undici Agent whose connections resolve and check
// the receiver's address at connect time (upstream/egress.ts), bounded end to end by the
// endpoint's attempt timeout, no redirect followed (a 3xx is a failed attempt), and at most
// MAX_READ bytes of the answer read (a snippet is kept for the history).
import { Agent, request } from 'undici';
import { receiverLookup, refusedReceiverHost } from '../upstream/egress.ts';

const MAX_READ = 64 * 1024;
const SNIPPET = 1024;

export interface AttemptResult {
  statusCode?: number;
  error?: string;
  /** The start of the answer body (text), for the delivery history. */
  body?: string;
  durationMs: number;
}

export class Sender {
  readonly #public: Agent;
  readonly #private: Agent;

  constructor() {
    const opts = { keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 };
    this.#public = new Agent({ ...opts, connect: { lookup: receiverLookup(false) } });
    this.#private = new Agent({ ...opts, connect: { lookup: receiverLookup(true) } });
  }

  async send(url: string, headers: Record<string, string>, body: string, timeoutMs: number, allowPrivate: boolean): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { error: 'invalid receiver URL', durationMs: 0 };
    }
    // A literal IP in the URL is never looked up, so it is checked here (names are checked on connect).
    const refused = refusedReceiverHost(u.hostname, allowPrivate) ?? (u.protocol === 'https:' || (allowPrivate && u.protocol === 'http:') ? undefined : `scheme ${u.protocol} is not allowed`);
    if (refused) return { error: `refused: ${refused}`, durationMs: 0 };
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(u, { method: 'POST', headers, body, signal, dispatcher: allowPrivate ? this.#private : this.#public });
      let read = 0;
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (read < SNIPPET) chunks.push(chunk);
          read += chunk.length;
          if (read >= MAX_READ) break;
        }
      } finally {
        if (read >= MAX_READ) res.body.destroy();
      }
      const text = Buffer.concat(chunks).subarray(0, SNIPPET).toString('utf8');
      return { statusCode: res.statusCode, ...(text && { body: text }), durationMs: elapsed() };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      const reason = signal.aborted ? `timed out after ${timeoutMs} ms` : (e.cause?.message ?? e.message ?? String(err));
      return { error: reason, durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#public.close(), this.#private.close()]);
  }
}
