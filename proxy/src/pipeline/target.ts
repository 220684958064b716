// Where one upstream attempt goes: what the invoke loop and the key pool read. Which targets a
// request has, and in what order, is chosen by governance/targets.ts.
import type { ProviderRuntime } from '../config/snapshot.ts';

export interface Target {
  provider: ProviderRuntime;
  /** Bare upstream model name. */
  model: string;
  /** Keys a virtual key allows for this target (undefined: the whole pool). */
  keyIds?: ReadonlySet<string>;
  /** A routing rule or fallback pinned this key. */
  pinnedKeyId?: string;
}
