// `npm run docs:compat`: runs the integration test files that declare compatibility cells (compat()
// tags, test/helpers/compat.ts) with node:test, collects each cell's results, and writes
// docs/compatibility.md. A cell is ✅ only when at least one test backing it ran and passed and none
// failed; a declared cell whose tests failed, were skipped or never reported is ❌.
// Flags: `--out FILE` writes elsewhere (default docs/compatibility.md).
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cellKey, tagsIn } from '../test/helpers/compat.ts';
import { scanIntegrationTests } from '../test/helpers/compat-scan.ts';
import { renderDoc, type CellEntry } from '../test/helpers/compat-doc.ts';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, 'docs', 'compatibility.md') } } });

const declared = scanIntegrationTests(root);
const files = [...new Set(declared.map((d) => d.file))];
console.log(`${declared.length} cell declarations in ${files.length} files: ${files.join(', ')}`);

/** Results per `cell @ file`. */
const results = new Map<string, { passed: number; failed: number }>();
const undeclared = new Set<string>();
const declaredKeys = new Set(declared.map((d) => `${cellKey(d)} @ ${d.file}`));

/** Names of the suites around the current test, per file, by nesting level. */
const stacks = new Map<string, string[]>();

interface TestEventData {
  name: string;
  nesting: number;
  file?: string;
  skip?: string | boolean;
  todo?: string | boolean;
  details?: { type?: string };
}

function record(data: TestEventData, passed: boolean): void {
  if (data.details?.type === 'suite' || !data.file) return;
  const file = relative(root, data.file).replaceAll('\\', '/');
  const path = [...(stacks.get(data.file) ?? []).slice(0, data.nesting), data.name];
  const ran = !data.skip && !data.todo;
  for (const cell of path.flatMap(tagsIn)) {
    const key = `${cellKey(cell)} @ ${file}`;
    if (!declaredKeys.has(key)) undeclared.add(key);
    const r = results.get(key) ?? { passed: 0, failed: 0 };
    if (!passed) r.failed++;
    else if (ran) r.passed++;
    results.set(key, r);
  }
}

const stream = run({ files: files.map((f) => join(root, f)), concurrency: 1, timeout: 120_000 });
stream.on('test:start', (data: TestEventData) => {
  if (!data.file) return;
  const stack = stacks.get(data.file) ?? [];
  stack.length = data.nesting;
  stack.push(data.name);
  stacks.set(data.file, stack);
});
stream.on('test:pass', (data: TestEventData) => record(data, true));
stream.on('test:fail', (data: TestEventData) => record(data, false));
await new Promise<void>((done, fail) => {
  const out = stream.compose(spec);
  out.pipe(process.stdout, { end: false });
  out.on('end', done);
  out.on('error', fail);
});

// One entry per cell; its status covers every file backing it.
const entries = new Map<string, CellEntry>();
for (const d of declared) {
  const key = cellKey(d);
  const r = results.get(`${key} @ ${d.file}`);
  const ok = r !== undefined && r.passed > 0 && r.failed === 0;
  const e = entries.get(key) ?? { prefix: d.prefix, operation: d.operation, upstream: d.upstream, status: 'pass', files: [] };
  if (!ok) e.status = 'fail';
  if (!e.files.includes(d.file)) e.files.push(d.file);
  e.files.sort();
  entries.set(key, e);
}

writeFileSync(values.out, renderDoc([...entries.values()]));
const failed = [...entries.values()].filter((e) => e.status === 'fail');
console.log(`\nwrote ${relative(process.cwd(), values.out)}: ${entries.size} cells, ${failed.length} not passing`);
for (const e of failed) console.log(`  ❌ ${cellKey(e)} (${e.files.join(', ')})`);
if (undeclared.size > 0) {
  console.error(`tags seen in test results that the static scan did not find (test/helpers/compat-scan.ts):\n  ${[...undeclared].join('\n  ')}`);
}
if (failed.length > 0 || undeclared.size > 0) process.exitCode = 1;
