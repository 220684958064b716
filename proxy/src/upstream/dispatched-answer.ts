// An upstream request sent with undici's dispatch() rather than its request(). request() gives every
// answer a Readable (with an async resource, its events and ticks, and a promise around the
// callback), and most answers are then read whole. Here the answer's chunks are kept as they come
// and read whole without a stream. The Readable (undici's own, the one request() gives) is made
// only when something asks for `body` (a byte relay, an error's prefix). From then on it gets the
// chunks as request()'s would, with the same back-pressure and abort. Streams keep request()
// (pipeline/upstream-call.ts): they need the Readable at once.
import { createRequire } from 'node:module';
import type { Dispatcher, errors as UndiciErrors } from 'undici';
import type undiciReadableModule from 'undici/lib/api/readable.js';

// undici's own files, required as upstream/pools.ts requires its Pool: an import of the package's
// index would load fetch, WebSocket and the rest it also holds (about 2 MB more heap at idle).
const load = createRequire(import.meta.url);
const undiciReadable = load('undici/lib/api/readable.js') as typeof undiciReadableModule;
const { RequestAbortedError } = load('undici/lib/core/errors.js') as typeof UndiciErrors;

type BodyReadable = Dispatcher.ResponseData['body'];

/** Kept before a reader comes; past this the upstream connection is paused (request()'s highWaterMark). */
const HIGH_WATER = 64 * 1024;

/** undici's dispatch controller (the handler API of undici 7 and later). */
interface Controller {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

/** What cancels the request: an AbortSignal, or an emitter with on/removeListener('abort') (pipeline/client-gone.ts). */
type Signal = AbortSignal | { on(event: 'abort', l: () => void): unknown; removeListener(event: 'abort', l: () => void): unknown; reason?: unknown };

interface WholeRead {
  readonly limit: number;
  readonly tooLarge: () => Error;
  readonly resolve: (text: string) => void;
  readonly reject: (err: unknown) => void;
}

const noop = (): void => {};

/** An answer's head as it came; its body read whole (readText) or as undici's Readable (`body`). */
export class DispatchedAnswer {
  readonly statusCode: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly trailers: Record<string, string> = {};
  readonly #request: DispatchedRequest;
  readonly #controller: Controller;
  #chunks: Buffer[] = [];
  #size = 0;
  #ended = false;
  #paused = false;
  #error: unknown = undefined;
  #whole: WholeRead | undefined;
  /** A whole read was asked for: the chunks are its. */
  #read = false;
  #body: BodyReadable | undefined;

  constructor(request: DispatchedRequest, controller: Controller, statusCode: number, headers: Dispatcher.ResponseData['headers']) {
    this.#request = request;
    this.#controller = controller;
    this.statusCode = statusCode;
    this.headers = headers;
  }

  /** `body` was asked for. */
  get madeBody(): boolean {
    return this.#body !== undefined;
  }

  /** The chunks go to the Readable: it was made before any whole read. */
  get streaming(): boolean {
    return this.#body !== undefined && !this.#read;
  }

  /** The body as undici's Readable, made on the first read of this (as request() gives it). */
  get body(): BodyReadable {
    if (this.#body) return this.#body;
    const c = this.#controller;
    const length = this.headers['content-length'];
    const body = new undiciReadable.Readable({
      resume: () => c.resume(),
      abort: (reason: Error) => c.abort(reason),
      contentType: this.headers['content-type'],
      contentLength: this.#request.method !== 'HEAD' && length ? Number(length) : null,
    });
    this.#body = body;
    this.#request.bodyMade(body);
    if (this.#error !== undefined) {
      body.on('error', noop).destroy(this.#error as Error);
      return body;
    }
    // Once a whole read was asked for, the chunks are that read's: the body is what is left, nothing.
    if (this.#read) {
      body.push(null);
      return body;
    }
    for (const chunk of this.#chunks) body.push(chunk);
    this.#chunks = [];
    if (this.#ended) body.push(null);
    return body;
  }

  /**
   * The whole body as UTF-8 text, once it ended (a rejection past `limit` bytes, with the upstream
   * connection dropped); undefined once `body` was asked for (read that instead).
   */
  readText(limit: number, tooLarge: () => Error): Promise<string> | undefined {
    if (this.#body || this.#read) return undefined;
    this.#read = true;
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (Number(this.headers['content-length']) > limit || this.#size > limit) return Promise.reject(this.#fail(tooLarge()));
    if (this.#ended) return Promise.resolve(this.#joined());
    const read = new Promise<string>((resolve, reject) => {
      this.#whole = { limit, tooLarge, resolve, reject };
    });
    // After the read is set: resuming may hand over the chunks waiting in the parser at once.
    if (this.#paused) {
      this.#paused = false;
      this.#controller.resume();
    }
    return read;
  }

  /** @internal the handler's: a chunk of the body. */
  data(chunk: Buffer): void {
    if (this.#error !== undefined) return;
    if (this.streaming) {
      if (!this.#body!.push(chunk)) this.#controller.pause();
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    const whole = this.#whole;
    if (whole) {
      if (this.#size > whole.limit) this.#fail(whole.tooLarge());
    } else if (this.#size > HIGH_WATER && !this.#paused) {
      // Nobody reads yet: the provider waits rather than the gateway holding its answer.
      this.#paused = true;
      this.#controller.pause();
    }
  }

  /** @internal the handler's: the body ended. */
  end(trailers: Record<string, string | string[]> | undefined): void {
    if (trailers) for (const key of Object.keys(trailers)) Object.defineProperty(this.trailers, key, { value: trailers[key], enumerable: true, configurable: true, writable: true });
    this.#ended = true;
    if (this.streaming) {
      this.#body!.push(null);
      return;
    }
    const whole = this.#whole;
    if (whole && this.#error === undefined) {
      this.#whole = undefined;
      whole.resolve(this.#joined());
    }
  }

  /** @internal the handler's: the exchange failed (or was aborted) after the head came. */
  error(err: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = err;
    this.#chunks = [];
    this.#body?.on('error', noop).destroy(err as Error);
    const whole = this.#whole;
    this.#whole = undefined;
    whole?.reject(err);
  }

  /** The client left: the Readable destroyed as request()'s is, or the exchange aborted. */
  abort(reason: Error): void {
    if (this.streaming) this.#body!.on('error', noop).destroy(reason);
    else this.#controller.abort(reason);
  }

  #fail(err: Error): Error {
    this.error(err);
    if (!this.#ended) this.#controller.abort(err);
    return err;
  }

  #joined(): string {
    const chunks = this.#chunks;
    this.#chunks = [];
    return (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.#size)).toString('utf8');
  }
}

/** One request's dispatch handler (undici's handler API): the answer's head settles the promise. */
class DispatchedRequest {
  readonly method: string;
  #resolve: (answer: DispatchedAnswer) => void;
  #reject: (err: unknown) => void;
  #controller: Controller | undefined;
  #answer: DispatchedAnswer | undefined;
  #reason: Error | undefined;
  #signal: Signal | undefined;
  #onAbort: (() => void) | undefined;
  #settled = false;

  constructor(method: string, signal: Signal | undefined, resolve: (answer: DispatchedAnswer) => void, reject: (err: unknown) => void) {
    this.method = method;
    this.#resolve = resolve;
    this.#reject = reject;
    if (!signal) return;
    if ('aborted' in signal && signal.aborted) {
      this.#reason = (signal.reason as Error | undefined) ?? new RequestAbortedError();
      return;
    }
    this.#signal = signal;
    this.#onAbort = () => {
      this.#reason = (signal.reason as Error | undefined) ?? new RequestAbortedError();
      if (this.#answer) this.#answer.abort(this.#reason);
      else this.#controller?.abort(this.#reason);
    };
    if ('addEventListener' in signal) signal.addEventListener('abort', this.#onAbort, { once: true });
    else signal.on('abort', this.#onAbort);
  }

  onRequestStart(controller: Controller): void {
    if (this.#reason) {
      controller.abort(this.#reason);
      return;
    }
    this.#controller = controller;
  }

  onResponseStart(controller: Controller, statusCode: number, headers: Dispatcher.ResponseData['headers']): void {
    // 1xx (100 Continue, 103 Early Hints): the answer is still to come.
    if (statusCode < 200 || this.#settled) return;
    this.#settled = true;
    this.#answer = new DispatchedAnswer(this, controller, statusCode, headers);
    this.#resolve(this.#answer);
  }

  onResponseData(_controller: Controller, chunk: Buffer): void {
    this.#answer?.data(chunk);
  }

  onResponseEnd(_controller: Controller, trailers: Record<string, string | string[]> | undefined): void {
    this.#answer?.end(trailers);
    // With the chunks going to a Readable, its 'close' lets go of the signal (bodyMade): a read of it may still be under way.
    if (!this.#answer?.streaming) this.#release();
  }

  onResponseError(_controller: Controller | null, err: unknown): void {
    if (!this.#settled) {
      this.#settled = true;
      this.#reject(err);
    } else this.#answer?.error(err);
    this.#release();
  }

  /** The Readable was made: the signal is let go of once it closes (as request()'s). */
  bodyMade(body: BodyReadable): void {
    if (this.#onAbort) body.on('close', () => this.#release());
  }

  #release(): void {
    const signal = this.#signal;
    const onAbort = this.#onAbort;
    if (!signal || !onAbort) return;
    this.#signal = undefined;
    this.#onAbort = undefined;
    if ('removeEventListener' in signal) signal.removeEventListener('abort', onAbort);
    else signal.removeListener('abort', onAbort);
  }
}

/**
 * `pool.request(opts)` through dispatch: the answer once its head came (any status), its body read
 * with readText() or `body`. A transport failure before the head is the rejection, as request()'s.
 */
export function dispatchRequest(pool: Dispatcher, opts: Dispatcher.RequestOptions): Promise<DispatchedAnswer> {
  return new Promise((resolve, reject) => {
    pool.dispatch(opts, new DispatchedRequest(opts.method, opts.signal as Signal | undefined, resolve, reject) as unknown as Dispatcher.DispatchHandler);
  });
}
