import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { MAX_PART_BYTES, shardText } from '../../operator/src/render/shard.ts';
import { renderOutput } from '../../operator/src/render/output.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { cr, ref, secrets } from './operator-fixtures.ts';
import type { CustomResource } from '../../operator/src/resources/kinds.ts';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

test('shardText: parts join back to the text, each within the byte limit, cut between code points', () => {
  const text = 'aé€😀'.repeat(1000); // 1, 2, 3 and 4 UTF-8 bytes (the last a surrogate pair)
  for (const max of [4, 5, 7, 100, 1023]) {
    const parts = shardText(text, max);
    assert.equal(parts.join(''), text);
    for (const p of parts) {
      assert.ok(bytes(p) <= max, `${bytes(p)} > ${max}`);
      assert.ok(p.length > 0);
      // A lone surrogate would not survive the UTF-8 round trip.
      assert.equal(Buffer.from(p, 'utf8').toString('utf8'), p);
    }
    // Greedy: every part but the last is full up to the next code point.
    for (const p of parts.slice(0, -1)) assert.ok(bytes(p) > max - 4);
  }
  assert.deepEqual(shardText(''), ['']);
  assert.deepEqual(shardText('abc'), ['abc']);
  assert.throws(() => shardText('abc', 3), RangeError);
});

/** Enough virtual keys with long descriptions to make a document of well over 2 MiB. */
function largeConfig(): CustomResource[] {
  const resources: CustomResource[] = [cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('creds', 'openai') }] })];
  for (let i = 0; i < 1200; i++) {
    resources.push(
      cr('VirtualKey', `vk-${String(i).padStart(4, '0')}`, {
        description: `Team ${i} — ${'ü'.repeat(900)}`,
        valueFrom: ref('creds', `vk${i}`),
        provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o', 'gpt-4o-mini'], key_ids: ['*'] }],
        budget: { max_limit: i, reset_duration: '1M' },
      }),
    );
  }
  return resources;
}

test('a large configuration is sharded into parts under 900 KiB that reassemble and verify', () => {
  const data: Record<string, string> = { openai: 'sk-openai-large' };
  for (let i = 0; i < 1200; i++) data[`vk${i}`] = `sk-bf-large-${i}-secret`;
  const desired = desiredState(largeConfig(), secrets({ 'default/creds': data }));
  assert.equal([...desired.verdicts.values()].filter((v) => !v.accepted).length, 0);
  const out = renderOutput(desired.input, { namespace: 'skybridge' });

  assert.ok(bytes(out.documentText) > 2 * 1024 * 1024, `document is ${bytes(out.documentText)} bytes`);
  assert.ok(out.parts.length >= 3, `${out.parts.length} parts`);
  assert.deepEqual(out.parts.map((p) => p.metadata.name), out.parts.map((_, n) => `skybridge-config-part-${n}`));
  for (const p of out.parts) {
    const size = bytes(p.data['config.part']);
    assert.ok(size <= MAX_PART_BYTES, `${p.metadata.name} is ${size} bytes`);
    // The whole object, as JSON, stays under the 1 MiB object limit.
    assert.ok(bytes(JSON.stringify(p)) < 1024 * 1024);
  }
  const index = JSON.parse(out.index.data['index.json']);
  assert.deepEqual(index.parts, out.parts.map((p) => p.metadata.name));
  for (const p of out.parts) assert.equal(index.checksums[p.metadata.name], createHash('sha256').update(p.data['config.part']).digest('hex'));
  // 1,200 resources' sources are over the 64 KiB the index keeps inline: they are in parts of their own.
  assert.ok(out.sourceParts.length >= 1);
  assert.deepEqual(index.sourceParts, out.sourceParts.map((p) => p.metadata.name));

  const cms = new Map([...out.parts, ...out.sourceParts, out.index].map((o) => [o.metadata.name, o.data]));
  const assembled = assemble((n) => cms.get(n), (n) => (n === 'skybridge-secrets' ? out.secret.data : undefined));
  assert.equal(assembled.state, 'complete');
  if (assembled.state === 'complete') {
    assert.equal(assembled.env.VIRTUALKEY_DEFAULT_VK_0042_VALUE, 'sk-bf-large-42-secret');
    assert.equal(assembled.index.managed.virtual_keys.length, 1200);
  }

  // A part limit below the size of the runs between resource boundaries slices them: more parts of the same document.
  const small = renderOutput(desired.input, { namespace: 'skybridge', maxPartBytes: 16 * 1024 });
  assert.equal(small.revision, out.revision);
  assert.ok(small.parts.length > out.parts.length);
  assert.equal(small.parts.map((p) => p.data['config.part']).join(''), out.documentText);
});
