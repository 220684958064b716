// The overview's window and numbers: one /api/logs/breakdown answer per (range, dimension), which
// the store computes from its covering index (never by fetching rows). Relative ranges slide: each
// load asks for the window ending now.
import { get, query } from '../../lib/api.ts';
import type { BreakdownBy, TeamView as Team, UsageBreakdown } from '../../../../proxy/src/api/answers.ts';

export const RANGES = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 3600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86400_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 86400_000 },
  { value: 'custom', label: 'Custom range', ms: 0 },
] as const;
export const DEFAULT_RANGE = '1h';

export const DIMENSIONS: readonly { value: BreakdownBy; label: string; one: string }[] = [
  { value: 'provider', label: 'Provider', one: 'provider' },
  { value: 'model', label: 'Model', one: 'model' },
  { value: 'virtual_key', label: 'Virtual key', one: 'virtual key' },
  { value: 'team', label: 'Team', one: 'team' },
];
export const DEFAULT_DIMENSION: BreakdownBy = 'provider';

export interface Window {
  start: number;
  end: number;
}

/** The window a range stands for at `now`; a custom range from its `from`/`to` (ISO), or why it cannot be used. */
export function windowOf(range: string, from: string | null, to: string | null, now = Date.now()): Window | { problem: string } {
  if (range !== 'custom') {
    const r = RANGES.find((x) => x.value === range) ?? RANGES.find((x) => x.value === DEFAULT_RANGE)!;
    return { start: now - r.ms, end: now };
  }
  const start = from ? Date.parse(from) : NaN;
  const end = to ? Date.parse(to) : now;
  if (Number.isNaN(start)) return { problem: 'Choose when the custom range starts.' };
  if (Number.isNaN(end)) return { problem: 'The end of the custom range is not a date.' };
  if (end <= start) return { problem: 'The custom range must end after it starts.' };
  return { start, end };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export async function loadBreakdown(by: BreakdownBy, w: Window): Promise<UsageBreakdown> {
  const answer = get<UsageBreakdown>(`/api/logs/breakdown${query({ by, start_time: iso(w.start), end_time: iso(w.end) })}`);
  if (by !== 'team') return answer;
  // Records carry a team's id only: its name comes from the configuration (when it is still there).
  const [d, teams] = await Promise.all([answer, get<{ teams: Team[] }>('/api/governance/teams').catch(() => ({ teams: [] as Team[] }))]);
  const names = new Map(teams.teams.map((t) => [t.id, t.name]));
  for (const g of d.groups) {
    const name = names.get(g.id);
    if (name && name !== g.id) g.name = name;
  }
  return d;
}

/** Cache hit rate per bucket in percent; null where there were no requests. */
export function hitRate(requests: readonly (number | null)[], hits: readonly (number | null)[]): (number | null)[] {
  return requests.map((n, i) => (n ? ((hits[i] ?? 0) / n) * 100 : null));
}
