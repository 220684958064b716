// Go durations as the reference writes tool sync intervals ('10m', '1h30m', '-1m', '0').

const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Milliseconds, negative for a negative duration; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^(-?)((?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+)$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of m[2].matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * UNIT_MS[part[2]];
  return m[1] ? -total : total;
}
