// scripts/gateway-bundle.ts on a small built tree: main.js becomes an import of one bundle, every
// module still sees its own file as import.meta.url (what it reads beside itself is found), a
// dynamic import stays a chunk of its own that loads only when called, and a second run (main.js is
// then the stub) bundles tsc's main.js again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = new URL('../../scripts/gateway-bundle.ts', import.meta.url).pathname;
const bundle = (dist: string) => execFileSync(process.execPath, [SCRIPT, dist], { encoding: 'utf8' });
const runMain = (dist: string) => execFileSync(process.execPath, [join(dist, 'proxy/src/main.js')], { encoding: 'utf8' });

test('the gateway bundle keeps each module its own URL, keeps dynamic imports lazy, and can run again', () => {
  const dist = mkdtempSync(join(tmpdir(), 'skybridge-gateway-bundle-'));
  const src = join(dist, 'proxy/src');
  mkdirSync(join(src, 'deep/er'), { recursive: true });
  mkdirSync(join(src, 'optional'), { recursive: true });
  writeFileSync(join(src, 'deep/er/beside.txt'), 'found beside deep/er/reader.js');
  writeFileSync(join(src, 'deep/er/reader.js'), "import { readFileSync } from 'node:fs';\nexport class Reader {\n  /** path → text */\n  arrow = 'a → b';\n}\nexport const text = () => readFileSync(new URL('./beside.txt', import.meta.url), 'utf8');\nexport const own = import.meta.url;\n");
  writeFileSync(join(src, 'optional/part.js'), "globalThis.partLoaded = true;\nexport const hello = () => 'lazy part';\n");
  writeFileSync(
    join(src, 'main.js'),
    "#!/usr/bin/env node\nimport { text, own, Reader } from './deep/er/reader.js';\nconsole.log(text());\nconsole.log(own);\nconsole.log(String(globalThis.partLoaded === true));\nconsole.log(new Reader().arrow);\nif (process.argv.includes('--part')) console.log((await import('./optional/part.js')).hello());\nelse console.log('no part');\n",
  );
  bundle(dist);

  const main = readFileSync(join(src, 'main.js'), 'utf8');
  assert.ok(main.startsWith('#!/usr/bin/env node\n'), 'main.js keeps its shebang');
  assert.match(main, /import '\.\/bundle\/main\.js'/);
  const [found, own, loadedAtStart, arrow, part] = runMain(dist).trim().split('\n');
  assert.equal(arrow, 'a → b', 'text outside Latin-1 is the same once escaped');
  // V8 keeps a source with any character outside Latin-1 as two bytes per character.
  for (const f of readdirSync(join(src, 'bundle'))) assert.doesNotMatch(readFileSync(join(src, 'bundle', f), 'utf8'), /[^\u0000-\u00ff]/, `${f} is Latin-1 only`);
  assert.equal(found, 'found beside deep/er/reader.js');
  // Kept small (V8 holds the source text while the gateway runs): no comment text stays, and a map
  // leads a stack trace back to tsc's file.
  assert.doesNotMatch(readFileSync(join(src, 'bundle/main.js'), 'utf8'), /path \\u2192 text|path → text/, 'comments are not kept');
  assert.match(readFileSync(join(src, 'bundle/main.js.map'), 'utf8'), /deep\/er\/reader\.js/, 'the source map names the module\'s file');
  assert.equal(own, new URL(`file://${join(src, 'deep/er/reader.js')}`).href, 'import.meta.url is the module\'s own file');
  assert.equal(loadedAtStart, 'false', 'the dynamically imported part is not loaded at start');
  assert.equal(part, 'no part');
  const lazyOut = execFileSync(process.execPath, [join(src, 'main.js'), '--part'], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(lazyOut.at(-1), 'lazy part');
  const files = readdirSync(join(src, 'bundle'));
  assert.ok(files.some((f) => f !== 'main.js' && /["']lazy part["']/.test(readFileSync(join(src, 'bundle', f), 'utf8'))), 'the lazy part is a chunk of its own');
  assert.ok(!/["']lazy part["']/.test(readFileSync(join(src, 'bundle/main.js'), 'utf8')), 'the bundle\'s main does not carry the lazy part');

  // A second build where tsc did not emit main.js again: main.js is the stub, tsc's copy is bundled.
  writeFileSync(join(src, 'deep/er/beside.txt'), 'changed beside');
  bundle(dist);
  assert.equal(runMain(dist).trim().split('\n')[0], 'changed beside');
  assert.match(readFileSync(join(src, 'main.js'), 'utf8'), /import '\.\/bundle\/main\.js'/);
});
