// The x-bf-* header registry (proxy/src/bf-headers.ts) is the one list: README.md's table is
// rendered from it, and no code reads or writes an x-bf-* header it does not list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BF_HEADERS, bfHeaderTable } from '../../proxy/src/bf-headers.ts';
import { headerTableIn } from '../helpers/readme-headers.ts';

const ROOT = resolve(import.meta.dirname, '../..');

test("README.md's table of x-bf-* headers is the registry's (regenerate: node scripts/readme-headers.ts)", () => {
  const table = headerTableIn(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  assert.ok(table !== undefined, 'README.md has the x-bf-headers markers');
  assert.equal(table, bfHeaderTable());
});

test('every x-bf-* name in the gateway code is in the registry', () => {
  const registered = Object.values(BF_HEADERS).map((h) => h.name);
  const known = (name: string) => registered.some((r) => (r.endsWith('-') ? name.startsWith(r) : name === r));
  const unknown: string[] = [];
  for (const dir of ['proxy/src', 'operator/src']) {
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      for (const m of readFileSync(join(ROOT, dir, f), 'utf8').matchAll(/x-bf-[a-z0-9-]*[a-z0-9-]/gi)) {
        if (!known(m[0].toLowerCase())) unknown.push(`${dir}/${f}: ${m[0]}`);
      }
    }
  }
  assert.deepEqual(unknown, []);
});

test('registry entries are unique, lower case, and each names a doc page that exists', () => {
  const names = Object.values(BF_HEADERS).map((h) => h.name);
  assert.equal(new Set(names).size, names.length);
  for (const h of Object.values(BF_HEADERS)) {
    assert.match(h.name, /^x-bf-[a-z0-9-]+$/);
    assert.doesNotThrow(() => readFileSync(join(ROOT, h.doc)), h.doc);
    assert.ok(!h.description.includes('|') && !h.description.includes('\n'), `${h.name}: one table cell`);
  }
});
