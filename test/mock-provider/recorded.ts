// What the mock keeps of the traffic it saw, bounded by --max-recorded.

/**
 * Adds `item` to a recorded list holding at most `max` (the oldest go first), so a benchmark's
 * thousands of realtime events a second are not all kept (and copied by every young collection).
 */
export function keep<T>(list: T[], item: T, max: number): void {
  if (max <= 0) return;
  if (list.length >= max) list.shift();
  list.push(item);
}
