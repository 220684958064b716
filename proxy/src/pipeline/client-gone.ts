// What the upstream client (undici) is handed as the abort signal of an HTTP request's upstream
// call: an emitter fired when the client leaves, together with the request's AbortSignal (made
// only when read).
// undici takes an EventEmitter-shaped signal as well as an AbortSignal; adding and removing a
// listener on an AbortSignal goes through EventTarget (about 2-3 µs per upstream call), here it
// is an array. It has no `aborted` member on purpose: undici would take it for an AbortSignal.

const GONE = Symbol('clientGone');

type Listener = () => void;

export class ClientGone {
  /** Why the request was aborted (the AbortSignal's reason), once it was. */
  reason: unknown = undefined;
  #fired = false;
  #listeners: Listener[] = [];

  on(event: string, listener: Listener): this {
    if (event === 'abort') this.#listeners.push(listener);
    return this;
  }

  once(event: string, listener: Listener): this {
    return this.on(event, listener);
  }

  removeListener(event: string, listener: Listener): this {
    if (event !== 'abort') return this;
    const i = this.#listeners.indexOf(listener);
    if (i >= 0) this.#listeners.splice(i, 1);
    return this;
  }

  off(event: string, listener: Listener): this {
    return this.removeListener(event, listener);
  }

  /** Each listener once, as an AbortSignal's 'abort' with `once` would call it. */
  fire(reason: unknown): void {
    if (this.#fired) return;
    this.#fired = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const l of listeners) l();
  }
}

/**
 * One HTTP request's abort (server.ts: one per request): the emitter the upstream call hands undici,
 * and an AbortController made only when something reads `signal`. A plain request never does: its
 * upstream call listens on the emitter, and the controller with its EventTarget was 0.7% of the
 * gateway's busy time in a profile. Its signal carries the emitter, so code handed the signal still gets it for undici.
 */
export class RequestAbort {
  readonly gone = new ClientGone();
  #controller: AbortController | undefined;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      (this.#controller.signal as { [GONE]?: ClientGone })[GONE] = this.gone;
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Aborts the signal (made now if nobody asked for it, for its reason), then fires the emitter with the same reason. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const signal = this.signal;
    this.#controller!.abort();
    this.gone.fire(signal.reason);
  }
}

/** What an upstream call is cancelled by: an AbortSignal, or an HTTP request's abort (its signal unmade until read). */
export type AbortSource = AbortSignal | RequestAbort;

/** The AbortSignal of `source` (an HTTP request's is made on this first read). */
export function signalOf(source: AbortSource): AbortSignal {
  return source instanceof RequestAbort ? source.signal : source;
}

/** What to hand undici for `signal`: an HTTP request's emitter (without making its signal), else the signal itself. */
export function upstreamSignal(source: AbortSource): AbortSignal | ClientGone {
  if (source instanceof RequestAbort) return source.gone;
  return (source as { [GONE]?: ClientGone })[GONE] ?? source;
}
