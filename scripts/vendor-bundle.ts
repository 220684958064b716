// After tsc (`npm run build`, `npm start`): the packages the built gateway loads at start that are
// made of many small modules are bundled into one file each under dist/vendor/, and dist's imports of
// them are pointed there. Each module node loads keeps memory of its own besides its code (measured
// after a full GC: TypeBox as its 247 modules +4.3 MB anonymous, bundled as one +0.9 MB; ajv 63
// modules +1.8 MB, bundled +0.8 MB). The sources and the tests import the packages as usual; only
// dist/ (what `npm start` and the image run) uses the bundles, and the bundles are the packages'
// own code, unchanged.
//
//   node scripts/vendor-bundle.ts [DIST]     (run by `npm run build` after tsc; DIST defaults to dist/)
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// Another built tree as the argument (the tests use a small one).
const DIST = resolve(process.argv[2] ?? join(ROOT, 'dist'));
const VENDOR = join(DIST, 'vendor');

/** Package specifier → bundle file name. Only specifiers imported by name (no default import). */
const PACKAGES: Record<string, string> = {
  '@sinclair/typebox': 'typebox.js',
  '@sinclair/typebox/value': 'typebox-value.js',
  ajv: 'ajv.js',
  'prom-client': 'prom-client.js',
};

function jsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === VENDOR) continue;
    if (statSync(path).isDirectory()) out.push(...jsFiles(path));
    else if (name.endsWith('.js')) out.push(path);
  }
  return out;
}

const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** `import { A, B as C } from 'pkg';` as tsc writes it (type-only imports are gone). */
const importOf = (pkg: string) => new RegExp(`(import\\s*\\{([^}]*)\\}\\s*from\\s*)(['"])${quote(pkg)}\\3`, 'g');

async function main(): Promise<void> {
  const files = jsFiles(DIST);
  const texts = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
  mkdirSync(VENDOR, { recursive: true });
  for (const [pkg, out] of Object.entries(PACKAGES)) {
    // The names dist imports from the package, or from its bundle (a file tsc did not emit again
    // since the last run): the bundle exports exactly those.
    const names = new Set<string>();
    const bundled = new RegExp(`(import\\s*\\{([^}]*)\\}\\s*from\\s*)(['"])[./]*/vendor/${quote(out)}\\3`, 'g');
    for (const text of texts.values()) {
      for (const m of [...text.matchAll(importOf(pkg)), ...text.matchAll(bundled)]) {
        for (const part of m[2].split(',')) {
          const name = part.trim().split(/\s+as\s+/)[0]?.trim();
          if (name) names.add(name);
        }
      }
    }
    if (names.size === 0) continue;
    await build({
      stdin: { contents: `export { ${[...names].sort().join(', ')} } from '${pkg}';`, resolveDir: ROOT, sourcefile: `${out}-entry.js` },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      outfile: join(VENDOR, out),
      legalComments: 'inline',
      logLevel: 'warning',
      // CommonJS packages (ajv, prom-client) require node's builtins: an ES module bundle needs a require for that.
      banner: { js: "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);" },
    });
    for (const [file, text] of texts) {
      let rel = relative(dirname(file), join(VENDOR, out)).split(sep).join('/');
      if (!rel.startsWith('.')) rel = `./${rel}`;
      const next = text.replace(importOf(pkg), (_all, head: string, _names: string, q: string) => `${head}${q}${rel}${q}`);
      if (next !== text) texts.set(file, next);
    }
  }
  for (const [file, text] of texts) if (text !== readFileSync(file, 'utf8')) writeFileSync(file, text);
}

main().catch((err: unknown) => {
  process.stderr.write(`vendor-bundle failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
