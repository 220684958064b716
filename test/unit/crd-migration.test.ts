// Migrating to v1beta1: the examples exist in both versions and agree, the manifest rewriter gives
// the webhook's objects and keeps comments, and docs/kubernetes.md holds the current name table.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { convertObject } from '../../operator/src/conversion/convert.ts';
import { convertManifests } from '../../operator/src/conversion/manifests.ts';
import { fieldMappingTable } from '../../operator/src/crds/mapping-doc.ts';
import { KINDS, type KindName } from '../../operator/src/resources/kinds.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

const docsOf = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => ({ file: f, doc: d.toJS() as { apiVersion: string; kind: KindName; metadata: { name: string }; spec: unknown } })))
    .filter((d) => d.doc.apiVersion.startsWith('gateway.skybridge.dev/'));

describe('examples in both versions', () => {
  const alpha = docsOf(join(ROOT, 'examples/kubernetes'));
  const beta = docsOf(join(ROOT, 'examples/kubernetes/v1beta1'));

  test('every kind has a v1beta1 example, and each is the v1alpha1 example converted', () => {
    assert.deepEqual(new Set(beta.map((d) => d.doc.kind)), new Set(KINDS.map((k) => k.kind)));
    assert.ok(beta.every((d) => d.doc.apiVersion === 'gateway.skybridge.dev/v1beta1'));
    for (const a of alpha) {
      const b = beta.find((d) => d.doc.kind === a.doc.kind && d.doc.metadata.name === a.doc.metadata.name);
      assert.ok(b, `no v1beta1 example of ${a.doc.kind} ${a.doc.metadata.name}`);
      assert.deepEqual(convertObject(a.doc, 'v1beta1'), b.doc, `${b.file}: not ${a.file} in v1beta1`);
      assert.deepEqual(convertObject(b.doc, 'v1alpha1'), a.doc, `${b.file} -> v1alpha1 is not ${a.file}`);
    }
    assert.equal(beta.length, alpha.length);
  });
});

describe('the manifest rewriter (scripts/convert-manifests.ts)', () => {
  const dir = join(ROOT, 'examples/kubernetes');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    test(`${file}: rewritten to v1beta1 gives the webhook's objects, keeps comments, and comes back`, () => {
      const text = readFileSync(join(dir, file), 'utf8');
      const beta = convertManifests(text, 'v1beta1');
      const before = parseAllDocuments(text).map((d) => d.toJS() as { apiVersion: string });
      const after = parseAllDocuments(beta.text).map((d) => d.toJS() as unknown);
      assert.deepEqual(after, before.map((d) => (d.apiVersion.startsWith('gateway.skybridge.dev/') ? convertObject(d, 'v1beta1') : d)));
      assert.equal(beta.converted.length, before.filter((d) => d.apiVersion.startsWith('gateway.skybridge.dev/')).length);
      const comments = (t: string) => t.split('\n').filter((l) => l.trim().startsWith('#'));
      assert.deepEqual(comments(beta.text), comments(text));
      assert.deepEqual(parseAllDocuments(convertManifests(beta.text, 'v1alpha1').text).map((d) => d.toJS() as unknown), before);
    });
  }

  test('a field the version does not have stops the rewrite, naming the resource and the field', () => {
    const text = 'apiVersion: gateway.skybridge.dev/v1alpha1\nkind: VirtualKey\nmetadata:\n  name: a\nspec:\n  budget:\n    max_limt: 5\n';
    assert.throws(() => convertManifests(text, 'v1beta1'), /^Error: VirtualKey a: spec\.budget\.max_limt: unknown field/);
  });
});

describe('docs/kubernetes.md', () => {
  test('the field mapping table is the generated one', () => {
    const doc = readFileSync(join(ROOT, 'docs/kubernetes.md'), 'utf8');
    const table = fieldMappingTable();
    assert.ok(table.split('\n').length > 20);
    assert.ok(doc.includes(table), 'docs/kubernetes.md: the v1alpha1 -> v1beta1 field table is stale: run npm run gen:crds');
  });
});
