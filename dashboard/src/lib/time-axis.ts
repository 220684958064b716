// Time labels for chart axes and tooltips. A range that crosses midnight carries the date on the
// first label and wherever the day changes, so "09:00" is never ambiguous; long ranges show dates.
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');
const dayKey = (d: Date): string => `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`;
const dateOf = (d: Date): string => `${MONTHS[d.getMonth()]} ${d.getDate()}`;
const clockOf = (d: Date): string => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

/** Whether [startMs, endMs] spans more than one local day. */
export function crossesMidnight(startMs: number, endMs: number): boolean {
  return dayKey(new Date(startMs)) !== dayKey(new Date(endMs));
}

/**
 * Labels for axis ticks at `ticksMs` (ascending) over a range of [startMs, endMs]: clock times;
 * with the date (on a second line) on the first tick and at each change of day when the range
 * crosses midnight; dates alone when the ticks are whole days apart.
 */
export function axisLabels(ticksMs: readonly number[], startMs: number, endMs: number): string[] {
  const dated = crossesMidnight(startMs, endMs);
  const daily = ticksMs.length > 1 && ticksMs.every((t, i) => i === 0 || t - ticksMs[i - 1]! >= 86_400_000);
  let lastDay = '';
  return ticksMs.map((t) => {
    const d = new Date(t);
    if (daily) return dateOf(d);
    const day = dayKey(d);
    const label = dated && day !== lastDay ? `${clockOf(d)}\n${dateOf(d)}` : clockOf(d);
    lastDay = day;
    return label;
  });
}

/** A bucket's time in full, for a tooltip: "Nov 26 14:05". */
export function fullTime(ms: number): string {
  const d = new Date(ms);
  return `${dateOf(d)} ${clockOf(d)}`;
}
