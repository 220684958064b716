// Tracing across requests: the SDK of the current settings, started when a snapshot first asks for
// it and replaced (the old one flushed and stopped) when a reload changes the settings, and the
// spans of requests in flight by request id, where an agent's turns and its tool calls find their
// parent. Built once per gateway (services.ts); nothing of the SDK is loaded while tracing is off.
import type { Snapshot } from '../config/snapshot.ts';
import { log } from '../log.ts';
import { sameSettings, tracingSettings, type TracingSettings } from './settings.ts';
import { startSdk, type Sdk } from './sdk.ts';
import type { OwnParent } from './tracer.ts';

/** A traced request in flight (stage.ts RequestTrace). */
export interface Live {
  /** What a span started inside its work now is the child of: the stage running, else the request's span. */
  current(): OwnParent;
}

/** One settings' tracer: what the stage and the hooks use. */
export interface Tracing {
  readonly settings: TracingSettings;
  readonly sdk: Sdk;
  /** The span each traced request in flight runs now (its stage's, else its own), by the context's id. */
  readonly live: Map<string, Live>;
}

export class TracingService {
  readonly #env: NodeJS.ProcessEnv;
  readonly #bySnapshot = new WeakMap<Snapshot, Tracing | null>();
  readonly #live = new Map<string, Live>();
  #current: Tracing | undefined;
  #failed: string | undefined;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.#env = env;
  }

  /** The tracer a snapshot runs with; undefined: tracing is off for it. */
  for(snapshot: Snapshot): Tracing | undefined {
    const known = this.#bySnapshot.get(snapshot);
    if (known !== undefined) return known ?? undefined;
    const t = this.#start(snapshot);
    this.#bySnapshot.set(snapshot, t ?? null);
    return t;
  }

  /** The tracer in use now, whatever snapshot (hooks outside a request: MCP calls). */
  get current(): Tracing | undefined {
    return this.#current;
  }

  /** Exports every span ended so far. */
  async flush(): Promise<void> {
    await this.#current?.sdk.flush();
  }

  async close(): Promise<void> {
    const t = this.#current;
    this.#current = undefined;
    await t?.sdk.shutdown().catch((err: unknown) => log.warn('tracing: the last spans could not be exported', { error: (err as Error).message }));
  }

  #start(snapshot: Snapshot): Tracing | undefined {
    let settings: TracingSettings | undefined;
    try {
      settings = tracingSettings(snapshot.config, this.#env);
    } catch (err) {
      // Checked at start (gateway.ts) and by the config check: only reaches here for a reload the
      // check let through, which then runs without tracing and says why once.
      const message = (err as Error).message;
      if (this.#failed !== message) log.error('tracing is off: its settings are invalid', { error: message });
      this.#failed = message;
      settings = undefined;
    }
    const previous = this.#current;
    if (previous && sameSettings(previous.settings, settings)) return previous;
    let next: Tracing | undefined;
    if (settings) {
      try {
        next = { settings, sdk: startSdk(settings), live: this.#live };
      } catch (err) {
        log.error('tracing could not start: requests run untraced', { error: (err as Error).message });
      }
    }
    this.#current = next;
    if (previous) void previous.sdk.shutdown().catch(() => undefined);
    return next;
  }
}
