// The management API's hardening, in process: hostile names sent to the real express app (and to
// the helpers it uses) leave Object.prototype untouched; the configuration rules on names, provider
// URLs, management keys and CORS origins; the egress lookup; the login throttle; the /api guards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../proxy/src/api/app.ts';
import { mergePatch } from '../../proxy/src/api/http.ts';
import { maskTree, unmask, isMaskOf } from '../../proxy/src/api/mask.ts';
import { LoginThrottle } from '../../proxy/src/api/login-throttle.ts';
import { checkJsonBody, checkOrigin, isLocalHostName, isLoopback } from '../../proxy/src/api/guards.ts';
import { checkConfig, ConfigError } from '../../proxy/src/config/check.ts';
import { compileSnapshot } from '../../proxy/src/config/snapshot.ts';
import { SnapshotHolder } from '../../proxy/src/config/source.ts';
import { ConfigService } from '../../proxy/src/config/service.ts';
import { MemoryConfigStore } from '../../proxy/src/config/store.ts';
import { nameProblem, SAFE_ID, SAFE_ID_RULE, unsafeJson, MAX_JSON_DEPTH } from '../../proxy/src/schema/names.ts';
import { blockedHost, guardedLookup, maskUrlCredentials } from '../../proxy/src/upstream/egress.ts';
import { corsPolicy, originAllowed } from '../../proxy/src/http/cors.ts';
import { GatewayError } from '../../proxy/src/unified/errors.ts';

const PROTO_MEMBERS = Object.getOwnPropertyNames(Object.prototype).sort();

function assertPrototypeClean(): void {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), PROTO_MEMBERS);
  const probe = {} as Record<string, unknown>;
  for (const k of ['polluted', 'keys', 'network_config', 'value', 'name', 'id']) assert.equal(probe[k], undefined, `Object.prototype.${k} was set`);
  assert.equal(typeof probe.toString, 'function');
  assert.equal(typeof probe.hasOwnProperty, 'function');
}

const BASE_CONFIG = { providers: { openai: { keys: [{ name: 'k', value: 'sk-openai-unit' }], network_config: { base_url: 'http://127.0.0.1:9' } } } };

let server: Server;
let url: string;
let service: ConfigService;

before(async () => {
  const loaded = checkConfig(structuredClone(BASE_CONFIG), 'test', {});
  const store = new MemoryConfigStore();
  const stored = await ConfigService.initialDocument(store, loaded.raw);
  service = new ConfigService(new SnapshotHolder(compileSnapshot(loaded.config)), store, stored);
  server = createServer(createApiHandler(service));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

async function send(method: string, path: string, body?: string): Promise<{ status: number; param: unknown }> {
  const res = await fetch(`${url}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body });
  const parsed = (await res.json()) as { error?: { param?: unknown } };
  return { status: res.status, param: parsed.error?.param };
}

test('hostile names through the real /api app: 400 naming the field, Object.prototype untouched, the document unchanged', async () => {
  const before = JSON.stringify(service.document());
  const cases: [string, string, string | undefined, string][] = [
    ['POST', '/api/providers/__proto__/keys', '{"name":"k2","value":"v"}', 'provider'],
    ['POST', '/api/providers/constructor/keys', '{"name":"k2","value":"v"}', 'provider'],
    ['PUT', '/api/providers/__proto__', '{"keys":[{"name":"x","value":"v"}]}', 'provider'],
    ['DELETE', '/api/providers/hasOwnProperty', undefined, 'provider'],
    ['POST', '/api/providers', '{"provider":"constructor","keys":[{"name":"x","value":"v"}]}', 'provider'],
    ['POST', '/api/providers/openai/keys', '{"name":"__proto__","value":"v"}', 'name'],
    ['GET', '/api/providers/openai/keys/toString', undefined, 'key_id'],
    ['PUT', '/api/providers/openai', '{"__proto__":{"polluted":true}}', '__proto__'],
    ['PUT', '/api/providers/openai', '{"network_config":{"extra_headers":{"__proto__":{"polluted":"1"}}}}', 'network_config.extra_headers.__proto__'],
    ['POST', '/api/governance/virtual-keys', '{"id":"__proto__","name":"v"}', 'id'],
    ['POST', '/api/governance/teams', '{"id":"valueOf","name":"t"}', 'id'],
    ['PUT', '/api/governance/teams/__proto__', '{"name":"t"}', 'id'],
    ['POST', '/api/governance/customers', '{"name":"c","budget":{"id":"__proto__","max_limit":1,"reset_duration":"1d"}}', 'budget.id'],
    ['POST', '/api/routing/rules', '{"id":"constructor","name":"r","targets":[{"provider":"openai","weight":1}]}', 'id'],
    ['POST', '/api/plugins', '{"name":"hasOwnProperty","enabled":true}', 'name'],
    ['POST', '/api/plugins', '{"name":"p","config":{"__proto__":{"polluted":true}}}', 'config.__proto__'],
  ];
  for (const [method, path, body, param] of cases) {
    const r = await send(method, path, body);
    assert.equal(r.status, 400, `${method} ${path} ${body ?? ''}`);
    assert.equal(r.param, param, `${method} ${path}`);
    assertPrototypeClean();
  }
  assert.equal(JSON.stringify(service.document()), before);
  assert.equal(service.current().providers.size, 1);
});

test('JSON nested deeper than the limit is a 400, not a stack overflow', async () => {
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const r = await send('POST', '/api/governance/teams', `{"name":"t","profile":{"x":${deep}}}`);
  assert.equal(r.status, 400);
  assert.match(String(r.param), /^profile\.x/);
});

test('merge patch, masking and unmasking keep a `__proto__` key a plain field', () => {
  const hostile = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
  const merged = mergePatch({ b: 2 } as Record<string, unknown>, hostile);
  assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  assert.equal((merged as Record<string, unknown>).polluted, undefined);
  const masked = maskTree({ x: hostile }) as { x: Record<string, unknown> };
  assert.equal(Object.getPrototypeOf(masked.x), Object.prototype);
  assert.equal(masked.x.polluted, undefined);
  const unmasked = unmask(hostile, {}) as Record<string, unknown>;
  assert.equal(unmasked.polluted, undefined);
  assertPrototypeClean();
});

test('config: `__proto__` keys, reserved and unsafe names are refused with their paths', () => {
  const errorsOf = (doc: unknown): string[] => {
    try {
      checkConfig(doc, 't', {});
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return err.errors.map((e) => `${e.path}: ${e.message}`);
    }
    return [];
  };
  const withHeaders = JSON.parse('{"providers":{"openai":{"keys":[{"name":"k","value":"v"}],"network_config":{"extra_headers":{"__proto__":"x"}}}}}');
  assert.deepEqual(errorsOf(withHeaders), ["providers.openai.network_config.extra_headers.__proto__: '__proto__' is not allowed as a field name"]);
  assert.ok(errorsOf({ providers: { constructor: { keys: [{ name: 'k', value: 'v' }], custom_provider_config: { base_provider_type: 'openai' }, network_config: { base_url: 'http://x' } } } }).includes("providers.constructor: 'constructor' is a reserved name"));
  assert.ok(errorsOf({ providers: { openai: { keys: [{ name: 'hasOwnProperty', value: 'v' }] } } }).includes("providers.openai.keys[0].name: 'hasOwnProperty' is a reserved name"));
  assert.ok(errorsOf({ governance: { teams: [{ id: 'a b', name: 't' }] } }).includes(`governance.teams[0].id: ${SAFE_ID_RULE}`));
  assert.ok(errorsOf({ governance: { teams: [{ id: 't', name: 't', budget_id: 'toString' }] } }).some((e) => e.startsWith("governance.teams[0].budget_id: 'toString' is a reserved name")));
  assert.ok(errorsOf({ plugins: [{ name: '__proto__', enabled: true }] }).includes("plugins[0].name: '__proto__' is a reserved name"));
  // Names people use keep working.
  assert.deepEqual(errorsOf({ providers: { openai: { keys: [{ name: 'Production key (EU)'.replace(/[()]/g, ''), value: 'v' }, { name: 'team@search/eu', value: 'v' }] } }, governance: { teams: [{ id: '0b7c1f4e-8a0e-4a7b-9c1d-5e6f7a8b9c0d', name: 'Search & Ads' }] } }), []);
  assert.equal(nameProblem('vk-checkout.eu:1', SAFE_ID, SAFE_ID_RULE), undefined);
  assert.ok(nameProblem('x'.repeat(129), SAFE_ID, SAFE_ID_RULE));
  assert.equal(unsafeJson(JSON.parse('[[{"a":{"b":[1]}}]]')), undefined);
  assert.match(unsafeJson(JSON.parse('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1)))!.message, /deeper/);
  assertPrototypeClean();
});

test('config: link-local and metadata provider URLs are refused unless allow_link_local; private ranges are fine', () => {
  const provider = (base_url: string, extra: Record<string, unknown> = {}) => ({ providers: { openai: { keys: [{ name: 'k', value: 'v' }], network_config: { base_url, ...extra } } } });
  for (const u of ['http://169.254.169.254/', 'http://[fd00:ec2::254]', 'http://metadata.google.internal.', 'http://[fe80::a]/', 'http://100.100.100.200', 'http://0xa9fea9fe/']) {
    assert.throws(() => checkConfig(provider(u), 't', {}), (e: unknown) => e instanceof ConfigError && e.errors.some((x) => x.path === 'providers.openai.network_config.base_url' && /allow_link_local/.test(x.message)), u);
  }
  for (const u of ['http://10.0.0.1:8000', 'http://192.168.1.20', 'http://172.16.0.1', 'http://127.0.0.1:11434', 'https://api.openai.com', 'http://[fd12::1]:8000']) {
    assert.doesNotThrow(() => checkConfig(provider(u), 't', {}), u);
  }
  const opted = checkConfig(provider('http://169.254.169.254/', { allow_link_local: true }), 't', {});
  assert.ok(opted.warnings.some((w) => /allow_link_local is true/.test(w)));
  // Azure endpoints and regions that become host names are checked too.
  assert.throws(() => checkConfig({ providers: { azure: { keys: [{ name: 'k', value: 'v', azure_key_config: { endpoint: 'http://169.254.169.254' } }] } } }, 't', {}), /azure_key_config\.endpoint/);
  assert.throws(() => checkConfig({ providers: { bedrock: { keys: [{ name: 'k', value: 'v', bedrock_key_config: { region: 'x@169.254.169.254/' } }] } } }, 't', {}), /bedrock_key_config\.region/);
  assert.equal(blockedHost('api.openai.com'), undefined);
  assert.equal(maskUrlCredentials('https://u:p4ss@h.example/v1'), 'https://u:***@h.example/v1');
  assert.ok(isMaskOf('https://u:***@h.example/v1', 'https://u:p4ss@h.example/v1'));
});

test('egress lookup: addresses resolving to link-local or metadata are refused at connect time unless allowed', async () => {
  const resolve = (lookup: ReturnType<typeof guardedLookup>, host: string) =>
    new Promise<string>((ok, fail) => lookup(host, { all: true }, (err, addresses) => (err ? fail(err) : ok(JSON.stringify(addresses)))));
  await assert.rejects(resolve(guardedLookup(false), '169.254.169.254'), /refusing to connect to 169\.254\.169\.254.*allow_link_local/);
  await assert.rejects(resolve(guardedLookup(false), 'fe80::1'), /link-local/);
  assert.match(await resolve(guardedLookup(true), '169.254.169.254'), /169\.254\.169\.254/);
  assert.match(await resolve(guardedLookup(false), 'localhost'), /127\.0\.0\.1|::1/);
});

test('management API keys: 16 characters minimum on the resolved value, not on the env.VAR reference', () => {
  const doc = (keys: string[]) => ({ governance: { auth_config: { is_enabled: true, api_keys: keys } } });
  assert.doesNotThrow(() => checkConfig(doc(['env.K']), 't', { K: 'mgmt-0123456789abcdef' }));
  assert.throws(() => checkConfig(doc(['env.K']), 't', { K: 'short-key' }), (e: unknown) => {
    const msg = (e as ConfigError).errors.map((x) => `${x.path}: ${x.message}`).join('\n');
    assert.match(msg, /governance\.auth_config\.api_keys\[0\]: must be at least 16 characters \(the value of env\.K has 9\)/);
    assert.ok(!msg.includes('short-key'));
    return true;
  });
  assert.throws(() => checkConfig(doc(['too-short']), 't', {}), /api_keys\[0\]: must be at least 16 characters/);
  assert.throws(() => checkConfig({ auth_config: { api_keys: ['env.K'] } }, 't', { K: 'x' }), /auth_config\.api_keys\[0\]/);
});

test('CORS origins: exact origins and *, trailing slash tolerated; wildcards and paths refused in config', () => {
  const p = corsPolicy(['https://app.example', 'http://localhost:5173/']);
  assert.ok(originAllowed(p, 'https://app.example'));
  assert.ok(originAllowed(p, 'http://localhost:5173'));
  assert.ok(!originAllowed(p, 'https://app.example.evil'));
  assert.ok(!originAllowed(corsPolicy([]), 'https://app.example'));
  assert.ok(originAllowed(corsPolicy(['*']), 'https://any.example'));
  for (const bad of ['https://*.example.com', 'https://app.example/path', 'app.example', 'ftp://x.example']) {
    assert.throws(() => checkConfig({ client: { allowed_origins: [bad] } }, 't', {}), /client\.allowed_origins\[0\]/, bad);
  }
});

test('login throttle: 5 failures in a minute lock the address out until the oldest leaves the window', () => {
  const t = new LoginThrottle(5, 60_000);
  const now = 1_000_000;
  for (let i = 0; i < 4; i++) t.fail('10.0.0.1', 'admin', 'basic', now + i * 1000);
  assert.equal(t.retryAfter('10.0.0.1', now + 4000), 0);
  t.fail('10.0.0.1', 'admin', 'session_login', now + 4000);
  assert.equal(t.retryAfter('10.0.0.1', now + 4000), 56);
  assert.throws(() => t.check('10.0.0.1', now + 4000), (e: unknown) => e instanceof GatewayError && e.status === 429 && e.retryAfter === 56);
  assert.equal(t.retryAfter('10.0.0.2', now + 4000), 0, 'other addresses are not affected');
  assert.equal(t.retryAfter('10.0.0.1', now + 60_001), 0, 'the oldest failure left the window');
  t.succeed('10.0.0.1');
  assert.equal(t.retryAfter('10.0.0.1', now + 4000), 0);
});

test('guards: loopback addresses, local Host names, Origin rules, JSON content-type', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopback(a), a);
  for (const a of ['192.0.2.2', '::ffff:10.0.0.1', 'fe80::1', '', undefined]) assert.ok(!isLoopback(a), String(a));
  for (const h of ['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'app.localhost', '10.0.0.5']) assert.ok(isLocalHostName(h), h);
  assert.ok(!isLocalHostName('attacker.example:8080'));

  const req = (method: string, headers: Record<string, string>) => ({ method, headers }) as unknown as IncomingMessage;
  assert.doesNotThrow(() => checkOrigin(req('POST', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }), undefined));
  assert.doesNotThrow(() => checkOrigin(req('GET', { host: '127.0.0.1:8080', origin: 'https://evil.example' }), undefined));
  assert.throws(() => checkOrigin(req('DELETE', { host: '127.0.0.1:8080', origin: 'https://evil.example' }), undefined), /cross-origin write/);
  assert.throws(() => checkOrigin(req('GET', { host: 'h', origin: 'https://evil.example' }), ['https://app.example']), /not in client\.allowed_origins/);
  assert.doesNotThrow(() => checkOrigin(req('POST', { host: 'h', origin: 'https://app.example' }), ['https://app.example']));
  // The dashboard on the gateway's own host keeps working once other origins are listed.
  assert.doesNotThrow(() => checkOrigin(req('PUT', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }), ['https://app.example']));
  assert.throws(() => checkOrigin(req('PUT', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9090' }), ['https://app.example']), /not in client\.allowed_origins/);

  assert.doesNotThrow(() => checkJsonBody(req('POST', { 'content-length': '2', 'content-type': 'application/json; charset=utf-8' })));
  assert.doesNotThrow(() => checkJsonBody(req('DELETE', {})));
  assert.throws(() => checkJsonBody(req('POST', { 'content-length': '2', 'content-type': 'text/plain' })), (e: unknown) => e instanceof GatewayError && e.status === 415);
  assert.throws(() => checkJsonBody(req('PUT', { 'transfer-encoding': 'chunked' })), (e: unknown) => e instanceof GatewayError && e.status === 415);
});
