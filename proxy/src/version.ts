// The gateway's version: package.json's, read once. The file sits three folders up from the sources
// (proxy/src) and four from the compiled output (dist/proxy/src), so both are tried.
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function version(): string {
  if (cached !== undefined) return cached;
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'skybridge' && typeof pkg.version === 'string') return (cached = pkg.version);
    } catch {
      // Not this one: try the next candidate.
    }
  }
  return (cached = 'unknown');
}
