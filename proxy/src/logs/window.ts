// Histogram time windows: a default range when none is given and a bucket size that keeps the
// bucket count bounded, so a chart over a year of logs is still ~100 rows.
import type { LogFilters } from './query.ts';

export const DEFAULT_HISTOGRAM_RANGE_MS = 24 * 3600_000;
export const MAX_BUCKETS = 120;

const NICE_BUCKETS_S = [1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400];

export interface HistogramWindow {
  start: number;
  end: number;
  bucketMs: number;
}

export function histogramWindow(filters: LogFilters, now = Date.now()): HistogramWindow {
  const end = filters.end_time ?? now;
  const start = filters.start_time ?? end - DEFAULT_HISTOGRAM_RANGE_MS;
  const span = Math.max(1, end - start);
  const minBucketS = span / MAX_BUCKETS / 1000;
  const nice = NICE_BUCKETS_S.find((s) => s >= minBucketS);
  const bucketS = nice ?? Math.ceil(minBucketS / 86400) * 86400;
  return { start, end, bucketMs: bucketS * 1000 };
}

/** Every bucket start in the window, oldest first (answers list empty buckets too). */
export function bucketStarts(w: HistogramWindow): number[] {
  const out: number[] = [];
  for (let b = Math.floor(w.start / w.bucketMs) * w.bucketMs; b <= w.end; b += w.bucketMs) out.push(b);
  return out;
}
