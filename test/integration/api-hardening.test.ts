// The management API's safe defaults through running gateways: names that would reach
// Object.prototype are refused (and inference keeps working after the attempts), /api without auth
// answers only local clients, writes must be JSON and same-origin (or from client.allowed_origins),
// provider URLs cannot reach link-local / metadata addresses, URL credentials are masked, CORS
// preflights are answered from client.allowed_origins, failed logins are logged and throttled.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { request } from 'node:http';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { runGatewayExpectingExit, startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, basic, type Api, type ApiAnswer, type ApiError } from '../helpers/api.ts';

const ADMIN = 'admin';
const PASSWORD = 'correct-horse-battery-staple';
const APP_ORIGIN = 'https://app.example';

let mock: MockProvider;
/** No auth, bound to 0.0.0.0 (the default of `npm start`). */
let open: RunningGateway;
/** client.allowed_origins set. */
let cors: RunningGateway;
/** Management auth on, bound to 0.0.0.0. */
let secured: RunningGateway;
let api: Api;

before(async () => {
  mock = await startMockProvider();
  [open, cors, secured] = await Promise.all([
    startGateway({ providers: mockProviders(mock.url) }, { args: ['--host', '0.0.0.0'] }),
    startGateway({ providers: mockProviders(mock.url), client: { allowed_origins: [APP_ORIGIN, 'http://localhost:5173/'] } }),
    startGateway({ providers: mockProviders(mock.url), governance: { auth_config: { is_enabled: true, admin_username: ADMIN, admin_password: PASSWORD } } }, { args: ['--host', '0.0.0.0'] }),
  ]);
  api = apiClient(open);
  // config.json's providers are read-only through /api (409): the writes below go to one created here.
  const groq = await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g', value: 'gsk-hardening-key-000111' }], network_config: { base_url: `${mock.url}/openai`, max_retries: 0 } });
  assert.equal(groq.status, 201, groq.text);
});
after(async () => {
  await Promise.all([open?.stop(), cors?.stop(), secured?.stop()]);
  await mock?.close();
});

function assertError(a: ApiAnswer, status: number, param?: string, message?: RegExp): void {
  assert.equal(a.status, status, a.text);
  const err = a.body as unknown as ApiError;
  assert.equal(err.status_code, status);
  assert.equal(err.is_bifrost_error, true);
  if (param !== undefined) assert.equal(err.error.param, param, a.text);
  if (message) assert.match(err.error.message, message);
}

async function chat(g: RunningGateway): Promise<number> {
  const res = await fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
}

/** A raw request (Host and Origin as given, from a chosen local address). */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, localAddress: opts.localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** An IPv4 address of this machine that is not loopback, or undefined. */
function externalIpv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

test('prototype-named ids in paths and bodies are refused with 400 naming the field; inference still works afterwards', async () => {
  assertError(await api('POST', '/api/providers/__proto__/keys', { name: 'k', value: 'sk-polluted-0000000000' }), 400, 'provider');
  assertError(await api('POST', '/api/providers/constructor/keys', { name: 'k', value: 'sk-polluted-0000000000' }), 400, 'provider', /reserved name/);
  assertError(await api('PUT', '/api/providers/hasOwnProperty', { network_config: { base_url: 'http://example.com' } }), 400, 'provider');
  assertError(await api('POST', '/api/providers', { provider: 'constructor', keys: [{ name: 'k', value: 'v' }] }), 400, 'provider');
  assertError(await api('POST', '/api/providers/groq/keys', { name: 'toString', value: 'sk-polluted-0000000000' }), 400, 'name', /reserved name/);
  assertError(await api('POST', '/api/governance/virtual-keys', { id: '__proto__', name: 'p' }), 400, 'id');
  assertError(await api('POST', '/api/governance/teams', { id: 'constructor', name: 'p' }), 400, 'id');
  assertError(await api('GET', '/api/governance/teams/hasOwnProperty'), 400, 'id');
  assertError(await api('DELETE', '/api/governance/customers/__proto__'), 400, 'id');
  assertError(await api('GET', '/api/routing/rules/toString'), 400, 'id');
  assertError(await api('POST', '/api/plugins', { name: 'constructor' }), 400, 'name');
  assertError(await api('PUT', '/api/plugins/__proto__', { enabled: true }), 400, 'name');
  // `__proto__` as a JSON key, at any depth (JSON.stringify of an object literal cannot write it: raw text).
  assertError(await api('POST', '/api/governance/teams', '{"name":"t","__proto__":{"polluted":true}}'), 400, '__proto__');
  assertError(await api('PUT', '/api/providers/groq', '{"network_config":{"extra_headers":{"__proto__":{"polluted":"yes"}}}}'), 400, 'network_config.extra_headers.__proto__');
  assertError(await api('POST', '/api/governance/budgets', '{"id":"b1","max_limit":1,"reset_duration":"1d","constructor":{"prototype":{"polluted":true}}}'), 400, 'constructor');
  assertError(await api('PUT', '/api/providers/groq', { network_config: { extra_headers: { 'bad header': 'x' } } }), 400, 'network_config.extra_headers.bad header');
  // Nothing was written, the process is up and serves inference.
  assert.equal(await chat(open), 200);
  const providers = await api<{ providers: { name: string; keys: unknown[] }[] }>('GET', '/api/providers');
  assert.deepEqual(providers.body.providers.map((p) => p.name).sort(), ['anthropic', 'gemini', 'groq', 'openai']);
  assert.equal(providers.body.providers.find((p) => p.name === 'groq')!.keys.length, 1);
  const teams = await api<{ teams: unknown[] }>('GET', '/api/governance/teams');
  assert.deepEqual(teams.body.teams, []);
  assert.ok(!(await api('GET', '/api/config')).text.includes('polluted'));
  // Valid ids still work: UUID-like, dotted, with colons.
  const team = await api('POST', '/api/governance/teams', { id: 'team.search:eu-1', name: 'search' });
  assert.equal(team.status, 201, team.text);
  assert.equal((await api('DELETE', '/api/governance/teams/team.search:eu-1')).status, 200);
});

test('without auth, /api answers loopback clients only; a remote client gets 401 saying how to enable auth', async (t) => {
  const ip = externalIpv4();
  if (!ip) {
    t.skip('this machine has no non-loopback IPv4 address to connect from');
    return;
  }
  const remote = await raw(`http://${ip}:${open.port}/api/providers`);
  assert.equal(remote.status, 401, remote.text);
  const err = JSON.parse(remote.text) as ApiError;
  assert.match(err.error.message, /governance\.auth_config\.is_enabled/);
  assert.equal(err.error.type, 'authentication_error');
  // Writes too (the anonymous base_url change of the report).
  const write = await raw(`http://${ip}:${open.port}/api/providers/openai`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ network_config: { base_url: 'http://attacker.example' } }) });
  assert.equal(write.status, 401);
  // Inference from the same client is not affected.
  const inference = await raw(`http://${ip}:${open.port}/v1/models`);
  assert.notEqual(inference.status, 401);
  // The same port from loopback works.
  assert.equal((await raw(`http://127.0.0.1:${open.port}/api/providers`)).status, 200);
  // With auth on, a remote client with credentials is served, without them refused.
  const headers = basic(ADMIN, PASSWORD);
  assert.equal((await raw(`http://${ip}:${secured.port}/api/providers`, { headers })).status, 200);
  assert.equal((await raw(`http://${ip}:${secured.port}/api/providers`)).status, 401);
});

test('without auth, a loopback request addressed by a foreign host name (DNS rebinding) is refused', async () => {
  const rebound = await raw(`http://127.0.0.1:${open.port}/api/providers`, { headers: { host: `attacker.example:${open.port}` } });
  assert.equal(rebound.status, 401);
  assert.match((JSON.parse(rebound.text) as ApiError).error.message, /localhost or an IP address/);
  assert.equal((await raw(`http://127.0.0.1:${open.port}/api/providers`, { headers: { host: `localhost:${open.port}` } })).status, 200);
});

test('CSRF: /api writes need content-type application/json (415 otherwise) and a same-origin Origin', async () => {
  const url = `${open.url}/api/governance/teams`;
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const r = await raw(url, { method: 'POST', headers: { 'content-type': type }, body: '{"name":"csrf"}' });
    assert.equal(r.status, 415, `${type}: ${r.text}`);
    const err = JSON.parse(r.text) as ApiError;
    assert.equal(err.error.code, 'unsupported_media_type');
    assert.match(err.error.message, /application\/json/);
  }
  assert.equal((await raw(url, { method: 'POST', body: '{"name":"csrf"}' })).status, 415);
  const teams = await api<{ teams: unknown[] }>('GET', '/api/governance/teams');
  assert.deepEqual(teams.body.teams, []);
  // A page on another site may not write, even with a JSON body.
  assertError(await api('POST', '/api/governance/teams', { name: 'csrf' }, { origin: 'https://evil.example' }), 403, undefined, /client\.allowed_origins/);
  assertError(await api('POST', '/api/governance/teams', { name: 'csrf' }, { origin: 'null' }), 403);
  // Same origin, reads and JSON with a charset are fine.
  assert.equal((await api('GET', '/api/governance/teams', undefined, { origin: 'https://evil.example' })).status, 200);
  const created = await api<{ team: { id: string } }>('POST', '/api/governance/teams', { name: 'same-origin' }, { origin: open.url, 'content-type': 'application/json; charset=utf-8' });
  assert.equal(created.status, 201, created.text);
  assert.equal((await api('DELETE', `/api/governance/teams/${created.body.team.id}`)).status, 200);
});

test('client.allowed_origins: /api refuses other origins with 403; CORS preflight and headers on inference and /api', async () => {
  const c = apiClient(cors);
  assertError(await c('GET', '/api/providers', undefined, { origin: 'https://evil.example' }), 403, undefined, /not in client\.allowed_origins/);
  const ok = await c('GET', '/api/providers', undefined, { origin: APP_ORIGIN });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get('access-control-allow-origin'), APP_ORIGIN);
  // The trailing slash of a configured origin does not matter.
  assert.equal((await c('GET', '/api/providers', undefined, { origin: 'http://localhost:5173' })).headers.get('access-control-allow-origin'), 'http://localhost:5173');

  for (const path of ['/v1/chat/completions', '/api/providers']) {
    const pre = await raw(`${cors.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(pre.status, 204, `${path}: ${pre.text}`);
    assert.equal(pre.headers['access-control-allow-origin'], APP_ORIGIN);
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
    assert.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type');
    assert.equal(pre.headers['access-control-max-age'], '600');
    assert.match(String(pre.headers.vary), /origin/i);
    assert.equal(pre.headers['access-control-allow-credentials'], undefined);
    const denied = await raw(`${cors.url}${path}`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(denied.status, 403);
    assert.equal(denied.headers['access-control-allow-origin'], undefined);
  }
  const res = await fetch(`${cors.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: APP_ORIGIN },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('access-control-allow-origin'), APP_ORIGIN);
  assert.match(res.headers.get('vary') ?? '', /origin/i);
  const other = await fetch(`${cors.url}/v1/models`, { headers: { origin: 'https://evil.example' } });
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  // Without allowed_origins no CORS at all.
  const none = await raw(`${open.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' } });
  assert.equal(none.status, 403);
  assert.equal(none.headers['access-control-allow-origin'], undefined);
});

test('SSRF: link-local and metadata base URLs are refused (API 400, start-up error), private ranges allowed, allow_link_local opts in', async () => {
  for (const base of ['http://169.254.169.254/latest', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://[fe80::1]:8080/', 'http://100.100.100.200/', 'http://2852039166/', 'http://[::ffff:169.254.169.254]/']) {
    assertError(await api('PUT', '/api/providers/groq', { network_config: { base_url: base } }), 400, 'network_config.base_url', /allow_link_local/);
  }
  assertError(
    await api('POST', '/api/providers', { provider: 'meta', keys: [{ name: 'k', value: 'v' }], network_config: { base_url: 'http://169.254.170.2/v1' }, custom_provider_config: { base_provider_type: 'openai' } }),
    400,
    'network_config.base_url',
  );
  assert.equal(await chat(open), 200);
  const priv = await api('POST', '/api/providers', { provider: 'selfhosted', keys: [{ name: 'k', value: 'v' }], network_config: { base_url: 'http://10.1.2.3:8000' }, custom_provider_config: { base_provider_type: 'openai' } });
  assert.equal(priv.status, 201, priv.text);
  const optIn = await api('PUT', '/api/providers/selfhosted', { network_config: { base_url: 'http://169.254.10.10:8000', allow_link_local: true } });
  assert.equal(optIn.status, 200, optIn.text);
  assert.equal((await api('DELETE', '/api/providers/selfhosted')).status, 200);

  const startup = await runGatewayExpectingExit({ providers: { openai: { keys: [{ name: 'k', value: 'v' }], network_config: { base_url: 'http://169.254.169.254/' } } } });
  assert.equal(startup.code, 1);
  assert.match(startup.output, /providers\.openai\.network_config\.base_url: 169\.254\.169\.254 is a link-local address/);
  // The environment path (no config.json): OPENAI_BASE_URL is checked the same way.
  await assert.rejects(startGateway(undefined, { env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: 'http://metadata.google.internal/v1' } }), /providers\.openai\.network_config\.base_url: metadata\.google\.internal is a cloud metadata service/);
});

test('user:password@ in a base URL is masked in /api answers and never logged', async () => {
  const secret = 's3cret-url-pass';
  const put = await api('PUT', '/api/providers/groq', { network_config: { base_url: `http://user:${secret}@127.0.0.1:${new URL(mock.url).port}/openai` } });
  assert.equal(put.status, 200, put.text);
  const one = await api<{ network_config: { base_url: string } }>('GET', '/api/providers/groq');
  assert.equal(one.body.network_config.base_url, `http://user:***@127.0.0.1:${new URL(mock.url).port}/openai`);
  for (const path of ['/api/providers', '/api/config', '/api/providers/groq']) assert.ok(!(await api('GET', path)).text.includes(secret), path);
  // Writing back what was read keeps the stored URL.
  assert.equal((await api('PUT', '/api/providers/groq', { network_config: one.body.network_config })).status, 200);
  assert.ok(!open.logs().includes(secret));
  assert.match(open.logs(), /carries user:password@ credentials, which are not sent upstream/);
  assert.equal((await api('PUT', '/api/providers/groq', { network_config: { base_url: `${mock.url}/openai`, max_retries: 0 } })).status, 200);
});

test('a plugin that is not built is refused with a 400 naming it, never stored as "active"', async () => {
  const created = await api<{ error: { message: string } }>('POST', '/api/plugins', { name: 'maxim', config: { log_repo_id: 'r' } });
  assertError(created, 400, 'name');
  assert.match(created.body.error.message, /unknown plugin 'maxim'/);
  assertError(await api('GET', '/api/plugins/maxim'), 404);
});

test('failed management logins are logged without the password and throttled per client (429 with Retry-After)', async () => {
  const wrong = 'not-the-password-42';
  const anon = apiClient(secured);
  for (let i = 0; i < 3; i++) assert.equal((await apiClient(secured, basic('mallory', wrong))('GET', '/api/providers')).status, 401);
  for (let i = 0; i < 2; i++) assert.equal((await anon('POST', '/api/session/login', { username: 'mallory', password: wrong })).status, 401);
  // Locked out now, even with the right password, on both ways in.
  const locked = await apiClient(secured, basic(ADMIN, PASSWORD))('GET', '/api/providers');
  assertError(locked, 429, undefined, /too many failed login attempts/);
  const retryAfter = Number(locked.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
  assert.equal((await anon('POST', '/api/session/login', { username: ADMIN, password: PASSWORD })).status, 429);
  const logs = secured.logs();
  assert.equal(logs.match(/management login failed/g)?.length, 5);
  assert.match(logs, /"username":"mallory"/);
  assert.ok(!logs.includes(wrong));
  assert.ok(!logs.includes(PASSWORD));
});
