// The builds the A/B tools name: `floor`, `current` (this checkout's dist/), a build kept with
// `node bench/ab.ts --save NAME`, or `git-REF` (that commit built beside this checkout); each may
// carry `@--node-flag` or `@NAME=value` (an environment variable) after its name.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PEERS, buildBaseline } from './procs.ts';

/** Where a build of that name is kept (`git-REF`: that commit, built beside this checkout). */
export function buildRoot(name: string): string {
  return name.startsWith('git-') ? buildBaseline(name.slice(4)).root : join(PEERS, `ab-${name}`);
}

/** A saved build's root; an error naming the command that saves it when there is none. */
export function savedBuildRoot(name: string): string {
  const root = buildRoot(name);
  if (!existsSync(join(root, 'dist/proxy/src/main.js'))) throw new Error(`no saved build ${name} (node bench/ab.ts --save ${name})`);
  return root;
}

/** The node flags and environment a build's `@…` suffixes add (none without one; `a@--flag@NAME=v` gives both). */
export function buildExtras(b: string): { flags: string[]; env: Record<string, string> } {
  const flags: string[] = [];
  const env: Record<string, string> = {};
  for (const x of b.split('@').slice(1)) {
    if (/^[A-Z_][A-Z0-9_]*=/.test(x)) env[x.slice(0, x.indexOf('='))] = x.slice(x.indexOf('=') + 1);
    else flags.push(x);
  }
  return { flags, env };
}
