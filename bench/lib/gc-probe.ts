// Loaded with --import into a process under a benchmark (the gateway, the mock): the process's own
// pauses as it saw them, with no product code involved. Each GC (its start on the epoch clock, its
// length and kind) and the event loop's delay each second are written as JSON to $BENCH_PROBE_OUT
// when the process exits, so a benchmark can line its slow events up against them.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** What the probe writes: times in epoch ms (performance.timeOrigin + performance.now()). */
export interface ProbeRecord {
  /** [start, duration ms, kind (1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 incremental, 16 weak callbacks)]. */
  gc: [number, number, number][];
  /** [end of the second, loop delay p99 ms, max ms] per second. */
  loop: [number, number, number][];
}

const out = process.env.BENCH_PROBE_OUT;
if (out) {
  const record: ProbeRecord = { gc: [], loop: [] };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) record.gc.push([performance.timeOrigin + e.startTime, e.duration, e.detail?.kind ?? 0]);
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  // 5 ms between samples: a stall of a few ms is caught by the sample it delays, at 200 wake-ups a second.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  setInterval(() => {
    record.loop.push([performance.timeOrigin + performance.now(), delay.percentile(99) / 1e6, delay.max / 1e6]);
    delay.reset();
  }, 1000).unref();
  process.once('exit', () => writeFileSync(out, JSON.stringify(record)));
}
