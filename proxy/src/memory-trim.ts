// V8 keeps the heap a burst of traffic grew: the young generation stays at its largest (2 × 8 MB
// under `npm start`'s --max-semi-space-size=8) and old-space pages stay committed, so a gateway that
// served a burst holds 80-100 MB more than it needs once traffic stops. V8's own memory reducer
// waits 8 s and then only if the allocation rate of the last seconds was low. So: once a gateway
// that did work has been quiet for a moment (nothing in flight, no request arrived), it runs one
// memory-reducing collection, which shrinks the young generation back to its start size and gives
// old-space pages back. It runs only when the heap grew by a set amount since the last one, so a
// gateway serving a health probe every few seconds does not collect after each.
import v8 from 'node:v8';
import vm from 'node:vm';
import { log } from './log.ts';

export interface Activity {
  /** Requests received so far (only its changes are read). */
  readonly started: () => number;
  /** Requests received and not yet answered. */
  readonly inFlight: () => number;
}

export interface TrimOptions {
  /** Quiet this long (no request arrived, none in flight) before collecting. */
  readonly idleMs?: number;
  /** Collect only when what is measured (`committed`) grew this much since the last collection. */
  readonly growthBytes?: number;
  /** The collection, and what growth is measured in: the heap's committed bytes unless given (tests hand in their own). */
  readonly gc?: () => void;
  readonly committed?: () => number;
  /**
   * Measure the growth from the heap as the watch starts (a start trim just ran), not from zero
   * (which collects at the first quiet moment after any work).
   */
  readonly fromStart?: boolean;
  /** Stop after this many collections (default: no limit). */
  readonly limit?: number;
  /**
   * Collect once requests have arrived since the watch started, whatever the heap's growth (a start
   * trim just ran; after 8 s of quiet V8's own memory reducer may have shrunk the heap, but it keeps
   * more resident than this collection does).
   */
  readonly afterTraffic?: boolean;
}

/** What the heap has committed: young generation and old-space pages alike. */
function heapCommitted(): number {
  return v8.getHeapStatistics().total_heap_size;
}

/** The process's resident memory: the heap committed, and also the pages V8 freed but keeps pooled, and malloc's. */
export function residentBytes(): number {
  return process.memoryUsage.rss();
}

/**
 * V8's `gc()` without `--expose-gc` on the command line (the flag makes a `gc` global in contexts
 * made after it is set; the main context stays without one). Undefined when V8 refuses it.
 */
function memoryReducingGc(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    if (typeof gc !== 'function') return undefined;
    // 'last-resort': full collections that also hand freed pages back to the system; a plain
    // major collection shrinks the young generation's size but keeps its pages resident. A
    // last-resort collection also throws away every function's bytecode and optimized code, and
    // compiling it all again cost 1.4x CPU per request in the rounds after a trim (bench/ab.ts):
    // so the flushing flags are off for the collection, and back as they were after it.
    const keep = ['flush-bytecode', 'flush-baseline-code'].filter((f) => !process.execArgv.includes(`--no-${f}`));
    return () => {
      for (const f of keep) v8.setFlagsFromString(`--no-${f}`);
      try {
        (gc as (opts: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      } finally {
        for (const f of keep) v8.setFlagsFromString(`--${f}`);
      }
    };
  } catch {
    return undefined;
  }
}

/** Starts the watch; stop() ends it. One per process: the heap is the process's. */
export function startMemoryTrim(activity: Activity, opts: TrimOptions = {}): { stop(): void } {
  const idleMs = opts.idleMs ?? 500;
  const growth = opts.growthBytes ?? 4 * 2 ** 20;
  const committed = opts.committed ?? heapCommitted;
  const gc = opts.gc ?? memoryReducingGc();
  if (!gc) {
    log.debug('memory trim off: V8 gave no gc()');
    return { stop: () => undefined };
  }
  // Zero: the first quiet moment after any work collects once, which also gives back what the
  // start (modules, the configuration's compile) grew the young generation to.
  let baseline = opts.fromStart ? committed() : 0;
  let left = opts.limit ?? Infinity;
  const firstStarted = activity.started();
  let lastStarted = firstStarted;
  let quietSince = performance.now();
  // Checked a few times per quiet period, at least each second; unref'd, so it never holds the process open.
  const timer = setInterval(
    () => {
      const started = activity.started();
      const now = performance.now();
      if (started !== lastStarted || activity.inFlight() > 0) {
        lastStarted = started;
        quietSince = now;
        return;
      }
      if (now - quietSince < idleMs) return;
      const before = committed();
      if (opts.afterTraffic) {
        if (started === firstStarted) return;
      } else if (before - baseline < growth) {
        // Smaller than at the last collection (V8 shrank it itself): measure growth from here.
        baseline = Math.min(baseline, before);
        return;
      }
      const heapBefore = heapCommitted();
      const t0 = performance.now();
      gc();
      const pauseMs = performance.now() - t0;
      baseline = committed();
      if (--left <= 0) clearInterval(timer);
      const mb = (n: number) => Math.round(n / 2 ** 20);
      log.debug('memory trimmed after traffic', { committed_mb_before: mb(heapBefore), committed_mb_after: mb(heapCommitted()), resident_mb_after: mb(residentBytes()), pause_ms: Math.round(pauseMs) });
    },
    Math.max(50, Math.min(1000, Math.round(idleMs / 4))),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * One memory-reducing collection once the gateway has started: loading the modules and compiling
 * the configuration grow the young generation to its largest (2 × 8 MB under `npm start`), and
 * nothing shrinks it while the gateway idles. Unlike the trim after traffic this runs once, before
 * any request, so no burst pays for the lowered heap limit it leaves (the start pays the pause).
 */
export function trimAfterStart(gc: (() => void) | undefined = memoryReducingGc()): void {
  if (!gc) return;
  const t0 = performance.now();
  gc();
  log.debug('memory trimmed after start', { committed_mb: Math.round(heapCommitted() / 2 ** 20), pause_ms: Math.round(performance.now() - t0) });
}
