import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { stableStringify } from '../../operator/src/render/stable-json.ts';
import { renderOutput, type RenderedOutput } from '../../operator/src/render/output.ts';
import { secretChecksum } from '../../proxy/src/schema/config-index.ts';
import { secretKeyName, LABELS } from '../../operator/src/render/contract.ts';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { assemble } from '../../proxy/src/config/kube-document.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { cr, ref, sampleResources, sampleSecrets, secrets, shuffled } from './operator-fixtures.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

function render(resources = sampleResources(), opts: { maxPartBytes?: number; indexUid?: string } = {}): RenderedOutput {
  const desired = desiredState(resources, sampleSecrets());
  return renderOutput(desired.input, { namespace: 'skybridge', ...opts });
}

/** What a proxy reads: ConfigMap data by name, Secret data by name. */
function lookups(out: RenderedOutput) {
  const cms = new Map([...out.parts, out.index].map((o) => [o.metadata.name, o.data]));
  return { configMap: (n: string) => cms.get(n), secret: (n: string) => (n === out.secret.metadata.name ? out.secret.data : undefined) };
}

test('stableStringify sorts keys at every depth, indents by 2 and ends with a newline', () => {
  assert.equal(stableStringify({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }), '{\n  "a": {\n    "c": null,\n    "d": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n');
  assert.equal(stableStringify({ x: undefined, y: 1 }), '{\n  "y": 1\n}\n');
});

test('the same resources in any order render byte-identical objects', () => {
  const base = render();
  for (let seed = 1; seed <= 20; seed++) {
    const again = render(shuffled(sampleResources(), seed));
    assert.equal(again.documentText, base.documentText);
    assert.deepEqual(again.parts, base.parts);
    assert.deepEqual(again.secret, base.secret);
    assert.equal(again.index.data['index.json'], base.index.data['index.json']);
  }
  // And rendering twice is a no-op for GitOps: same bytes.
  assert.equal(JSON.stringify(render()), JSON.stringify(base));
});

test('the document is the GatewayConfig the proxy accepts, secrets as env references, keys sorted', () => {
  const out = render();
  const doc = JSON.parse(out.documentText);
  assert.deepEqual(Object.keys(doc), ['governance', 'providers']);
  assert.deepEqual(Object.keys(doc.providers), ['anthropic', 'openai']);
  const openaiKey = secretKeyName('Provider', 'default', 'openai', 'keys_0_value');
  assert.equal(openaiKey, 'PROVIDER_DEFAULT_OPENAI_KEYS_0_VALUE');
  assert.deepEqual(doc.providers.openai.keys, [{ name: 'primary', value: `env.${openaiKey}`, weight: 1 }]);
  assert.deepEqual(doc.governance.virtual_keys, [
    {
      budget_id: 'vk-team-a',
      id: 'team-a',
      name: 'team-a',
      provider_configs: [{ allowed_models: ['*'], key_ids: ['*'], provider: 'openai' }],
      rate_limit_id: 'vk-team-a',
      value: 'env.VIRTUALKEY_DEFAULT_TEAM_A_VALUE',
    },
  ]);
  assert.deepEqual(doc.governance.budgets, [{ id: 'vk-team-a', max_limit: 10, reset_duration: '1d' }]);
  assert.deepEqual(doc.governance.rate_limits, [{ id: 'vk-team-a', request_max_limit: 100, request_reset_duration: '1m' }]);
  assert.equal(doc.governance.routing_rules[0].id, 'to-anthropic');
  // No secret value ever reaches a ConfigMap.
  for (const part of out.parts) for (const v of ['sk-openai-123', 'sk-ant-456', 'sk-bf-team-a-secret']) assert.ok(!part.data['config.part'].includes(v));
  // The Secret carries them; the proxy resolves env.X against it and accepts the whole document.
  const env = Object.fromEntries(Object.entries(out.secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  assert.equal(env[openaiKey], 'sk-openai-123');
  const { config } = checkConfig(doc, 'test', env);
  assert.equal(config.providers?.openai.keys?.[0].value, 'sk-openai-123');
  assert.equal(config.governance?.virtual_keys?.[0].value, 'sk-bf-team-a-secret');
});

test('index.json: revision, parts, checksums and secretChecksum as the contract defines them', () => {
  const out = render();
  const index = JSON.parse(out.index.data['index.json']);
  assert.equal(out.index.data['index.json'], stableStringify(index));
  assert.equal(index.revision, sha(out.documentText));
  assert.deepEqual(index.parts, ['skybridge-config-part-0']);
  assert.equal(index.checksums['skybridge-config-part-0'], sha(out.parts[0].data['config.part']));
  assert.equal(index.secret, 'skybridge-secrets');
  const d = out.secret.data;
  assert.equal(index.secretChecksum, sha(Object.keys(d).sort().map((k) => `${k}=${d[k]}\n`).join('')));
  assert.equal(secretChecksum({}), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.deepEqual(index.managed, {
    budgets: ['vk-team-a'],
    providers: ['anthropic', 'openai'],
    rate_limits: ['vk-team-a'],
    routing_rules: ['to-anthropic'],
    virtual_keys: ['team-a'],
  });
  assert.equal(index.sources['virtual_keys/team-a'], 'VirtualKey default/team-a');
  assert.equal(index.sources['budgets/vk-team-a'], 'VirtualKey default/team-a');
  assert.equal(index.sources['providers/openai'], 'Provider default/openai');
});

test("the proxy's own assembler reads what the operator renders, and the Secret is opaque with the contract's labels", () => {
  const out = render();
  const { configMap, secret } = lookups(out);
  const assembled = assemble(configMap, secret);
  assert.equal(assembled.state, 'complete');
  if (assembled.state !== 'complete') return;
  assert.deepEqual(assembled.document, JSON.parse(out.documentText));
  assert.equal(assembled.env.PROVIDER_DEFAULT_ANTHROPIC_KEYS_0_VALUE, 'sk-ant-456');
  for (const o of [...out.parts, out.secret, out.index]) {
    assert.deepEqual(o.metadata.labels, LABELS);
    assert.equal(o.metadata.namespace, 'skybridge');
  }
  assert.equal(out.secret.type, 'Opaque');
  // A part rewritten without the index moving on is seen as a partial write.
  const tampered = { ...out.parts[0].data, 'config.part': out.parts[0].data['config.part'].replace('anthropic', 'anthropiq') };
  assert.equal(assemble((n) => (n === out.parts[0].metadata.name ? tampered : configMap(n)), secret).state, 'partial');
});

test('parts and Secret are owned by the index once its uid is known; the index owns nothing', () => {
  const without = render();
  assert.equal(without.parts[0].metadata.ownerReferences, undefined);
  const owned = render(sampleResources(), { indexUid: 'index-uid-1' });
  assert.deepEqual(owned.parts[0].metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'skybridge-config-index', uid: 'index-uid-1', controller: true }]);
  assert.deepEqual(owned.secret.metadata.ownerReferences, owned.parts[0].metadata.ownerReferences);
  assert.equal(owned.index.metadata.ownerReferences, undefined);
  // Ownership changes metadata only: the data and checksums do not move.
  assert.equal(owned.index.data['index.json'], without.index.data['index.json']);
});

test('no resources render an empty document (the proxies drop what was deleted)', () => {
  const out = render([]);
  assert.equal(out.documentText, '{}\n');
  assert.deepEqual(out.secret.data, {});
  assert.deepEqual(JSON.parse(out.index.data['index.json']).managed, {});
});

test('editing one resource changes only what it touches', () => {
  const before = render();
  const edited = sampleResources().map((r) =>
    r.metadata.name === 'anthropic' ? cr('Provider', 'anthropic', { keys: [{ name: 'main', valueFrom: ref('anthropic-creds', 'key') }], network_config: { max_retries: 3 } }) : r,
  );
  const after = render(edited);
  assert.notEqual(after.documentText, before.documentText);
  assert.match(after.documentText, /"max_retries": 3/);
  assert.deepEqual(after.secret, before.secret);
});

test('sameAsLive: data, labels and the owner asked for; extra owners and server fields do not count', async () => {
  const { sameAsLive } = await import('../../operator/src/controller.ts');
  const out = render(sampleResources(), { indexUid: 'u1' });
  const part = out.parts[0];
  const live = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: part.metadata.name, uid: 'x', resourceVersion: '7', labels: { ...part.metadata.labels, extra: 'yes' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'skybridge-config-index', uid: 'u1' }] }, data: { ...part.data } };
  assert.equal(sameAsLive(part, live), true);
  assert.equal(sameAsLive(part, undefined), false);
  assert.equal(sameAsLive(part, { ...live, data: { 'config.part': 'other' } }), false);
  assert.equal(sameAsLive(part, { ...live, data: { ...part.data, stray: 'x' } }), false);
  assert.equal(sameAsLive(part, { ...live, metadata: { ...live.metadata, labels: {} } }), false);
  assert.equal(sameAsLive(part, { ...live, metadata: { ...live.metadata, ownerReferences: [] } }), false);
  // Rendered before the index uid was known: an owned live part still matches.
  assert.equal(sameAsLive(render().parts[0], live), true);
});

test('Bedrock and Vertex credentials in a Provider come from Secrets too, never from the spec', () => {
  const bedrock = cr('Provider', 'bedrock', {
    keys: [{
      name: 'aws',
      valueFrom: ref('aws-creds', 'unused'),
      bedrock_key_config: { region: 'us-east-1', access_keyFrom: ref('aws-creds', 'id'), secret_keyFrom: ref('aws-creds', 'secret') },
    }],
  });
  const secretsWithAws = secrets({
    'default/aws-creds': { unused: 'x', id: 'AKIAEXAMPLE', secret: 'aws-secret-value' },
  });
  const desired = desiredState([bedrock], secretsWithAws);
  const out = renderOutput(desired.input, { namespace: 'skybridge' });
  assert.doesNotMatch(out.documentText, /AKIAEXAMPLE|aws-secret-value/);
  const key = (JSON.parse(out.documentText) as { providers: { bedrock: { keys: { bedrock_key_config: Record<string, string> }[] } } }).providers.bedrock.keys[0].bedrock_key_config;
  assert.match(key.access_key, /^env\./);
  assert.match(key.secret_key, /^env\./);
  const data = out.secret.data as Record<string, string>;
  assert.equal(Buffer.from(data[key.secret_key.slice(4)], 'base64').toString(), 'aws-secret-value');
  // A literal credential is refused with a message naming the field to use instead.
  const literal = desiredState([cr('Provider', 'bedrock', { keys: [{ name: 'aws', valueFrom: ref('aws-creds', 'unused'), bedrock_key_config: { region: 'us-east-1', secret_key: 'inline' } }] })], secretsWithAws);
  const verdict = [...literal.verdicts.values()][0];
  assert.equal(verdict.accepted, false);
  assert.match(verdict.message, /secret_keyFrom/);
});
