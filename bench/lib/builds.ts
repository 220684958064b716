// The builds the A/B tools name: `floor`, `current` (this checkout's dist/), a build kept with
// `node bench/ab.ts --save NAME`, or `git-REF` (that commit built beside this checkout); each may
// carry `@--node-flag` or `@NAME=value` (an environment variable) after its name.
import { join } from 'node:path';
import { PEERS, buildBaseline } from './procs.ts';

/** Where a saved build (or `git-REF`) lives. */
export function savedBuildRoot(name: string): string {
  return name.startsWith('git-') ? buildBaseline(name.slice(4)).root : join(PEERS, `ab-${name}`);
}

/** The node flags and environment a build's `@…` suffix adds (none without one). */
export function buildExtras(b: string): { flags: string[]; env: Record<string, string> } {
  const x = b.includes('@') ? b.slice(b.indexOf('@') + 1) : undefined;
  if (x === undefined) return { flags: [], env: {} };
  if (/^[A-Z_][A-Z0-9_]*=/.test(x)) return { flags: [], env: { [x.slice(0, x.indexOf('='))]: x.slice(x.indexOf('=') + 1) } };
  return { flags: [x], env: {} };
}
