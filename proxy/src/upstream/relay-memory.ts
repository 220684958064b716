// Memory of relayed upstream bodies (a video download, audio, a file's content). The relay holds no
// more than a chunk or two: it writes each one and reads the next only once the client drained it.
// What still grows is chunks already written: every socket read is a new 64 KiB buffer outside V8's
// heap, released only when V8 collects its small wrapper. V8 collects the young generation when that
// fills with JS objects, and a relay makes few of those per megabyte, so it runs only once the
// buffers themselves add up to V8's external-memory trigger (about 64 MB): a 500 MB download grew
// the gateway's RSS by 53-98 MB (docs/benchmarks.md). A minor collection after every NUDGE_BYTES
// relayed (all relays together) frees the spent buffers while they are still young, so a download's
// footprint stays near NUDGE_BYTES whatever its size. A scavenge of a young generation that holds
// little costs well under a millisecond; per NUDGE_BYTES that is noise beside moving the bytes.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Bytes relayed between two minor collections. */
export const NUDGE_BYTES = 8 * 1024 * 1024;

type Collect = (options: { type: 'minor'; execution: 'sync' }) => void;

let collect: Collect | undefined | null = null;
let since = 0;

/**
 * V8's `gc`: the global one when the process runs with --expose-gc, else one taken from a fresh
 * context made while the flag is briefly on (the flag changes what new contexts get; it is turned
 * back off at once, so the gateway's own globals never gain `gc`). Undefined if V8 refuses.
 */
function collector(): Collect | undefined {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as Collect;
  try {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    return typeof fn === 'function' ? (fn as Collect) : undefined;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** Counts bytes a relay wrote; every NUDGE_BYTES, a minor collection frees the spent chunks. */
export function relayed(bytes: number): void {
  since += bytes;
  if (since < NUDGE_BYTES) return;
  since = 0;
  if (collect === null) collect = collector();
  collect?.({ type: 'minor', execution: 'sync' });
}
