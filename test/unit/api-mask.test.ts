// Masking of secrets in management API answers, and the way masked values sent back are kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskSecret, maskTree, redact, REDACTED, unmask, isMaskOf } from '../../proxy/src/api/mask.ts';
import { maskDocument } from '../../proxy/src/api/config.ts';
import { relativePath } from '../../proxy/src/api/errors.ts';
import type { GatewayConfig } from '../../proxy/src/schema/gateway.ts';

test('maskSecret shows the first three and last four characters of a long secret, nothing of a short one, env.VAR as is', () => {
  assert.equal(maskSecret('sk-proj-abcdefghijklmnop1234'), 'sk-...1234');
  assert.equal(maskSecret('sk-bf-0b7c1f4e-8a0e-4a7b-9c1d-5e6f7a8b9c0d'), 'sk-...9c0d');
  assert.equal(maskSecret('short-secret'), REDACTED);
  assert.equal(maskSecret(''), REDACTED);
  assert.equal(maskSecret('env.OPENAI_API_KEY'), 'env.OPENAI_API_KEY');
  assert.equal(redact('hunter2hunter2hunter2'), REDACTED);
  assert.equal(redact('env.ADMIN_PASSWORD'), 'env.ADMIN_PASSWORD');
});

test('maskDocument hides every secret of a full config document and leaves the rest', () => {
  const vertexCredentials = JSON.stringify({ type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' });
  const doc = {
    providers: {
      openai: {
        keys: [{ name: 'primary', value: 'sk-live-0123456789abcdefghij', models: ['gpt-4o'], weight: 1 }],
        network_config: { base_url: 'https://api.openai.com', extra_headers: { Authorization: 'Bearer hdr-secret-0123456789', 'x-team': 'search' } },
        proxy_config: { type: 'http', url: 'http://proxy:3128', password: 'proxy-pass' },
      },
      bedrock: { keys: [{ name: 'aws', value: '', bedrock_key_config: { access_key: 'AKIAABCDEFGHIJKLMNOP', secret_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', session_token: 'FwoGZXIvYXdzEJr-session-token', region: 'us-east-1' } }] },
      vertex: { keys: [{ name: 'gcp', value: '', vertex_key_config: { project_id: 'p', region: 'us-east5', auth_credentials: vertexCredentials } }] },
      azure: { keys: [{ name: 'az', value: 'env.AZURE_KEY', azure_key_config: { endpoint: 'https://r.openai.azure.com' } }] },
    },
    governance: {
      virtual_keys: [{ id: 'vk', name: 'vk', value: 'sk-bf-11111111-2222-3333-4444-555555555555' }],
      auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'admin-password-123', api_keys: ['mgmt-key-0123456789abcdef', 'env.MGMT_KEY'] },
      routing_rules: [{ name: 'r', targets: [{ weight: 1 }], query: { rules: [{ field: 'model', operator: '=', value: 'gpt-4o' }] } }],
      rate_limits: [{ id: 'rl', token_max_limit: 10, token_reset_duration: '1h' }],
    },
    auth_config: { admin_password: 'legacy-password-456' },
    redis: { addr: 'redis:6379', username: 'gw', password: 'redis-password-789', key_prefix: 'skybridge:' },
    plugins: [{ name: 'maxim', enabled: true, config: { api_key: 'maxim-api-key-0123456789', log_repo_id: 'repo' } }],
    webhooks: [{ name: 'w', url: 'https://example.com/h', events: ['async_job.completed'], headers: { 'x-receiver': 'receiver-plain-value', 'x-ref': 'env.WH_HEADER' } }],
  } as unknown as GatewayConfig;
  const masked = maskDocument(doc) as typeof doc & Record<string, never>;
  const text = JSON.stringify(masked);
  for (const secret of [
    'sk-live-0123456789abcdefghij', 'hdr-secret-0123456789', 'proxy-pass', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'FwoGZXIvYXdzEJr-session-token',
    'BEGIN PRIVATE KEY', 'sk-bf-11111111-2222-3333-4444-555555555555', 'admin-password-123', 'mgmt-key-0123456789abcdef',
    'legacy-password-456', 'redis-password-789', 'maxim-api-key-0123456789', 'receiver-plain-value',
  ]) {
    assert.ok(!text.includes(secret), `${secret} is visible`);
  }
  const m = masked as unknown as {
    providers: Record<string, { keys: { value: string; models?: string[]; bedrock_key_config?: Record<string, string>; vertex_key_config?: Record<string, string> }[]; network_config?: { extra_headers: Record<string, string> } }>;
    governance: { auth_config: { admin_username: string; admin_password: string; api_keys: string[] }; routing_rules: { query: unknown }[]; rate_limits: { token_reset_duration: string }[] };
    redis: Record<string, string>;
  };
  assert.equal(m.providers.openai.keys[0].value, 'sk-...ghij');
  assert.deepEqual(m.providers.openai.keys[0].models, ['gpt-4o']);
  assert.equal(m.providers.openai.network_config!.extra_headers['x-team'], 'search');
  assert.equal(m.providers.bedrock.keys[0].bedrock_key_config!.region, 'us-east-1');
  assert.equal(m.providers.vertex.keys[0].vertex_key_config!.auth_credentials, REDACTED);
  assert.equal(m.providers.vertex.keys[0].vertex_key_config!.project_id, 'p');
  assert.equal(m.providers.azure.keys[0].value, 'env.AZURE_KEY');
  assert.equal(m.governance.auth_config.admin_username, 'admin');
  assert.equal(m.governance.auth_config.admin_password, REDACTED);
  assert.deepEqual(m.governance.auth_config.api_keys, ['mgm...cdef', 'env.MGMT_KEY']);
  // A routing rule's query tree has `value` fields that are not secrets.
  assert.deepEqual(m.governance.routing_rules[0].query, { rules: [{ field: 'model', operator: '=', value: 'gpt-4o' }] });
  assert.equal(m.governance.rate_limits[0].token_reset_duration, '1h');
  assert.equal(m.redis.password, REDACTED);
  assert.equal(m.redis.key_prefix, 'skybridge:');
  assert.deepEqual((masked as unknown as { webhooks: { headers: unknown }[] }).webhooks[0].headers, { 'x-receiver': REDACTED, 'x-ref': 'env.WH_HEADER' });
  // The input is untouched.
  assert.equal((doc.redis as { password: string }).password, 'redis-password-789');
});

test('maskTree masks a list of keys and a credentials object leaf by leaf', () => {
  assert.deepEqual(maskTree({ api_keys: ['0123456789abcdefXYZW', 'env.K'] }), { api_keys: ['012...XYZW', 'env.K'] });
  assert.deepEqual(maskTree({ credentials: { client_id: 'id', client_secret: 'cs' } }), { credentials: { client_id: REDACTED, client_secret: REDACTED } });
  assert.deepEqual(maskTree({ weight: 1, enabled: true, value: null }), { weight: 1, enabled: true, value: null });
});

test('unmask restores a stored secret the client sent back masked, and takes a real new value', () => {
  const stored = { name: 'k', value: 'sk-live-0123456789abcdefghij', bedrock_key_config: { secret_key: 'aws-secret-0123456789', region: 'us-east-1' } };
  const shown = maskTree(stored) as typeof stored;
  assert.deepEqual(unmask(shown, stored), stored);
  assert.deepEqual(unmask({ ...shown, value: 'sk-new-value-0000000000000' }, stored), { ...stored, value: 'sk-new-value-0000000000000' });
  assert.deepEqual(unmask({ value: 'env.NEW' }, stored), { value: 'env.NEW' });
  assert.equal(isMaskOf('sk-...ghij', 'sk-live-0123456789abcdefghij'), true);
  assert.equal(isMaskOf('sk-live-0123456789abcdefghij', 'sk-live-0123456789abcdefghij'), false);
  assert.equal(isMaskOf(REDACTED, 'pw'), true);
});

test('relativePath turns document paths inside the written record into body paths', () => {
  const aliases = [['governance.virtual_keys[3]', ''], ['governance.budgets[1]', 'budget']] as const;
  assert.equal(relativePath('governance.virtual_keys[3].provider_configs[0].provider', aliases), 'provider_configs[0].provider');
  assert.equal(relativePath('governance.virtual_keys[3].name', aliases), 'name');
  assert.equal(relativePath('governance.virtual_keys[3]', aliases), '(root)');
  assert.equal(relativePath('governance.budgets[1].reset_duration', aliases), 'budget.reset_duration');
  assert.equal(relativePath('governance.virtual_keys[30].name', aliases), 'governance.virtual_keys[30].name');
  assert.equal(relativePath('providers.openai.keys', aliases), 'providers.openai.keys');
});

test('a body nested far deeper than any accepted one is masked without overflowing the stack (a refused write is still audited)', () => {
  let deep: unknown = 'sk-live-abcdefghijklmnop';
  for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { a: deep };
  const masked = JSON.stringify(maskTree({ api_key: 'sk-live-abcdefghijklmnop', body: deep }));
  assert.match(masked, /\[nested too deep\]/);
  assert.ok(!masked.includes('sk-live-abcdefghijklmnop'));
  let secretDeep: unknown = 'sk-live-abcdefghijklmnop';
  for (let i = 0; i < 100_000; i++) secretDeep = { x: secretDeep };
  assert.ok(!JSON.stringify(maskTree({ secret: secretDeep })).includes('sk-live'));
  // Shallow trees are unchanged by the bound.
  assert.deepEqual(maskTree({ a: [{ b: { c: 'x' } }] }), { a: [{ b: { c: 'x' } }] });
});
