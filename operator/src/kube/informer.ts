// A list-watch cache of one resource that keeps itself alive. client-node's ListWatch relists on
// 410 Gone (an expired resourceVersion) by itself, but on any other error (API server down, 5xx,
// connection reset) it reports once and stops: this wrapper restarts it with exponential backoff.
import { setTimeout as sleep } from 'node:timers/promises';
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { backoffDelay, type BackoffOptions } from '../queue.ts';
import type { KubeClient } from './client.ts';

export interface InformerOptions {
  /** List/watch path, e.g. `/api/v1/namespaces/ns/secrets`. */
  path: string;
  labelSelector?: string;
  /** e.g. `metadata.name=x` (one object, so RBAC can grant it by name) or `type!=helm.sh/release.v1`. */
  fieldSelector?: string;
  backoff?: BackoffOptions;
  onEvent: (type: 'add' | 'update' | 'delete', obj: KubernetesObject) => void;
  /** Each (re)list completed: the cache now reflects the server. */
  onSynced?: () => void;
  onError?: (err: unknown, retryInMs: number) => void;
}

// Short on purpose: a retry against an API server that is away costs one refused connection, and a
// long cap is what delays recovery after it comes back (the next attempt may be that far away: half
// the cap on average, on the path of the first change after an API-server restart).
const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, maxMs: 500 };
/**
 * ListWatch waits before re-opening a watch that ended cleanly, doubling up to 30 s and resetting
 * only on an event, so a quiet resource could wait that long after an API server restart. Capped.
 */
export const MAX_RECONNECT_DELAY_MS = 250;
export const cappedDelay = (ms: number): Promise<void> => sleep(Math.min(ms, MAX_RECONNECT_DELAY_MS));

type WatchArgs = Parameters<Watch['watch']>;

/**
 * ListWatch.stop() aborts only a watch already connected: one still connecting when stop() is
 * called would live on. This Watch remembers its connections so stop() closes every one of them,
 * including those that finish connecting afterwards.
 */
class ClosableWatch extends Watch {
  readonly #live = new Set<AbortController>();
  #closed = false;

  override async watch(path: WatchArgs[0], query: WatchArgs[1], callback: WatchArgs[2], done: WatchArgs[3]): Promise<AbortController> {
    // done may run before super.watch returns (a refused connection): then there is nothing to track.
    const state: { finished: boolean; controller?: AbortController } = { finished: false };
    const onDone: WatchArgs[3] = (err) => {
      state.finished = true;
      if (state.controller) this.#live.delete(state.controller);
      done(err);
    };
    const controller = await super.watch(path, query, callback, onDone);
    state.controller = controller;
    if (this.#closed) controller.abort();
    else if (!state.finished) this.#live.add(controller);
    return controller;
  }

  close(): void {
    this.#closed = true;
    for (const c of this.#live) c.abort();
    this.#live.clear();
  }

  open(): void {
    this.#closed = false;
  }
}

export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly path: string;
  readonly #lw: ListWatch<T>;
  readonly #watch: ClosableWatch;
  readonly #opts: InformerOptions;
  #synced = false;
  #stopped = false;
  #failures = 0;
  #restart: NodeJS.Timeout | undefined;
  #syncWaiters: (() => void)[] = [];

  constructor(kc: KubeConfig, client: KubeClient, opts: InformerOptions) {
    this.path = opts.path;
    this.#opts = opts;
    const list = async (): Promise<KubernetesListObject<T>> => {
      const result = await client.request<KubernetesListObject<T>>('GET', opts.path, { query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector } });
      // ListWatch fills its cache right after this promise settles (microtasks): report after that.
      setImmediate(() => this.#markSynced());
      return result;
    };
    this.#watch = new ClosableWatch(kc);
    this.#lw = new ListWatch<T>(opts.path, this.#watch, list, false, opts.labelSelector, opts.fieldSelector, { delayFn: cappedDelay });
    // An event or a list means the connection is healthy again: the next failure backs off from the start.
    for (const type of ['add', 'update', 'delete'] as const) {
      this.#lw.on(type, (o) => {
        this.#failures = 0;
        opts.onEvent(type, o);
      });
    }
    this.#lw.on('error', (err: unknown) => this.#scheduleRestart(err));
  }

  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    this.#stopped = false;
    this.#watch.open();
    void this.#lw.start();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#restart);
    void this.#lw.stop();
    this.#watch.close();
  }

  /** Resolves once the first list has filled the cache. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  list(namespace?: string): readonly T[] {
    return this.#lw.list(namespace);
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#lw.get(name, namespace);
  }

  #markSynced(): void {
    this.#synced = true;
    this.#failures = 0;
    for (const w of this.#syncWaiters.splice(0)) w();
    this.#opts.onSynced?.();
  }

  #scheduleRestart(err: unknown): void {
    if (this.#stopped) return;
    const delay = backoffDelay(this.#failures++, this.#opts.backoff ?? DEFAULT_BACKOFF);
    this.#opts.onError?.(err, delay);
    clearTimeout(this.#restart);
    this.#restart = setTimeout(() => {
      if (!this.#stopped) void this.#lw.start();
    }, delay);
    this.#restart.unref();
  }
}
