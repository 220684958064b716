// The audit log's hash chain as pure functions: a chain verifies; an edited, removed or reordered
// record is named; under an HMAC key nobody without it can rebuild a chain that verifies; the
// reload diff names paths only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRun, GENESIS, keyId, linkHash, type AuditContent, type StoredLink } from '../../proxy/src/audit/chain.ts';
import { changedPaths } from '../../proxy/src/audit/diff.ts';

function content(seq: number, over: Partial<AuditContent> = {}): AuditContent {
  return {
    seq, id: `r${seq}`, timestamp: 1_700_000_000_000 + seq, actor_type: 'admin', actor_id: null, actor_name: 'admin', session_id: null,
    remote_address: '127.0.0.1', user_agent: 'test', action: 'update', resource: 'governance/virtual-keys', resource_id: `vk-${seq}`,
    method: 'PUT', path: `/api/governance/virtual-keys/vk-${seq}`, status_code: 200, outcome: 'success', details: JSON.stringify({ request: { n: seq } }), ...over,
  };
}

function chain(n: number, key?: string): StoredLink[] {
  const out: StoredLink[] = [];
  let prev = GENESIS;
  for (let seq = 1; seq <= n; seq++) {
    const c = content(seq);
    const hash = linkHash(prev, c, key);
    out.push({ ...c, key_id: keyId(key), prev_hash: prev, hash });
    prev = hash;
  }
  return out;
}

test('an untouched chain verifies to its last record', () => {
  const links = chain(5);
  const r = checkRun(links, 0, GENESIS, undefined);
  assert.equal(r.broken, undefined);
  assert.equal(r.lastSeq, 5);
  assert.equal(r.lastHash, links[4].hash);
});

test('an edited record is named by its own hash', () => {
  const links = chain(5);
  links[2] = { ...links[2], details: JSON.stringify({ request: { n: 999 } }) };
  const r = checkRun(links, 0, GENESIS, undefined);
  assert.equal(r.broken?.seq, 3);
  assert.equal(r.broken?.reason, 'hash_mismatch');
});

test('an edited record whose hash was recomputed breaks the link of the next one', () => {
  const links = chain(5);
  const edited = { ...content(3), actor_name: 'someone else' };
  links[2] = { ...links[2], ...edited, hash: linkHash(links[2].prev_hash, edited, undefined) };
  const r = checkRun(links, 0, GENESIS, undefined);
  assert.equal(r.broken?.seq, 4);
  assert.equal(r.broken?.reason, 'prev_hash_mismatch');
});

test('a removed record is named by the one after the gap', () => {
  const links = chain(5);
  links.splice(1, 1);
  const r = checkRun(links, 0, GENESIS, undefined);
  assert.equal(r.broken?.seq, 3);
  assert.equal(r.broken?.reason, 'missing_records');
  assert.match(r.broken!.message, /1 record\(s\) before it were removed/);
});

test('under an HMAC key: a chain rebuilt with plain SHA-256 or another key does not verify', () => {
  const key = 'k'.repeat(40);
  const links = chain(3, key);
  assert.equal(checkRun(links, 0, GENESIS, key).broken, undefined);
  assert.notEqual(keyId(key), 'sha256');
  assert.ok(!keyId(key).includes(key), 'the key id is a fingerprint, not the key');
  // A forger without the key rebuilds the chain with SHA-256 but must claim the key's id to be checked.
  const forged = chain(3).map((l) => ({ ...l, key_id: keyId(key) }));
  assert.equal(checkRun(forged, 0, GENESIS, key).broken?.reason, 'hash_mismatch');
  // Records under an earlier key are linked but counted as unverifiable, not passed silently.
  const r = checkRun(links, 0, GENESIS, 'another key that is long enough 123');
  assert.equal(r.broken, undefined);
  assert.equal(r.unverifiable, 3);
});

test('the reload diff names paths, by id inside lists, and no values', () => {
  const before = { providers: { openai: { keys: [{ name: 'a', value: 'sk-secret-1' }] } }, governance: { virtual_keys: [{ id: 'vk-1', name: 'one' }, { id: 'vk-2', name: 'two' }] } };
  const after = { providers: { openai: { keys: [{ name: 'a', value: 'sk-secret-2' }] } }, governance: { virtual_keys: [{ id: 'vk-2', name: 'two' }, { id: 'vk-1', name: 'uno' }] }, client: { drop_excess_requests: true } };
  const paths = changedPaths(before, after);
  // A section added whole is named once.
  assert.deepEqual(paths, ['client', 'governance.virtual_keys[vk-1]', 'providers.openai.keys']);
  assert.ok(!JSON.stringify(paths).includes('sk-secret'));
});
