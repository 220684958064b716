// Builds the dashboard (dashboard/src, Preact + TypeScript) into dashboard/dist: index.html and
// content-hashed assets, which are committed so a fresh machine serves the page without a build.
// `--check` builds into a temporary folder and fails when the committed files differ from it.
import { build } from 'esbuild';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', 'dashboard');
const committed = join(root, 'dist');

async function buildInto(out: string): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: join(out, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: join(root, 'tsconfig.json'),
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => relative(out, resolve(p)));
  const js = outputs.find((p) => p.endsWith('.js'));
  const css = outputs.find((p) => p.endsWith('.css'));
  if (!js) throw new Error('esbuild produced no JavaScript bundle');
  const html = readFileSync(join(root, 'index.html'), 'utf8')
    .replace('<!--css-->', css ? `<link rel="stylesheet" href="/${css}">` : '')
    .replace('<!--js-->', `<script type="module" src="/${js}"></script>`);
  writeFileSync(join(out, 'index.html'), html);
}

function files(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), base) : [relative(base, join(dir, e.name))])).sort();
}

if (process.argv.includes('--check')) {
  const tmp = mkdtempSync(join(tmpdir(), 'skybridge-dashboard-'));
  try {
    await buildInto(tmp);
    const want = files(tmp);
    const have = files(committed);
    const differ = want.filter((f) => !have.includes(f) || !readFileSync(join(tmp, f)).equals(readFileSync(join(committed, f))));
    const extra = have.filter((f) => !want.includes(f));
    if (differ.length || extra.length) {
      console.error(`dashboard/dist does not match dashboard/src: ${[...differ, ...extra].join(', ')}. Run: node scripts/build-dashboard.ts`);
      process.exit(1);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else {
  // `--out <dir>` builds elsewhere (served with SKYBRIDGE_DASHBOARD_DIR=<dir>) without touching the committed build.
  const at = process.argv.indexOf('--out');
  const out = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1]) : committed;
  await buildInto(out);
  console.log(`dashboard built in ${out}: ${files(out).join(', ')}`);
}
