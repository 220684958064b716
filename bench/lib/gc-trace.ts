// The GC work in a stretch of a process's `--trace-gc --trace-gc-nvp` output: how many young and full
// collections, and the bytes the young ones kept (survived in the young generation) and moved to
// the old one (promoted). The counts and bytes follow what the process allocated and kept alive,
// not how busy the machine was, so two builds compare on them even at a load where times do not.

export interface GcWork {
  /** Young-generation collections (scavenges, minor mark-sweeps). */
  young: number;
  /** Full collections (mark-compact, mark-sweep). */
  full: number;
  /** Bytes the young collections kept in the young generation. */
  survivedBytes: number;
  /** Bytes the young collections moved to the old generation. */
  promotedBytes: number;
  /** The pauses' sum as the process saw them, ms (wall time: inflated by the load). */
  pauseMs: number;
}

/** Reads the name=value lines of `--trace-gc-nvp`; other lines (a plain `--trace-gc` line, the service's own logs) are skipped. */
export function gcWork(log: string): GcWork {
  const work: GcWork = { young: 0, full: 0, survivedBytes: 0, promotedBytes: 0, pauseMs: 0 };
  for (const line of log.split('\n')) {
    const kind = / gc=(\w+)/.exec(line)?.[1];
    if (kind === undefined) continue;
    if (kind === 's' || kind === 'mmc' || kind === 'ms_young') work.young++;
    else work.full++;
    work.pauseMs += Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0);
    if (kind !== 's' && kind !== 'mmc' && kind !== 'ms_young') continue;
    work.survivedBytes += Number(/ new_space_survived=(\d+)/.exec(line)?.[1] ?? 0);
    work.promotedBytes += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  return work;
}

/** The trace flags a process needs for gcWork. */
export const GC_TRACE_FLAGS = ['--trace-gc', '--trace-gc-nvp'];
