// One request's state as it passes the stages: what was asked (set before the stages run), what the
// stages decided (caller, targets, limits), and what happened (who answered, status, usage). The
// same object whether the request came over HTTP or from in-process code (`execute`). Fields a
// stage owns are declared in the stage's module (see ContextServices), not here.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Snapshot } from '../config/snapshot.ts';
import type { ProviderRuntime } from '../providers/runtime.ts';
import type { Usage } from '../unified/chat.ts';
import type { GatewayError } from '../unified/errors.ts';
import type { Target } from './target.ts';
import type { ErrorExtra } from './outcome.ts';
import type { TurnTotals } from './turns.ts';
import type { OpenStreams } from './open-streams.ts';
import type { OperationRow } from '../unified/operations.ts';
import { newRequestId } from '../request-id.ts';
import { signalOf, type AbortSource } from './client-gone.ts';

/**
 * What the stages and executors use that outlives a request, built once (services.ts). Each module
 * that brings a service declares its member itself, by module augmentation:
 *   declare module '../pipeline/context.ts' { interface ContextServices { counters: CounterStore } }
 * so the pipeline names no stage, and a new stage is a new file.
 */
export interface ContextServices {
  /**
   * Sets the fields the stages own on a new context (declared by them the same way, on
   * RequestContext) to their values before any stage ran; services.ts composes it from the built-in
   * stages. Every context gets them in this one order, so all contexts keep one object shape. Plain
   * assignments, not a copy from a template object: that measured about 40% slower per context.
   */
  readonly initContext?: (ctx: RequestContext) => void;
  /** Upstream bodies being relayed: the end of the shutdown grace ends them with an in-band error. */
  readonly openStreams?: OpenStreams;
}

/**
 * What the request spends provider keys on, which decides how governance plans it: a model (with
 * fallbacks; routing rules apply), one named provider (passthrough, files, batches), or a list of
 * providers (the model lists).
 */
export type Scope =
  | { kind: 'model'; model: string; fallbacks: readonly string[] | undefined; body: unknown }
  | { kind: 'provider'; provider: ProviderRuntime }
  | { kind: 'providers'; providers: ProviderRuntime[] }
  | { kind: 'none' };

/** The HTTP side of a request, when it came over HTTP: where its body is read from. */
export interface HttpSource {
  req: IncomingMessage;
  /** Set on the JSON body before validation, overriding it (a route naming the model in its path). */
  bodyFields?: Readonly<Record<string, unknown>>;
}

/** A stage watching streamed items (the `tap` of pipeline/stage.ts). */
export interface StreamTap {
  readonly name: string;
  tap?(ctx: RequestContext, item: unknown): void;
}

/**
 * Who calls, when the code running the request knows it already (an async job's run: its submitter,
 * admitted at submit). The identify stage declares who the principal is (module augmentation) and
 * reads it instead of the headers; the limits stage reads `admitted`.
 */
export interface KnownCaller {
  /** Admitted against its rate limits and budgets already: not admitted again (its usage is still charged). */
  readonly admitted: boolean;
}

const NO_QUERY = () => new URLSearchParams();
const NONE: Scope = { kind: 'none' };
const NO_PARAMS: readonly string[] = [];

export interface ContextInit {
  services: ContextServices;
  snapshot: Snapshot;
  /** Metrics `operation` label (chat, embeddings, passthrough, files, ...). */
  operation: string;
  /** The operations-table row it runs, when it came by one (see RequestContext.op). */
  op?: OperationRow;
  headers?: IncomingHttpHeaders;
  query?: () => URLSearchParams;
  /** An AbortSignal, or an HTTP request's abort (its signal made only when read); none: one made when read. */
  signal?: AbortSource;
  started?: number;
  http?: HttpSource;
  /** The request body, for in-process callers (HTTP requests read theirs from `http`). */
  input?: unknown;
  /** The access log record to fill in (HTTP). */
  access?: RequestContext['access'];
  /** Captures of a pattern route (e.g. the model of `/genai/v1beta/models/{model}:generateContent`). */
  params?: readonly string[];
  /** The request this one runs on behalf of (an agent loop's step): its log record names it. */
  parentRequestId?: string;
  /** The client-facing request id (request-id.ts); a new one when not given. */
  requestId?: string;
  /** An agent turn: its usage and cost go to the agent request's totals; its own record is a child, never counted. */
  turnOf?: TurnTotals;
  /** The caller, when already identified (in-process callers only: an HTTP request is identified from its headers). */
  caller?: KnownCaller;
  /** An async job's run: an operation whose answer is a provider job (a video) waits for the job to finish. */
  untilDone?: boolean;
}

/**
 * What an in-process caller (execute(), an agent's turn) says besides the operation and its body:
 * declared once here, where the context takes it, so the callers' request types cannot drift apart.
 */
export interface InProcessOrigin {
  /** Headers as a client would send them (a virtual key, routing headers). */
  headers?: IncomingHttpHeaders;
  /** Aborts the upstream call (and a stream being read). */
  signal?: AbortSignal;
  /** The request this one runs for (an agent loop's step): named in its log record. */
  parentRequestId?: string;
  /** The request id the work answers to (an agent turn: its agent request's; an async job: its submit's); else a new one. */
  requestId?: string;
  /** An agent turn: its usage and cost are summed into these, and it is not logged or counted on its own. */
  turnOf?: TurnTotals;
  /** Who calls, identified and perhaps admitted already (an async job's submitter, an agent request's caller): `headers` then carry no key. */
  caller?: KnownCaller;
  /** An async job's run: a provider job (a video) is waited for, so the answer is the finished job. */
  untilDone?: boolean;
}

export class RequestContext {
  readonly services: ContextServices;
  readonly snapshot: Snapshot;
  readonly operation: string;
  /**
   * The operations-table row the request runs, when it came by one (a table path or execute()):
   * undefined for the native front doors, passthrough, files, batches and model lists.
   */
  readonly op: OperationRow | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly query: () => URLSearchParams;
  /** performance.now() at arrival. */
  readonly started: number;
  readonly http: HttpSource | undefined;
  readonly input: unknown;
  /** What the access log line names besides method, path and status. */
  readonly access: { provider?: string; model?: string; vk?: string };
  readonly params: readonly string[];
  readonly parentRequestId: string | undefined;
  /**
   * The client-facing request id: the `x-request-id` answered (HTTP), shared by an agent request's
   * turns and carried by an async job into its run. Not unique (a client may reuse its own): the
   * log record's key is `id`.
   */
  readonly requestId: string;
  readonly turnOf: TurnTotals | undefined;
  readonly caller: KnownCaller | undefined;
  readonly untilDone: boolean;
  #id: string | undefined;
  #abort: AbortSource | undefined;

  /** The request as read and validated (the unified request of an inference route). */
  request: unknown = undefined;
  /** Set once the request is read (before the request stages run). */
  scope: Scope = NONE;
  /** The request type (chat_completion, passthrough, ...): error answers and logs name it. */
  requestType = '';
  errorExtra: ErrorExtra | undefined = undefined;

  // Decided by the stages: the caller, its limits, ... are declared by the stages that own them.
  /** Model scope: primary target first, then fallbacks. */
  targets: Target[] = [];

  // What happened.
  /** The provider and model that answered, or the last tried ('none' before any). */
  provider = 'none';
  /** undefined until known; '' for a call that names no model (files, batches). */
  model: string | undefined = undefined;
  status = 200;
  /** The last usage the answer reported. */
  usage: Usage | undefined = undefined;
  /** Index of the target that answered (0: primary). */
  fallbackIndex = 0;
  /** Upstream attempts retried on the way to the answer. */
  retries = 0;
  /** Id of the provider key that answered (never its value). */
  keyId: string | undefined = undefined;
  /** performance.now() when the first streamed item went out. */
  firstChunkAt: number | undefined = undefined;
  error: GatewayError | undefined = undefined;
  /** Stages that watch each streamed item (from the snapshot's stage list). */
  taps: readonly StreamTap[] = [];
  /** An agent request: what its turns used (its log record carries these sums). */
  turns: TurnTotals | undefined = undefined;
  /**
   * Members a stage adds to the extra_fields of the answer's last item (the response cache's
   * cache_debug): a stream's final item carries them, in full.
   */
  finalExtra: Record<string, unknown> | undefined = undefined;

  constructor(init: ContextInit) {
    this.services = init.services;
    this.snapshot = init.snapshot;
    this.operation = init.operation;
    this.op = init.op;
    this.headers = init.headers ?? {};
    this.query = init.query ?? NO_QUERY;
    this.#abort = init.signal;
    this.started = init.started ?? performance.now();
    this.http = init.http;
    this.input = init.input;
    this.access = init.access ?? {};
    this.params = init.params ?? NO_PARAMS;
    this.parentRequestId = init.parentRequestId;
    this.requestId = init.requestId ?? newRequestId();
    this.turnOf = init.turnOf;
    this.caller = init.caller;
    this.untilDone = init.untilDone === true;
    init.services.initContext?.(this);
  }

  /**
   * What the upstream call is cancelled by: an HTTP request's abort hands undici its emitter without
   * an AbortSignal being made (pipeline/client-gone.ts).
   */
  get abort(): AbortSource {
    return (this.#abort ??= new AbortController().signal);
  }

  /** Fires when the client leaves (or the in-process caller aborts); made on first read for an HTTP request. */
  get signal(): AbortSignal {
    return signalOf(this.abort);
  }

  /** The request's id (its log record's id), made on first use: most requests never need one. */
  get id(): string {
    return (this.#id ??= randomUUID());
  }
}
