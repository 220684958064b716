// Runs a request through its snapshot's stages. The stage list is built once per snapshot:
// caller stages, then (once the request is read) plugins placed before the builtins, the builtin
// request stages, plugins placed after them. `after` hooks run in reverse order once the answer is
// complete: at once for a JSON answer, when the stream or body has been consumed otherwise.
import type { Snapshot } from '../config/snapshot.ts';
import { GatewayError } from '../unified/errors.ts';
import { log } from '../log.ts';
import type { RequestContext } from './context.ts';
import { lazyItems, outcomeStatus, toGatewayError, type Outcome, type TextPump } from './outcome.ts';
import type { BuiltinStages, PluginEntry, PluginRegistry, Stage } from './stage.ts';

/** Executes an accepted request. */
export type Execute = (ctx: RequestContext) => Promise<Outcome>;
/** Reads the request (sets ctx.scope and ctx.requestType) and says how to execute it; throws on bad input. */
export type Accept = (ctx: RequestContext) => Promise<Execute>;

interface StageList {
  caller: readonly Stage[];
  request: readonly Stage[];
  afters: readonly Stage[];
  taps: readonly Stage[];
}


export class Pipeline {
  readonly #lists = new WeakMap<Snapshot, StageList>();
  readonly #builtins: (snapshot: Snapshot) => BuiltinStages;
  readonly #plugins: PluginRegistry;

  constructor(builtins: (snapshot: Snapshot) => BuiltinStages, plugins: PluginRegistry = new Map()) {
    this.#builtins = builtins;
    this.#plugins = plugins;
  }

  /** The snapshot's stage list, built on first use. */
  stages(snapshot: Snapshot): StageList {
    let list = this.#lists.get(snapshot);
    if (!list) {
      list = this.#build(snapshot);
      this.#lists.set(snapshot, list);
    }
    return list;
  }

  /**
   * `readFirst`: the request is read before the caller stages, for routes that must take a whole
   * body anyway (inference JSON or a multipart form): refusing an HTTP/1.1 upload half-way closes
   * the connection and the client sees a reset instead of its 401. Other routes (passthrough,
   * files, model lists) identify the caller first, so an anonymous one learns nothing more.
   */
  async run(ctx: RequestContext, accept: Accept, readFirst = false): Promise<Outcome> {
    const list = this.stages(ctx.snapshot);
    ctx.taps = list.taps;
    let outcome: Outcome;
    try {
      if (readFirst) {
        const execute = await accept(ctx);
        let early = runBefore(list.caller, ctx);
        if (early instanceof Promise) early = await early;
        if (!early) {
          early = runBefore(list.request, ctx);
          if (early instanceof Promise) early = await early;
        }
        outcome = early ?? (await execute(ctx));
      } else {
        let early = runBefore(list.caller, ctx);
        if (early instanceof Promise) early = await early;
        outcome = early ?? (await accepted(list, ctx, accept));
      }
    } catch (err) {
      outcome = failure(ctx, err);
    }
    return settle(list, ctx, outcome);
  }

  #build(snapshot: Snapshot): StageList {
    const builtins = this.#builtins(snapshot);
    const entries = ((snapshot.config as { plugins?: PluginEntry[] }).plugins ?? [])
      .filter((p) => p.enabled && this.#plugins.has(p.name))
      .sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
    const make = (p: PluginEntry): Stage[] => {
      try {
        return [this.#plugins.get(p.name)!(p.config, snapshot)];
      } catch (err) {
        log.error('plugin could not start: it is skipped', { plugin: p.name, error: (err as Error).message });
        return [];
      }
    };
    const pre = entries.filter((p) => p.placement === 'pre_builtin').flatMap(make);
    const post = entries.filter((p) => p.placement !== 'pre_builtin').flatMap(make);
    const request = [...pre, ...builtins.request, ...post];
    const all = [...builtins.caller, ...request];
    return {
      caller: builtins.caller.filter((s) => s.before),
      request: request.filter((s) => s.before),
      afters: all.filter((s) => s.after).reverse(),
      taps: all.filter((s) => s.tap),
    };
  }
}

async function accepted(list: StageList, ctx: RequestContext, accept: Accept): Promise<Outcome> {
  const execute = await accept(ctx);
  let early = runBefore(list.request, ctx);
  if (early instanceof Promise) early = await early;
  return early ?? (await execute(ctx));
}

type Before = Outcome | undefined | Promise<Outcome | undefined>;

/**
 * The `before` hooks from `from` on, until one answers. Synchronous while the hooks are (identify,
 * plan without complexity routing, limits without counters to ask): a promise only from the first
 * hook that returns one, and the caller awaits only a promise, so a plain request makes none here.
 */
function runBefore(stages: readonly Stage[], ctx: RequestContext, from = 0): Before {
  for (let i = from; i < stages.length; i++) {
    const r = stages[i].before!(ctx);
    if (r instanceof Promise) return r.then((o) => o ?? runBefore(stages, ctx, i + 1));
    if (r) return r;
  }
  return undefined;
}

function failure(ctx: RequestContext, err: unknown): Outcome {
  // Not an error the gateway made: a bug. The client gets a 500 with the error object, the log the stack.
  if (!(err instanceof GatewayError)) log.error('unhandled error in request', { error: (err as Error)?.stack ?? String(err) });
  const error = toGatewayError(err);
  return { kind: 'error', error, ...(ctx.errorExtra && { extra: ctx.errorExtra }) };
}

/** Answers with a body still to come run their `after` hooks once it has been read (or abandoned). */
function settle(list: StageList, ctx: RequestContext, outcome: Outcome): Outcome {
  if (outcome.kind === 'stream') {
    const { pump, ...rest } = outcome;
    if (!pump) return { ...rest, items: observed(outcome.items, list, ctx, outcome) };
    // Pushed: the items are read only by an in-process caller, so they are made only then.
    return { ...rest, items: lazyItems(() => observed(outcome.items, list, ctx, outcome)), pump: observedPump(pump, list, ctx, outcome) };
  }
  if (outcome.kind === 'bytes') return { ...outcome, body: observed(list.taps.length ? tapped(outcome.body, list.taps, ctx) : outcome.body, list, ctx, outcome) };
  finish(list, ctx, outcome);
  return outcome;
}

async function* observed<T>(inner: AsyncIterable<T>, list: StageList, ctx: RequestContext, outcome: Outcome): AsyncGenerator<T> {
  let failed: Outcome | undefined;
  try {
    yield* inner;
  } catch (err) {
    failed = failure(ctx, err);
    throw (failed as { error: GatewayError }).error;
  } finally {
    finish(list, ctx, failed ?? outcome);
  }
}

/** The pushed form of a stream: the after hooks run once it settled, as observed() runs them for the items. */
function observedPump(pump: TextPump, list: StageList, ctx: RequestContext, outcome: Outcome): TextPump {
  // A promise chain, not an async function: a held stream would keep the function's suspended
  // frame for its whole life, where the chain keeps two small closures.
  const failed = (err: unknown): GatewayError => {
    const f = failure(ctx, err);
    finish(list, ctx, f);
    return (f as { error: GatewayError }).error;
  };
  return (sink) => {
    let pumping: Promise<void>;
    try {
      pumping = pump(sink);
    } catch (err) {
      return Promise.reject(failed(err));
    }
    return pumping.then(
      () => finish(list, ctx, outcome),
      (err: unknown) => {
        throw failed(err);
      },
    );
  };
}

/** A relayed body's chunks shown to the taps as they go out (stream items are tapped in stream.ts). */
async function* tapped(body: AsyncIterable<Uint8Array>, taps: readonly Stage[], ctx: RequestContext): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    for (let i = 0; i < taps.length; i++) taps[i].tap!(ctx, chunk);
    yield chunk;
  }
}

function finish(list: StageList, ctx: RequestContext, result: Outcome): void {
  ctx.status = outcomeStatus(result);
  if (result.kind === 'error') {
    ctx.error = result.error;
    if (result.error.provider) ctx.provider = result.error.provider;
  }
  for (const stage of list.afters) {
    try {
      stage.after!(ctx, result);
    } catch (err) {
      log.error('a stage failed after the answer', { stage: stage.name, error: (err as Error).message });
    }
  }
}
