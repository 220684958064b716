// The reference grammar (schema/env-ref.ts) and the vault settings (config/vault-client.ts): what is
// a vault reference, what each error names, and how the `vault` section and VAULT_ADDR/VAULT_TOKEN
// become a login. Reads from a real server are tested in test/integration/vault.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVaultRef, readRef, type VaultLookup } from '../../proxy/src/schema/env-ref.ts';
import { loginRequest, vaultSettings } from '../../proxy/src/config/vault-client.ts';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { VaultSecrets } from '../../proxy/src/config/vault.ts';

test('vault.<path>#<field> parses into a path and a field; a missing #field or an odd character is said so', () => {
  assert.deepEqual(parseVaultRef('vault.team-a/openai.prod#api_key'), { path: 'team-a/openai.prod', field: 'api_key' });
  assert.match((parseVaultRef('vault.team-a/openai') as { error: string }).error, /#<field> is missing/);
  assert.match((parseVaultRef('vault.a//b#k') as { error: string }).error, /segments separated by \//);
  assert.match((parseVaultRef('vault.a/b#k?x') as { error: string }).error, /letters, digits/);
});

test('readRef: literals as they are, env from the environment, vault from the lookup, each error naming the variable or path', () => {
  const lookup: VaultLookup = (ref) => (ref.path === 'p' && ref.field === 'f' ? { value: 'from-vault' } : { error: `vault reference ${ref.path}#${ref.field}: nope` });
  assert.deepEqual(readRef('plain', {}, lookup), { value: 'plain' });
  assert.deepEqual(readRef('env.A', { A: 'x' }, lookup), { value: 'x' });
  assert.deepEqual(readRef('env.B', {}, lookup), { error: 'environment variable B is not set' });
  assert.deepEqual(readRef('vault.p#f', {}, lookup), { value: 'from-vault' });
  assert.match((readRef('vault.p#g', {}, lookup) as { error: string }).error, /p#g: nope/);
  assert.match((readRef('vault.p#f', {}, undefined) as { error: string }).error, /no vault is configured/);
});

test('the config check resolves vault references where references are read, and refuses one elsewhere, naming the field', () => {
  const lookup: VaultLookup = () => ({ value: 'sk-from-vault-0001' });
  const doc = { providers: { openai: { keys: [{ name: 'k', value: 'vault.skybridge/openai#api_key', weight: 1 }] } } };
  assert.equal(checkConfig(doc, 'test', {}, lookup).config.providers?.openai.keys?.[0].value, 'sk-from-vault-0001');
  assert.equal(checkConfig(doc, 'test', {}, lookup).raw.providers?.openai.keys?.[0].value, 'vault.skybridge/openai#api_key');
  assert.throws(() => checkConfig(doc, 'test', {}, undefined), (err: ConfigError) => err.errors.some((e) => e.path === 'providers.openai.keys[0].value' && /no vault is configured/.test(e.message)));
  assert.throws(
    () => checkConfig({ ...doc, client: { allowed_origins: ['vault.x/y#z'] } }, 'test', {}, lookup),
    (err: ConfigError) => err.errors.some((e) => e.path === 'client.allowed_origins[0]' && /a vault reference is not read here/.test(e.message)),
  );
});

test('vault settings: VAULT_ADDR/VAULT_TOKEN by default, env references read, defaults filled, errors naming fields', () => {
  assert.equal(vaultSettings(undefined, {}), undefined);
  const fromEnv = vaultSettings(undefined, { VAULT_ADDR: 'http://127.0.0.1:8200/', VAULT_TOKEN: 't' });
  assert.deepEqual(fromEnv, { address: 'http://127.0.0.1:8200', login: { method: 'token', token: 't' }, mount: 'secret', ttlMs: 60_000, timeoutMs: 5000 });
  assert.deepEqual(vaultSettings(undefined, { VAULT_ADDR: 'http://v' }), { errors: [{ path: 'vault.auth', message: 'is required (or set VAULT_TOKEN for token auth)' }] });
  const approle = vaultSettings({ address: 'https://v', auth: { method: 'approle', role_id: 'env.R', secret_id: 'env.S' }, ttl_seconds: 5 }, { R: 'rid', S: 'sid' });
  assert.deepEqual(approle, { address: 'https://v', login: { method: 'approle', mount: 'approle', roleId: 'rid', secretId: 'sid' }, mount: 'secret', ttlMs: 5000, timeoutMs: 5000 });
  assert.deepEqual(vaultSettings({ address: 'https://v', auth: { method: 'approle', role_id: 'env.R', secret_id: 'env.S' } }, { R: 'rid' }), { errors: [{ path: 'vault.auth.secret_id', message: 'environment variable S is not set' }] });
  const k8s = vaultSettings({ address: 'https://v', auth: { method: 'kubernetes', role: 'gw', token: 'env.T' } }, {});
  assert.deepEqual(k8s, { errors: [{ path: 'vault.auth.token', message: 'is not a setting of kubernetes auth (it takes role, token_path, mount)' }] });
});

test('login requests: AppRole posts role_id and secret_id; Kubernetes posts the role and the token file, read at each login', async () => {
  assert.deepEqual(await loginRequest({ method: 'approle', mount: 'approle', roleId: 'r', secretId: 's' }), { path: '/v1/auth/approle/login', body: { role_id: 'r', secret_id: 's' } });
  let reads = 0;
  const read = async (p: string) => (reads++, `jwt-from-${p}\n`);
  const login = { method: 'kubernetes', mount: 'k8s/prod', role: 'gw', tokenPath: '/sa/token' } as const;
  assert.deepEqual(await loginRequest(login, read), { path: '/v1/auth/k8s/prod/login', body: { role: 'gw', jwt: 'jwt-from-/sa/token' } });
  await loginRequest(login, read);
  assert.equal(reads, 2);
  await assert.rejects(loginRequest({ ...login, tokenPath: '/nonexistent/skybridge/token' }), /cannot read the service account token at \/nonexistent\/skybridge\/token \(ENOENT\)/);
});

test('VAULT_ADDR alone configures no vault while no reference needs one; a reference without a token is an error naming vault.auth', async () => {
  const secrets = new VaultSecrets();
  try {
    const env = { VAULT_ADDR: 'http://127.0.0.1:1' };
    assert.deepEqual(await secrets.prime({ providers: { openai: { keys: [{ name: 'k', value: 'sk-plain', weight: 1 }] } } }, env), []);
    assert.equal(secrets.status().state, 'off');
    const errors = await secrets.prime({ providers: { openai: { keys: [{ name: 'k', value: 'vault.a/b#c', weight: 1 }] } } }, env);
    assert.deepEqual(errors, [{ path: 'vault.auth', message: 'is required (or set VAULT_TOKEN for token auth)' }]);
  } finally {
    secrets.reset();
  }
});
