// Gateway-wide settings from the environment (Kubernetes mode): how they merge into a rendered
// document, and how a bad one is refused, naming the variable and the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewaySettingsFromEnv, withGatewaySettings } from '../../proxy/src/config/env-settings.ts';
import { checkConfig } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';

const rendered = {
  document: {
    client: { max_request_body_size_mb: 4 },
    providers: { openai: { keys: [{ name: 'k', value: 'env.PROVIDER_OPENAI_KEY0', weight: 1 }] } },
    governance: { virtual_keys: [{ id: 'vk', name: 'vk', value: 'env.VIRTUALKEY_VK', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }] },
    mcp: { client_configs: [] },
  },
  env: { PROVIDER_OPENAI_KEY0: 'sk-1', VIRTUALKEY_VK: 'sk-bf-vk-1' },
};

test('no settings: the document is left as it is', () => {
  assert.equal(gatewaySettingsFromEnv({}), undefined);
  assert.equal(withGatewaySettings(rendered, undefined), rendered);
});

test('client and MCP settings merge over the rendered sections; management auth resolves from the environment', () => {
  const settings = gatewaySettingsFromEnv({
    SKYBRIDGE_CLIENT: '{"enforce_auth_on_inference":true,"allowed_origins":["https://a.example"]}',
    SKYBRIDGE_MCP: '{"tool_manager_config":{"tool_execution_timeout":12}}',
    SKYBRIDGE_SKILLS: '{"serving":"virtual_key","max_files":32}',
    SKYBRIDGE_ADMIN_USERNAME: 'admin',
    SKYBRIDGE_ADMIN_PASSWORD: 'pa55word-from-secret',
    SKYBRIDGE_ADMIN_API_KEYS: 'mgmt-key-aaaaaaaaaaaa, mgmt-key-bbbbbbbbbbbb\n',
  });
  const merged = withGatewaySettings(rendered, settings);
  const doc = merged.document as Record<string, Record<string, unknown>>;
  assert.deepEqual(doc.client, { max_request_body_size_mb: 4, enforce_auth_on_inference: true, allowed_origins: ['https://a.example'] });
  assert.deepEqual(doc.mcp, { client_configs: [], tool_manager_config: { tool_execution_timeout: 12 } });
  assert.deepEqual(doc.skills, { serving: 'virtual_key', max_files: 32 });
  // The rendered virtual keys stay; the credentials are references, never values, in the document.
  assert.equal((doc.governance.virtual_keys as unknown[]).length, 1);
  assert.ok(!JSON.stringify(merged.document).includes('pa55word-from-secret'));
  const { config } = checkConfig(merged.document, 'test', merged.env);
  assert.equal(config.governance?.auth_config?.admin_password, 'pa55word-from-secret');
  assert.deepEqual(config.governance?.auth_config?.api_keys, ['mgmt-key-aaaaaaaaaaaa', 'mgmt-key-bbbbbbbbbbbb']);
  assert.equal(config.governance?.auth_config?.is_enabled, true);
  assert.equal(compileSnapshot(config).config.client?.enforce_auth_on_inference, true);
  assert.equal(compileSnapshot(config).config.skills?.serving, 'virtual_key');
  // The input is not modified (the source keeps comparing what it read).
  assert.equal((rendered.document.client as Record<string, unknown>).enforce_auth_on_inference, undefined);
});

test('audit log settings: retention and disabled as JSON, the HMAC key from its own variable, a reference in the document', () => {
  const KEY = 'audit-hmac-key-from-a-secret-0123456789';
  const settings = gatewaySettingsFromEnv({ SKYBRIDGE_AUDIT_LOGS: '{"retention_days":30}', SKYBRIDGE_AUDIT_HMAC_KEY: KEY });
  const merged = withGatewaySettings({ ...rendered, document: { ...rendered.document, audit_logs: { retention_days: 7, disabled: true } } }, settings);
  assert.ok(!JSON.stringify(merged.document).includes(KEY), 'the key is a reference in the document');
  const { config } = checkConfig(merged.document, 'test', merged.env);
  // The deployment's settings win over the rendered section; what they leave out stays.
  assert.deepEqual(config.audit_logs, { retention_days: 30, disabled: true, hmac_key: KEY });
});

test('a rendered document cannot name the management credentials (their variable names are not guessable)', () => {
  const settings = gatewaySettingsFromEnv({ SKYBRIDGE_ADMIN_USERNAME: 'admin', SKYBRIDGE_ADMIN_PASSWORD: 'pa55word-from-secret' });
  const names = Object.keys(settings?.env ?? {});
  assert.equal(names.length, 2);
  for (const n of names) assert.match(n, /^SKYBRIDGE_ADMIN_(USERNAME|PASSWORD)_[0-9a-f]{24}$/);
  const probe = { document: { providers: { openai: { keys: [{ name: 'k', value: 'env.SKYBRIDGE_ADMIN_PASSWORD', weight: 1 }] } } }, env: {} };
  const merged = withGatewaySettings(probe, settings);
  assert.throws(() => checkConfig(merged.document, 'test', merged.env), /environment variable SKYBRIDGE_ADMIN_PASSWORD is not set/);
});

test('a bad setting is refused naming the variable and the field', () => {
  const cases: [NodeJS.ProcessEnv, RegExp][] = [
    [{ SKYBRIDGE_CLIENT: '{"enforce_auth_on_inference":"yes"}' }, /^SKYBRIDGE_CLIENT: enforce_auth_on_inference: /],
    [{ SKYBRIDGE_CLIENT: '{"no_such_field":1}' }, /^SKYBRIDGE_CLIENT: .*no_such_field/],
    [{ SKYBRIDGE_CLIENT: 'enforce_auth_on_inference=true' }, /^SKYBRIDGE_CLIENT must be a JSON object/],
    [{ SKYBRIDGE_CLIENT: '[]' }, /^SKYBRIDGE_CLIENT must be a JSON object/],
    [{ SKYBRIDGE_MCP: '{"client_configs":[]}' }, /^SKYBRIDGE_MCP: .*client_configs/],
    [{ SKYBRIDGE_MCP: '{"tool_manager_config":{"max_agent_depth":0}}' }, /^SKYBRIDGE_MCP: tool_manager_config\.max_agent_depth: /],
    [{ SKYBRIDGE_SKILLS: '{"serving":"everyone"}' }, /^SKYBRIDGE_SKILLS: serving: /],
    [{ SKYBRIDGE_ADMIN_USERNAME: 'admin' }, /SKYBRIDGE_ADMIN_USERNAME and SKYBRIDGE_ADMIN_PASSWORD must be set together/],
    [{ SKYBRIDGE_ADMIN_API_KEYS: 'short' }, /SKYBRIDGE_ADMIN_API_KEYS: governance\.auth_config\.api_keys\[0\]: /],
    [{ SKYBRIDGE_AUDIT_LOGS: '{"retention_days":-1}' }, /^SKYBRIDGE_AUDIT_LOGS: retention_days: /],
    [{ SKYBRIDGE_AUDIT_LOGS: '{"hmac_key":"inline-key-0123456789abcdef0123456789"}' }, /^SKYBRIDGE_AUDIT_LOGS: hmac_key is a secret: set it with SKYBRIDGE_AUDIT_HMAC_KEY/],
    [{ SKYBRIDGE_AUDIT_HMAC_KEY: 'too-short' }, /SKYBRIDGE_AUDIT_HMAC_KEY: audit_logs\.hmac_key: must be at least 32 bytes/],
  ];
  for (const [env, message] of cases) assert.throws(() => gatewaySettingsFromEnv(env), (err: Error) => message.test(err.message) || assert.fail(`${JSON.stringify(env)}: ${err.message}`));
  // The password itself never appears in a message.
  try {
    gatewaySettingsFromEnv({ SKYBRIDGE_ADMIN_USERNAME: 'admin', SKYBRIDGE_ADMIN_PASSWORD: 'hunter2-secret', SKYBRIDGE_ADMIN_API_KEYS: 'tiny-secret' });
    assert.fail('accepted a short API key');
  } catch (err) {
    assert.ok(!(err as Error).message.includes('tiny-secret') && !(err as Error).message.includes('hunter2-secret'), (err as Error).message);
  }
});
