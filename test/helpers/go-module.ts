// Files published in Go modules (CRD manifests of Kubernetes projects), fetched through the Go
// module proxy with `go mod download` and kept in Go's module cache (GOMODCACHE), so a second run
// reads them from disk and a fresh machine downloads them: nothing depends on the cache being there.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

/** The directory `module@version` is unpacked in. */
export async function goModuleDir(module: string): Promise<string> {
  // Outside any module, so no go.mod is read or written.
  const { stdout } = await run('go', ['mod', 'download', '-json', module], { cwd: tmpdir(), env: { ...process.env, GOFLAGS: '-mod=mod' }, maxBuffer: 1 << 20, timeout: 10 * 60_000 });
  const info = JSON.parse(stdout) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${module}: ${info.Error ?? stdout}`);
  return info.Dir;
}

/** The CustomResourceDefinitions in the YAML files of `dir` (one level, sorted by file name). */
export function crdsIn(dir: string): { name: string; yaml: string }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ name: f, yaml: readFileSync(join(dir, f), 'utf8') }))
    .filter((f) => parseAllDocuments(f.yaml).some((d) => (d.toJS() as { kind?: string } | null)?.kind === 'CustomResourceDefinition'));
}
