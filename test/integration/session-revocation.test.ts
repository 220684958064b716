// A dashboard logout ends the session on every replica sharing the store: sessions are signed
// tokens any replica accepts, so the logout is written to a revocation list in Redis that each
// replica checks when the token is used.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { startRedis, type RunningRedis } from '../helpers/redis.ts';

const ADMIN = 'admin';
const PASSWORD = 'replica-password-0123';
let mock: MockProvider | undefined;
let redis: RunningRedis | undefined;
let a: InProcessGateway | undefined;
let b: InProcessGateway | undefined;

before(async () => {
  mock = await startMockProvider();
  redis = await startRedis();
  const config = {
    providers: mockProviders(mock.url),
    redis: { addr: redis.addr },
    governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } },
  };
  [a, b] = await Promise.all([startGateway(config), startGateway(config)]);
});
after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await redis?.stop();
  await mock?.close();
});

async function login(g: InProcessGateway): Promise<{ token: string; cookie: string }> {
  const res = await fetch(`${g.url}/api/session/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN, password: PASSWORD }) });
  assert.equal(res.status, 200, await res.clone().text());
  const { token } = (await res.json()) as { token: string };
  return { token, cookie: `skybridge_session=${token}` };
}

const get = (g: InProcessGateway, path: string, headers: Record<string, string>) => fetch(`${g.url}${path}`, { headers: { 'x-requested-with': 'XMLHttpRequest', ...headers } });

test('a session opened on one replica and logged out there is refused on the other (cookie and Bearer)', async () => {
  const { cookie } = await login(a!);
  assert.equal((await get(b!, '/api/providers', { cookie })).status, 200, 'the session works on the other replica');
  const out = await fetch(`${a!.url}/api/session/logout`, { method: 'POST', headers: { cookie } });
  assert.equal(out.status, 200);
  const refused = await get(b!, '/api/providers', { cookie });
  assert.equal(refused.status, 401);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /logged out/);
  const state = (await (await get(b!, '/api/session/is-auth-enabled', { cookie })).json()) as { has_valid_token: boolean };
  assert.equal(state.has_valid_token, false);

  const { token } = await login(b!);
  assert.equal((await get(a!, '/api/providers', { authorization: `Bearer ${token}` })).status, 200);
  assert.equal((await fetch(`${b!.url}/api/session/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status, 200);
  assert.equal((await get(a!, '/api/providers', { authorization: `Bearer ${token}` })).status, 401);
});

test('a logout ends only its own session: another one stays valid on every replica', async () => {
  const first = await login(a!);
  const second = await login(a!);
  assert.equal((await fetch(`${b!.url}/api/session/logout`, { method: 'POST', headers: { cookie: first.cookie } })).status, 200);
  assert.equal((await get(a!, '/api/providers', { cookie: first.cookie })).status, 401);
  assert.equal((await get(a!, '/api/providers', { cookie: second.cookie })).status, 200);
  assert.equal((await get(b!, '/api/providers', { cookie: second.cookie })).status, 200);
});
