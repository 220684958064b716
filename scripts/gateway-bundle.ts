// After tsc and vendor-bundle (`npm run build`, `npm start`): the gateway's own start-up modules,
// loaded one file each by node (about 430 of them), become one bundle with a chunk per lazily loaded
// part (dist/proxy/src/bundle/), and dist/proxy/src/main.js a one-line import of it. Each module node
// loads keeps memory of its own besides its code: importing the gateway took 88.5 MB resident as
// separate modules and 76.7 MB bundled (after a full GC, 3 runs each). Packages stay external (resolved
// from node_modules as before); the vendor bundles are inlined. Dynamic imports stay dynamic (their
// own chunks), so what loads only when configured still does.
//
// Every module keeps the import.meta.url of its own file in dist/ (files it reads or starts beside
// itself: the SQLite writer thread, the code-mode worker and wasm, the dashboard's assets, package.json),
// and those files stay where tsc wrote them. The sources and the tests do not use the bundle.
//
//   node scripts/gateway-bundle.ts [DIST]     (run by `npm run build` after vendor-bundle; DIST defaults to dist/)
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = resolve(process.argv[2] ?? join(ROOT, 'dist'));
const SRC = join(DIST, 'proxy/src');
const OUT = join(SRC, 'bundle');
const MAIN = join(SRC, 'main.js');
/** tsc's main.js, kept: main.js itself becomes the import of the bundle. */
const UNBUNDLED = join(SRC, 'main.unbundled.js');
export const STUB_MARK = '// skybridge: the gateway bundle (scripts/gateway-bundle.ts)';

async function main(): Promise<void> {
  // tsc (incremental) re-emits main.js only when main.ts changed: otherwise main.js is the stub of the
  // last run and the kept copy is still tsc's.
  const text = readFileSync(MAIN, 'utf8');
  if (!text.includes(STUB_MARK)) copyFileSync(MAIN, UNBUNDLED);
  else if (!existsSync(UNBUNDLED)) throw new Error(`${MAIN} is the bundle's stub but ${UNBUNDLED} is gone: rebuild dist/ from scratch`);
  rmSync(OUT, { recursive: true, force: true });
  await build({
    entryPoints: { main: UNBUNDLED },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    outdir: OUT,
    packages: 'external',
    legalComments: 'inline',
    // V8 keeps each module's source text while the gateway runs: without comments, indentation and
    // line breaks it is 0.6 MB less (idle RSS about 1.5 MB less). Names stay, so stack traces still
    // name functions; their positions map back to tsc's files with node --enable-source-maps.
    minifyWhitespace: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [
      {
        name: 'own-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.js$/ }, (args) => {
            const code = readFileSync(args.path, 'utf8');
            if (!code.includes('import.meta.url')) return { contents: code, loader: 'js' };
            // Every output file sits in OUT itself (entry and chunks), so the module's own file is
            // this path from there.
            let rel = relative(OUT, args.path).split(sep).join('/');
            if (!rel.startsWith('.')) rel = `./${rel}`;
            return { contents: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'js' };
          });
        },
      },
    ],
  });
  for (const file of readdirSync(OUT)) if (file.endsWith('.js')) latin1Only(join(OUT, file));
  // The shebang stays: main.js is the package's `skybridge` command.
  writeFileSync(MAIN, `#!/usr/bin/env node\n${STUB_MARK}\nimport './bundle/main.js';\n`);
}

/**
 * V8 keeps a module's source text for as long as the module lives, one byte per character only if
 * every character is Latin-1: a single `→` in a comment made the whole bundle two bytes per
 * character (about 1 MB more for the three largest). esbuild escapes what is outside ASCII in
 * strings, regular expressions and names, so what is left is comment text, written as `\\uXXXX`.
 */
function latin1Only(file: string): void {
  const text = readFileSync(file, 'utf8');
  const out = text.replace(/[^\u0000-\u00ff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (out !== text) writeFileSync(file, out);
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway-bundle failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
