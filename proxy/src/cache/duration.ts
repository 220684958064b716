// Cache lifetimes: a Go duration (`30s`, `5m`, `1h30m`, `250ms`) or integer seconds, as the
// plugin's `ttl` and the `x-bf-cache-ttl` header take them.
const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds, or undefined when the value is not a duration (negative, empty, unknown unit). */
export function parseDurationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value * 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!text) return undefined;
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  let total = 0;
  PART.lastIndex = 0;
  let at = 0;
  while (at < text.length) {
    PART.lastIndex = at;
    const m = PART.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]];
    at = PART.lastIndex;
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}
