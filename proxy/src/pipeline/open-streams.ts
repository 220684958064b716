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
  // A Map of the bodies (to their provider) rather than listeners on one AbortSignal: thousands of
  // held streams would each add a listener, and a Map's set/delete is the cheapest per-stream cost.
  readonly #open = new Map<Readable, string>();
  #cut = false;
  /**
   * One listener for every body (node calls it with the body as `this`): a held stream keeps no
   * closure of its own, nor the wrapper `once` would add (the body closes only once).
   */
  readonly #forget: (this: Readable) => void;

  constructor() {
    const open = this.#open;
    this.#forget = function (this: Readable) {
      open.delete(this);
    };
  }

  /** Tracks a body until it closes; a body opened after the cut is ended at once. */
  hold<B extends Readable>(body: B, provider: string): B {
    if (this.#cut) {
      end(body, provider);
      return body;
    }
    this.#open.set(body, provider);
    body.on('close', this.#forget);
    return body;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Ends every body still open, each with the shutdown error. */
  cutAll(): number {
    this.#cut = true;
    const n = this.#open.size;
    for (const [body, provider] of [...this.#open]) end(body, provider);
    this.#open.clear();
    return n;
  }
}

function end(body: Readable, provider: string): void {
  if (!body.destroyed) body.destroy(shutdownCut(provider));
}
