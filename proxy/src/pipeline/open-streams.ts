// Upstream bodies being relayed to clients, so that the end of the shutdown grace ends them the way an
// upstream failure would: the client's stream gets its format's in-band error event and the request's
// log record is written (status 503, gateway_shutdown), instead of a connection cut with neither.
import type { Readable } from 'node:stream';
import { GatewayError } from '../unified/errors.ts';

/** The error a stream still open at the end of the shutdown grace ends with. */
export function shutdownCut(provider: string): GatewayError {
  return new GatewayError(503, 'the gateway is shutting down: the stream was ended at the end of its shutdown grace period; retry the request', {
    type: 'gateway_shutdown',
    provider,
  });
}

export class OpenStreams {
  // A Set of callbacks rather than listeners on one AbortSignal: thousands of held streams would
  // each add a listener, and a Set's add/delete is the cheapest per-stream cost.
  readonly #open = new Set<() => void>();
  #cut = false;

  /** Tracks a body until it closes; a body opened after the cut is ended at once. */
  hold<B extends Readable>(body: B, provider: string): B {
    const end = () => {
      if (!body.destroyed) body.destroy(shutdownCut(provider));
    };
    if (this.#cut) {
      end();
      return body;
    }
    this.#open.add(end);
    body.once('close', () => this.#open.delete(end));
    return body;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Ends every body still open, each with the shutdown error. */
  cutAll(): number {
    this.#cut = true;
    const n = this.#open.size;
    for (const end of [...this.#open]) end();
    this.#open.clear();
    return n;
  }
}
