// Writes the CustomResourceDefinitions (crds/ and charts/skybridge/crds/) from the proxy's TypeBox
// schemas, and the field name table of docs/kubernetes.md: `npm run gen:crds`. With --check, writes
// nothing and exits 1 when a file is stale.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CRD_DIRS, generateCrdFiles } from '../operator/src/crds/crd.ts';
import { withMappingTable } from '../operator/src/crds/mapping-doc.ts';

const root = join(dirname(new URL(import.meta.url).pathname), '..');
const check = process.argv.includes('--check');
const files = generateCrdFiles();
// The v1alpha1 -> v1beta1 field name table in the Kubernetes docs.
const DOC = 'docs/kubernetes.md';
files.set(DOC, withMappingTable(readFileSync(join(root, DOC), 'utf8')));
const stale: string[] = [];

for (const [path, text] of files) {
  const file = join(root, path);
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}
// A kind that no longer exists leaves a file behind: generated files are the only YAML there.
for (const dir of CRD_DIRS) {
  let names: string[] = [];
  try {
    names = readdirSync(join(root, dir));
  } catch {
    names = [];
  }
  for (const name of names) {
    const path = `${dir}/${name}`;
    if (!name.endsWith('.yaml') || files.has(path)) continue;
    stale.push(`${path} (not generated)`);
    if (!check) rmSync(join(root, path));
  }
}

if (check) {
  if (stale.length) {
    console.error(`stale CRDs (run npm run gen:crds):\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`${files.size} generated files up to date`);
} else {
  console.log(stale.length ? `wrote ${stale.join(', ')}` : `${files.size} generated files up to date`);
}
