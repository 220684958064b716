// What the upstream client (undici) is handed as the abort signal of an HTTP request's upstream
// call: an emitter fired when the client leaves, together with the exchange's AbortController.
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

/** An AbortController whose signal has its emitter (server.ts: one per request). */
export function controllerWithEmitter(): AbortController {
  const controller = new AbortController();
  (controller.signal as { [GONE]?: ClientGone })[GONE] = new ClientGone();
  return controller;
}

/** Aborts the controller, then fires its signal's emitter (if it has one) with the same reason. */
export function abortWithEmitter(controller: AbortController): void {
  controller.abort();
  (controller.signal as { [GONE]?: ClientGone })[GONE]?.fire(controller.signal.reason);
}

/** What to hand undici for `signal`: its linked emitter when it has one (an HTTP request's own signal), else itself. */
export function upstreamSignal(signal: AbortSignal): AbortSignal | ClientGone {
  return (signal as { [GONE]?: ClientGone })[GONE] ?? signal;
}
