// Management API authentication through running gateways: with auth_config enabled nothing under
// /api answers without Basic admin credentials, a management API key (Bearer or x-api-key) or a
// session token; with it off /api answers loopback clients only (and the gateway says so in its
// log; api-hardening.test.ts connects from another address).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, basic, bearer, type ApiError } from '../helpers/api.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const MGMT_KEY = 'mgmt-key-0f1e2d3c4b5a69788796';

let mock: MockProvider;
let secured: RunningGateway;
let open: RunningGateway;

before(async () => {
  mock = await startMockProvider();
  [secured, open] = await Promise.all([
    startGateway(
      {
        providers: mockProviders(mock.url),
        governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD, api_keys: ['env.SKYBRIDGE_TEST_MGMT_KEY'] } },
      },
      { env: { SKYBRIDGE_TEST_MGMT_KEY: MGMT_KEY } },
    ),
    startGateway({ providers: mockProviders(mock.url) }),
  ]);
});
after(async () => {
  await Promise.all([secured?.stop(), open?.stop()]);
  await mock?.close();
});

function assertUnauthorized(a: { status: number; headers: Headers; body: unknown }): void {
  assert.equal(a.status, 401);
  assert.equal(a.headers.get('www-authenticate'), 'Basic realm="skybridge"');
  const err = a.body as ApiError;
  assert.equal(err.status_code, 401);
  assert.equal(err.error.type, 'authentication_error');
  assert.equal(err.is_bifrost_error, true);
}

test('auth enabled: every /api path, known or not, answers 401 without credentials, and a refused write changes nothing', async () => {
  const anon = apiClient(secured);
  for (const [method, path] of [
    ['GET', '/api/providers'],
    ['GET', '/api/config'],
    ['GET', '/api/routing/rules'],
    ['GET', '/api/governance/virtual-keys'],
    ['GET', '/api/version'],
    ['GET', '/api/no-such-thing'],
    ['DELETE', '/api/providers/openai'],
  ]) {
    assertUnauthorized(await anon(method, path));
  }
  assertUnauthorized(await anon('POST', '/api/governance/teams', { name: 'sneaky' }));
  const teams = await apiClient(secured, basic(ADMIN, PASSWORD))<{ teams: unknown[] }>('GET', '/api/governance/teams');
  assert.equal(teams.status, 200);
  assert.deepEqual(teams.body.teams, []);
  // The provider is still there: the anonymous DELETE did nothing.
  assert.equal((await apiClient(secured, basic(ADMIN, PASSWORD))('GET', '/api/providers/openai')).status, 200);
});

test('auth enabled: Basic with the admin credentials works; a wrong password or user does not', async () => {
  assert.equal((await apiClient(secured, basic(ADMIN, PASSWORD))('GET', '/api/providers')).status, 200);
  assertUnauthorized(await apiClient(secured, basic(ADMIN, `${PASSWORD}x`))('GET', '/api/providers'));
  assertUnauthorized(await apiClient(secured, basic('root', PASSWORD))('GET', '/api/providers'));
  assertUnauthorized(await apiClient(secured, { authorization: 'Basic not-base64-at-all' })('GET', '/api/providers'));
});

test('auth enabled: a management API key (from env.VAR) works as Bearer and as x-api-key; a wrong one does not', async () => {
  assert.equal((await apiClient(secured, bearer(MGMT_KEY))('GET', '/api/providers')).status, 200);
  assert.equal((await apiClient(secured, { 'x-api-key': MGMT_KEY })('GET', '/api/providers')).status, 200);
  assertUnauthorized(await apiClient(secured, bearer(`${MGMT_KEY}0`))('GET', '/api/providers'));
  assertUnauthorized(await apiClient(secured, { 'x-api-key': 'mgmt-key-wrong-wrong-wrong' })('GET', '/api/providers'));
  // The admin password is not an API key.
  assertUnauthorized(await apiClient(secured, bearer(PASSWORD))('GET', '/api/providers'));
});

test('auth enabled: login gives a session token that works as Bearer until logout', async () => {
  const anon = apiClient(secured);
  const state = await anon<{ is_auth_enabled: boolean; has_valid_token: boolean }>('GET', '/api/session/is-auth-enabled');
  assert.equal(state.status, 200);
  assert.deepEqual(state.body, { is_auth_enabled: true, has_valid_token: false });

  const wrong = await anon('POST', '/api/session/login', { username: ADMIN, password: 'nope' });
  assertUnauthorized(wrong);
  const missing = await anon<ApiError>('POST', '/api/session/login', { username: ADMIN });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.param, 'password');

  const login = await anon<{ token: string; message: string }>('POST', '/api/session/login', { username: ADMIN, password: PASSWORD });
  assert.equal(login.status, 200);
  assert.ok(login.body.token.length >= 32);
  const session = apiClient(secured, bearer(login.body.token));
  assert.equal((await session('GET', '/api/governance/virtual-keys')).status, 200);
  const valid = await session<{ has_valid_token: boolean }>('GET', '/api/session/is-auth-enabled');
  assert.equal(valid.body.has_valid_token, true);

  assert.equal((await session('POST', '/api/session/logout')).status, 200);
  assertUnauthorized(await session('GET', '/api/governance/virtual-keys'));
  // A made-up token never worked.
  assertUnauthorized(await apiClient(secured, bearer('x'.repeat(43)))('GET', '/api/providers'));
});

test('auth enabled: secrets of auth_config are masked in GET /api/config and absent from the log', async () => {
  const cfg = await apiClient(secured, basic(ADMIN, PASSWORD))<{ governance: { auth_config: Record<string, unknown> } }>('GET', '/api/config');
  assert.equal(cfg.status, 200);
  assert.equal(cfg.body.governance.auth_config.admin_password, '<redacted>');
  // An env.VAR reference names a variable, not a secret: shown as is.
  assert.deepEqual(cfg.body.governance.auth_config.api_keys, ['env.SKYBRIDGE_TEST_MGMT_KEY']);
  assert.ok(!cfg.text.includes(PASSWORD));
  assert.ok(!secured.logs().includes(PASSWORD));
  assert.ok(!secured.logs().includes(MGMT_KEY));
});

test('auth disabled: /api answers a loopback client, says so at start-up, and login is refused with 403', async () => {
  const anon = apiClient(open);
  assert.equal((await anon('GET', '/api/providers')).status, 200);
  const state = await anon<{ is_auth_enabled: boolean }>('GET', '/api/session/is-auth-enabled');
  assert.equal(state.body.is_auth_enabled, false);
  const login = await anon<ApiError>('POST', '/api/session/login', { username: 'a', password: 'b' });
  assert.equal(login.status, 403);
  assert.match(open.logs(), /management API auth is off: \/api answers only loopback clients/);
  assert.doesNotMatch(secured.logs(), /management API auth is off/);
});

test('auth enabled through the deprecated top-level auth_config, with API keys only', async () => {
  const g = await startGateway({ providers: mockProviders(mock.url), auth_config: { is_enabled: true, api_keys: [MGMT_KEY] } });
  try {
    assertUnauthorized(await apiClient(g)('GET', '/api/providers'));
    assert.equal((await apiClient(g, { 'x-api-key': MGMT_KEY })('GET', '/api/providers')).status, 200);
    // No admin credentials configured: no Basic login can succeed.
    assertUnauthorized(await apiClient(g, basic('', ''))('GET', '/api/providers'));
  } finally {
    await g.stop();
  }
});
