// Counter windows: which fixed window a moment falls in, computed from the clock alone so that every
// replica (and every restart) agrees on the same window without shared state.
//
// Decisions (all in UTC):
// - s, m, h, d: fixed windows of the given length anchored at the Unix epoch. For lengths that divide
//   a day this is also the wall-clock boundary (`1h` starts on the hour, `1d` at midnight UTC);
//   longer ones (`7d`, `45m` on no boundary) are epoch multiples. `calendar_aligned` changes nothing.
// - w: calendar_aligned -> weeks start Monday 00:00 UTC (ISO weeks); `2w` counts pairs of weeks from
//   Monday 1970-01-05. Otherwise fixed 7-day multiples from the epoch (they start Thursdays 00:00 UTC,
//   the weekday of 1970-01-01).
// - M, Y: always calendar months / years (a `1M` budget resets on the 1st whatever the month's
//   length; rolling 30-day months would surprise users). `nM` counts months from January 1970, so
//   `3M` is calendar quarters and `6M` half-years; `nY` counts years from 1970.
// The reference gateway rolls unaligned windows from each budget's last reset; that needs stored
// per-limit state, which these clock-derived windows deliberately avoid.
import { DURATION_PATTERN } from '../../schema/governance.ts';

export type DurationUnit = 's' | 'm' | 'h' | 'd' | 'w' | 'M' | 'Y';

export interface ParsedDuration {
  readonly count: number;
  readonly unit: DurationUnit;
}

export interface Window {
  /** Inclusive start, epoch ms. */
  start: number;
  /** Exclusive end, epoch ms: the moment the next window starts. */
  end: number;
}

const SECOND = 1000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** 1970-01-05, the first Monday after the epoch. */
const FIRST_MONDAY = 4 * DAY;
const FIXED_MS: Partial<Record<DurationUnit, number>> = { s: SECOND, m: 60 * SECOND, h: 3_600_000, d: DAY, w: WEEK };

const pattern = new RegExp(DURATION_PATTERN);
const parsed = new Map<string, ParsedDuration>();

/** Parses '30s', '5m', '1h', '1d', '1w', '1M', '1Y'. Throws on anything else. */
export function parseDuration(text: string): ParsedDuration {
  const hit = parsed.get(text);
  if (hit) return hit;
  if (!pattern.test(text)) throw new Error(`invalid duration '${text}': expected a positive count and one of s, m, h, d, w, M, Y (e.g. '30s', '1h', '1M')`);
  const count = Number(text.slice(0, -1));
  if (!Number.isSafeInteger(count)) throw new Error(`invalid duration '${text}': count too large`);
  const d: ParsedDuration = { count, unit: text.slice(-1) as DurationUnit };
  // Durations come from config, so few distinct ones exist; the cap only guards against misuse.
  if (parsed.size < 1024) parsed.set(text, d);
  return d;
}

/** True when `text` is a duration parseDuration accepts. */
export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/** The window of `duration` that contains `nowMs`. */
export function windowAt(duration: string | ParsedDuration, calendarAligned: boolean, nowMs: number): Window {
  const { count, unit } = typeof duration === 'string' ? parseDuration(duration) : duration;
  if (unit === 'M' || unit === 'Y') return monthWindow(unit === 'Y' ? count * 12 : count, nowMs);
  const length = count * (FIXED_MS[unit] as number);
  const anchor = unit === 'w' && calendarAligned ? FIRST_MONDAY : 0;
  const start = anchor + Math.floor((nowMs - anchor) / length) * length;
  return { start, end: start + length };
}

/** The last month window computed per length: every limit check of a request asks for the same one. */
const monthWindows = new Map<number, Readonly<Window>>();

/** Windows of `months` calendar months, counted from January 1970. */
function monthWindow(months: number, nowMs: number): Window {
  const cached = monthWindows.get(months);
  if (cached && nowMs >= cached.start && nowMs < cached.end) return { start: cached.start, end: cached.end };
  const w = computeMonthWindow(months, nowMs);
  monthWindows.set(months, w);
  return { start: w.start, end: w.end };
}

function computeMonthWindow(months: number, nowMs: number): Window {
  const now = new Date(nowMs);
  const index = (now.getUTCFullYear() - 1970) * 12 + now.getUTCMonth();
  const first = Math.floor(index / months) * months;
  return { start: monthStart(first), end: monthStart(first + months) };
}

function monthStart(index: number): number {
  const year = 1970 + Math.floor(index / 12);
  return Date.UTC(year, index - (year - 1970) * 12, 1);
}
