// Where a latency benchmark's slow events come from: pure functions over the events (when each
// was sent, its round trip) and the pauses each process reported (bench/lib/gc-probe.ts).

/** A pause: its start (epoch ms) and length (ms). */
export type Pause = readonly [at: number, ms: number];

export interface Events {
  /** Send time of each event (epoch ms), its round trip (ms), and the client thread that sent it. */
  sentAt: readonly number[];
  rtt: readonly number[];
  thread: readonly number[];
}

/** Count, sum and longest of the pauses that start inside [from, to). */
export function pausesIn(pauses: readonly Pause[], from: number, to: number): { n: number; sum: number; max: number } {
  const out = { n: 0, sum: 0, max: 0 };
  for (const [at, ms] of pauses) {
    if (at < from || at >= to) continue;
    out.n++;
    out.sum += ms;
    out.max = Math.max(out.max, ms);
  }
  return out;
}

const overlaps = (pauses: readonly Pause[], from: number, to: number): boolean => pauses.some(([at, ms]) => at < to && at + ms > from);

/**
 * Of the events whose round trip is at or above the q-th percentile, the share whose flight (sent
 * to answered) overlapped a pause of each source, and of none. A source names the pauses that can
 * touch an event of a given client thread (a client thread's own GC touches only its events).
 */
export function tailCauses(ev: Events, sources: Readonly<Record<string, (thread: number) => readonly Pause[]>>, q = 0.99): { events: number; share: Record<string, number>; none: number } {
  const sorted = [...ev.rtt].sort((a, b) => a - b);
  const cut = sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Infinity;
  const share: Record<string, number> = Object.fromEntries(Object.keys(sources).map((k) => [k, 0]));
  let events = 0;
  let none = 0;
  for (let i = 0; i < ev.rtt.length; i++) {
    if (ev.rtt[i] < cut) continue;
    events++;
    let any = false;
    for (const [name, pausesOf] of Object.entries(sources)) {
      if (!overlaps(pausesOf(ev.thread[i]), ev.sentAt[i], ev.sentAt[i] + ev.rtt[i])) continue;
      share[name]++;
      any = true;
    }
    if (!any) none++;
  }
  for (const k of Object.keys(share)) share[k] = events ? share[k] / events : 0;
  return { events, share, none: events ? none / events : 0 };
}

/** How bunched the sends were: the most sent within one millisecond, and the share of events sent in a millisecond with `atLeast` or more. */
export function bursts(sentAt: readonly number[], atLeast = 4): { largest: number; share: number } {
  const perMs = new Map<number, number>();
  for (const t of sentAt) {
    const ms = Math.floor(t);
    perMs.set(ms, (perMs.get(ms) ?? 0) + 1);
  }
  let largest = 0;
  let inBursts = 0;
  for (const c of perMs.values()) {
    largest = Math.max(largest, c);
    if (c >= atLeast) inBursts += c;
  }
  return { largest, share: sentAt.length ? inBursts / sentAt.length : 0 };
}
