// The stage (plugin) contract. Each request passes the snapshot's stage list: every `before` in
// order (one may answer instead: a cache hit, a 401, a 429), then the execution, then every
// `after` in reverse order, always, also when a stage refused or the call failed. `tap` sees each
// streamed item as it goes out. The pipeline knows no stage by name: builtins come from the
// services, plugins from the registry by the names config gives them.
import type { Snapshot } from '../config/snapshot.ts';
import type { RequestContext } from './context.ts';
import type { Outcome } from './outcome.ts';

export interface Stage {
  readonly name: string;
  /** May answer instead of the call (an Outcome) or refuse it (throw a GatewayError). */
  before?(ctx: RequestContext): Outcome | undefined | Promise<Outcome | undefined>;
  /**
   * Asked after `before` returned nothing synchronously: true when it had nothing to do for this
   * request (no key to identify, no limit to admit), so observers (tracing) record nothing for it.
   */
  idle?(ctx: RequestContext): boolean;
  /** Once the answer is complete (a stream: ended); `result` is the error outcome when it failed. */
  after?(ctx: RequestContext, result: Outcome): void;
  /** Each streamed item (a unified chunk or native event) before it is encoded, and each chunk (Uint8Array) of a relayed byte body. */
  tap?(ctx: RequestContext, item: unknown): void;
}

/** The built-in stages of one snapshot. */
export interface BuiltinStages {
  /** Who is calling: run before the request is read, except on routes that read a whole body first (see Pipeline.run). */
  caller: readonly Stage[];
  /** Run once the request is read: plan targets, admit limits. */
  request: readonly Stage[];
}

/** Makes a plugin's stage from its `config` (per snapshot: a config change builds it again). */
export type StageFactory = (config: unknown, snapshot: Snapshot) => Stage;

/** Plugin name → factory. */
export type PluginRegistry = ReadonlyMap<string, StageFactory>;

/** A `plugins[]` entry of the configuration (the reference shape). */
export interface PluginEntry {
  name: string;
  enabled: boolean;
  config?: unknown;
  placement?: 'pre_builtin' | 'post_builtin';
  order?: number;
}
