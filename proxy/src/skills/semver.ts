// Semantic Versioning 2.0.0 (semver.org): the regular expression the spec gives, and precedence
// (build metadata ignored, a pre-release below its release, identifiers compared field by field).
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const MAX_VERSION_LENGTH = 128;

export function isSemver(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_VERSION_LENGTH && SEMVER.test(v);
}

function parts(v: string): { core: bigint[]; pre: string[] } {
  const m = SEMVER.exec(v);
  if (!m) throw new Error(`not a SemVer version: ${v}`);
  return { core: [BigInt(m[1]), BigInt(m[2]), BigInt(m[3])], pre: m[4] ? m[4].split('.') : [] };
}

const numeric = (s: string) => /^\d+$/.test(s);

/** Negative when a < b, 0 when they have the same precedence, positive when a > b. */
export function compareSemver(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i] < y.core[i] ? -1 : 1;
  if (x.pre.length === 0 || y.pre.length === 0) return (x.pre.length === 0 ? 1 : 0) - (y.pre.length === 0 ? 1 : 0);
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === q) continue;
    if (numeric(p) && numeric(q)) return BigInt(p) < BigInt(q) ? -1 : 1;
    if (numeric(p) !== numeric(q)) return numeric(p) ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return x.pre.length - y.pre.length;
}

/** The next version after `latest` for a client that names none (the OpenAI shape): the next minor, or 1.0.0. */
export function nextVersion(latest: string | undefined): string {
  if (!latest) return '1.0.0';
  const { core } = parts(latest);
  return `${core[0]}.${core[1] + 1n}.0`;
}
