// scripts/vendor-bundle.ts on a small built tree: imports of the many-module packages point to one
// bundle each, the code still runs against them, and a second run (tsc re-emitted one file) keeps
// every name any file imports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = new URL('../../scripts/vendor-bundle.ts', import.meta.url).pathname;
const run = (dist: string) => execFileSync(process.execPath, [SCRIPT, dist], { encoding: 'utf8' });

test('dist imports of TypeBox, ajv and prom-client become one bundle each, and still work', async () => {
  const dist = mkdtempSync(join(tmpdir(), 'skybridge-vendor-'));
  mkdirSync(join(dist, 'proxy/src/schema'), { recursive: true });
  const schema = join(dist, 'proxy/src/schema/a.js');
  const check = join(dist, 'proxy/src/check.js');
  writeFileSync(schema, "import { Type } from '@sinclair/typebox';\nexport const S = Type.Object({ n: Type.Integer({ minimum: 1 }) });\n");
  writeFileSync(check, "import { Ajv } from 'ajv';\nimport { Registry, Counter } from 'prom-client';\nimport { S } from './schema/a.js';\nconst check = new Ajv().compile(S);\nconst r = new Registry();\nnew Counter({ name: 'c_total', help: 'h', registers: [r] }).inc();\nexport const result = { good: check({ n: 2 }), bad: check({ n: 0 }), metrics: await r.metrics() };\n");
  run(dist);
  assert.match(readFileSync(schema, 'utf8'), /from '\.\.\/\.\.\/\.\.\/vendor\/typebox\.js'/);
  assert.match(readFileSync(check, 'utf8'), /from '\.\.\/\.\.\/vendor\/ajv\.js'/);
  assert.match(readFileSync(check, 'utf8'), /from '\.\.\/\.\.\/vendor\/prom-client\.js'/);
  const { result } = (await import(check)) as { result: { good: boolean; bad: boolean; metrics: string } };
  assert.equal(result.good, true);
  assert.equal(result.bad, false);
  assert.match(result.metrics, /^c_total 1$/m);

  // tsc emitted one file again (its import back to the package) and another file uses a second name.
  writeFileSync(join(dist, 'proxy/src/b.js'), "import { Gauge } from 'prom-client';\nexport const G = Gauge;\n");
  run(dist);
  assert.match(readFileSync(join(dist, 'proxy/src/b.js'), 'utf8'), /vendor\/prom-client\.js/);
  // A fresh copy of the rebuilt bundle (the first is cached by the module loader).
  const bundle = (await import(`${join(dist, 'vendor/prom-client.js')}?rebuilt`)) as Record<string, unknown>;
  for (const name of ['Counter', 'Registry', 'Gauge']) assert.equal(typeof bundle[name], 'function', `the bundle exports ${name}`);
  assert.ok(existsSync(join(dist, 'vendor/typebox.js')));
});
