// vault.<path>#<field> references against a real HashiCorp Vault API server (OpenBao, `bao server
// -dev`): a provider key and a webhook's secret and header come from KV v2; a rotation reaches the
// upstream within one TTL while requests flow, none failing; an outage (the server frozen) keeps the
// last good values and shows in /api/vault/status, the metrics and the log, and recovery too; the
// resolved values never appear in /api answers, /metrics or the log. Token, AppRole and Kubernetes
// auth (against a stand-in TokenReview endpoint) each log in; bad references name their field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { configureLog } from '../../proxy/src/log.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { startOpenBao, type RunningOpenBao } from '../helpers/openbao.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { apiClient, basic, type Api } from '../helpers/api.ts';
import { eventually, patience } from '../helpers/patience.ts';

const KEY_1 = 'sk-vault-first-key-0000000000000001';
const KEY_2 = 'sk-vault-rotated-key-000000000000002';
const WH_SECRET = 'whsec_VaultWebhookSecretAAAAAAAAAAAAAAAA';
const WH_HEADER = 'receiver-token-from-vault-0042';
const ADMIN = basic('admin', 'vault-test-admin-password');
const SECRETS = [KEY_1, KEY_2, WH_SECRET, WH_HEADER];

let bao: RunningOpenBao;
let mock: MockProvider;
let receiver: Receiver;
let gw: InProcessGateway | undefined;
let api: Api;
/** Everything the gateway logged (this process's stdout and stderr while the file runs). */
let logged = '';
const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

const config = (vault: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
  vault: { address: bao.address, ttl_seconds: 1, timeout_ms: 500, ...vault },
  providers: { openai: { keys: [{ name: 'k', value: 'vault.skybridge/openai#api_key', weight: 1 }], network_config: { base_url: `${mock.url}/openai`, max_retries: 0 } } },
  logs_store: { enabled: true, type: 'sqlite', config: { path: 'logs.db' } },
  governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'vault-test-admin-password' } },
  webhooks: [{ name: 'hook', url: receiver.url, events: ['async_job.completed'], secret: 'vault.skybridge/webhook#secret', headers: { 'x-receiver-token': 'vault.skybridge/webhook#token' }, allow_private_network: true }],
  ...over,
});

const chat = (content = 'hi') => new OpenAI({ baseURL: `${gw!.url}/v1`, apiKey: 'unused', maxRetries: 0 }).chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] });
const lastKey = () => mock.requests.filter((r) => r.format === 'openai').at(-1)?.headers.authorization;
const status = async () => (await api<{ state: string; refresh_failures: number; last_error?: string }>('GET', '/api/vault/status')).body;
const metric = async (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${gw!.url}/metrics`)).text())?.[1]);

async function restart(cfg: unknown, env: NodeJS.ProcessEnv = {}): Promise<void> {
  await gw?.stop();
  gw = await startGateway(cfg, { env });
  api = apiClient(gw, ADMIN);
}

before(async () => {
  [bao, mock, receiver] = await Promise.all([startOpenBao(), startMockProvider(), startReceiver()]);
  receiver.setSecret(WH_SECRET);
  await bao.putSecret('skybridge/openai', { api_key: KEY_1 });
  await bao.putSecret('skybridge/webhook', { secret: WH_SECRET, token: WH_HEADER });
  // The gateway's own identity reads secret/ only.
  await bao.api('POST', '/v1/sys/policies/acl/gateway', { policy: 'path "secret/data/*" { capabilities = ["read"] }' });
  const token = (await bao.api('POST', '/v1/auth/token/create', { policies: ['gateway'], ttl: '1h' })) as { auth: { client_token: string } };
  configureLog({ level: 'info' });
  const capture = (w: typeof writes.out) => ((chunk: string | Uint8Array, ...rest: unknown[]) => ((logged += String(chunk)), w(chunk, ...(rest as [])))) as typeof process.stdout.write;
  process.stdout.write = capture(writes.out);
  process.stderr.write = capture(writes.err);
  await restart(config({ auth: { method: 'token', token: 'env.SKYBRIDGE_TEST_VAULT_TOKEN' } }), { SKYBRIDGE_TEST_VAULT_TOKEN: token.auth.client_token });
});

after(async () => {
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  configureLog({ level: 'warn' });
  bao?.resume();
  await gw?.stop();
  await Promise.all([bao?.stop(), mock?.close(), receiver?.close()]);
});

test('a provider key from the vault reaches the upstream; /api shows the reference, never the value', async () => {
  const r = await chat();
  assert.match(r.choices[0].message.content ?? '', /Mock reply/);
  assert.equal(lastKey(), `Bearer ${KEY_1}`);
  const providers = await api('GET', '/api/providers');
  assert.equal(providers.status, 200, providers.text);
  assert.ok(providers.text.includes('vault.skybridge/openai#api_key'), providers.text);
  for (const path of ['/api/providers', '/api/providers/openai', '/api/config', '/api/webhooks', '/api/vault/status', '/api/keys']) {
    const text = (await api('GET', path)).text;
    for (const s of SECRETS) assert.ok(!text.includes(s), `${path} shows a resolved vault value`);
  }
  const st = await status();
  assert.equal(st.state, 'up');
});

test("a webhook's signing secret and header come from the vault", async () => {
  const sub = await fetch(`${gw!.url}/v1/async/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-async-webhook': 'hook' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'webhook please' }] }),
  });
  assert.equal(sub.status, 202, await sub.clone().text());
  const id = ((await sub.json()) as { id: string }).id;
  await eventually(() => assert.ok(receiver.received.some((x) => x.json.data.job_id === id), 'no delivery yet'), 15_000);
  const r = receiver.received.find((x) => x.json.data.job_id === id)!;
  assert.equal(r.verified, true, 'signed with the secret read from the vault');
  assert.equal(r.headers['x-receiver-token'], WH_HEADER);
});

test('a rotation while requests flow: every request succeeds, and within one TTL the upstream sees the new key', async () => {
  let stop = false;
  const results: { ok: boolean; error?: string }[] = [];
  const worker = async () => {
    while (!stop) {
      try {
        await chat('rotation traffic');
        results.push({ ok: true });
      } catch (err) {
        results.push({ ok: false, error: (err as Error).message });
      }
    }
  };
  const workers = [worker(), worker(), worker()];
  await eventually(() => assert.ok(results.length >= 5), 10_000);
  await bao.putSecret('skybridge/openai', { api_key: KEY_2 });
  const rotatedAt = Date.now();
  await eventually(() => assert.equal(lastKey(), `Bearer ${KEY_2}`), patience(10_000));
  const took = Date.now() - rotatedAt;
  const countAtSwitch = results.length;
  await eventually(() => assert.ok(results.length >= countAtSwitch + 5), 10_000);
  stop = true;
  await Promise.all(workers);
  assert.deepEqual(results.filter((r) => !r.ok), [], 'no request failed during the rotation');
  // One TTL (1 s) plus a refresh's round trip, on a loaded machine.
  assert.ok(took < patience(4000), `the new key took ${took} ms to arrive`);
  const used = mock.requests.filter((r) => r.format === 'openai').slice(-3).map((r) => r.headers.authorization);
  assert.deepEqual(used, Array(3).fill(`Bearer ${KEY_2}`));
});

test('a vault outage keeps the last good values and is reported (status, metrics, one log line); recovery turns it green', async () => {
  const failuresBefore = await metric('skybridge_vault_refresh_failures_total');
  const logStart = logged.length;
  bao.pause();
  try {
    await eventually(async () => assert.equal((await status()).state, 'down'), patience(10_000));
    assert.equal(await metric('skybridge_vault_up'), 0);
    const health = (await (await fetch(`${gw!.url}/health`)).json()) as { status: string; dependencies?: Record<string, string> };
    assert.equal(health.status, 'degraded');
    assert.equal(health.dependencies?.vault, 'unavailable');
    // Several refreshes fail while it is down…
    await eventually(async () => assert.ok((await metric('skybridge_vault_refresh_failures_total')) >= failuresBefore + 2), patience(10_000));
    // …and requests keep working with the last good key.
    for (let i = 0; i < 3; i++) await chat('during the outage');
    assert.equal(lastKey(), `Bearer ${KEY_2}`);
    const st = await status();
    assert.match(st.last_error ?? '', /unreachable/);
    const warnings = logged.slice(logStart).split('\n').filter((l) => l.includes('vault: unreachable'));
    assert.equal(warnings.length, 1, 'one warning per outage');
  } finally {
    bao.resume();
  }
  await eventually(async () => assert.equal((await status()).state, 'up'), patience(10_000));
  assert.equal(await metric('skybridge_vault_up'), 1);
  assert.equal(((await (await fetch(`${gw!.url}/health`)).json()) as { dependencies?: Record<string, string> }).dependencies?.vault, 'ok');
  await chat('after the outage');
  assert.equal(lastKey(), `Bearer ${KEY_2}`);
});

test('resolved values never reach the log or /metrics', async () => {
  const metricsText = await (await fetch(`${gw!.url}/metrics`)).text();
  for (const s of SECRETS) {
    assert.ok(!logged.includes(s), 'a vault value was logged');
    assert.ok(!metricsText.includes(s), 'a vault value is in /metrics');
  }
  assert.ok(logged.includes('configuration updated: vault values rotated'), 'the rotation was logged (without its value)');
});

test('an /api write may not name a vault path the configuration does not read; the error names the field', async () => {
  const r = await api('POST', '/api/providers', { provider: 'groq', keys: [{ name: 'g', value: 'vault.other/thing#key' }], network_config: { base_url: `${mock.url}/openai` } });
  assert.equal(r.status, 400, r.text);
  assert.match(r.text, /keys\[0\]\.value/);
  assert.match(r.text, /vault path other\/thing is not one this configuration already reads/);
});

test('AppRole: the gateway logs in with a role id and secret id from its environment', async () => {
  await bao.api('POST', '/v1/sys/auth/approle', { type: 'approle' });
  await bao.api('POST', '/v1/auth/approle/role/gateway', { token_policies: ['gateway'], token_ttl: '30s' });
  const roleId = ((await bao.api('GET', '/v1/auth/approle/role/gateway/role-id')) as { data: { role_id: string } }).data.role_id;
  const secretId = ((await bao.api('POST', '/v1/auth/approle/role/gateway/secret-id')) as { data: { secret_id: string } }).data.secret_id;
  await bao.putSecret('skybridge/openai', { api_key: KEY_1 });
  await restart(config({ auth: { method: 'approle', role_id: 'env.SKYBRIDGE_TEST_ROLE_ID', secret_id: 'env.SKYBRIDGE_TEST_SECRET_ID' } }), { SKYBRIDGE_TEST_ROLE_ID: roleId, SKYBRIDGE_TEST_SECRET_ID: secretId });
  await chat();
  assert.equal(lastKey(), `Bearer ${KEY_1}`);
  assert.equal((await status()).state, 'up');
  assert.ok(!(await api('GET', '/api/vault/status')).text.includes(secretId));
});

/** A stand-in Kubernetes API answering TokenReviews: the one service account it knows is authenticated. */
async function tokenReviewer(jwt: string): Promise<{ server: Server; url: string; reviews: number }> {
  const state = { reviews: 0 };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      state.reviews++;
      const spec = (JSON.parse(body || '{}') as { spec?: { token?: string; audiences?: string[] } }).spec;
      const ok = req.url === '/apis/authentication.k8s.io/v1/tokenreviews' && spec?.token === jwt;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status: ok ? { authenticated: true, user: { username: 'system:serviceaccount:gw:skybridge', uid: 'sa-uid-1', groups: ['system:serviceaccounts'] }, audiences: spec?.audiences } : { authenticated: false } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return Object.assign(state, { server, url: `http://127.0.0.1:${port}` });
}

// Any CA: the stand-in API is plain http, but OpenBao needs one when it is not running in a pod.
const FAKE_CA = `-----BEGIN CERTIFICATE-----
MIIBkTCCATegAwIBAgIUKgqCXyfTeuYdpwn6sHK2ru1Js4YwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSZmFrZS1rdWJlcm5ldGVzLWNhMCAXDTI2MTEyNjIyMDYzMloY
DzIxMjYxMTAyMjIwNjMyWjAdMRswGQYDVQQDDBJmYWtlLWt1YmVybmV0ZXMtY2Ew
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASqDVioH1GCMAFTdxLkgGDstIHh5gev
f7zs2bKeL5Av+yTzCsBjNvIUz31miOx4WpoFb8k6EW/WuhJDOa1tc9UAo1MwUTAd
BgNVHQ4EFgQUUCB2FrWcK+pxlyzi9BH0FGaBI+UwHwYDVR0jBBgwFoAUUCB2FrWc
K+pxlyzi9BH0FGaBI+UwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBF
AiAs2ofheWZKoDrPzwW1weXNUOzjFvu0CX3PDPDSVRabkAIhAK6mcDR8e30SshQC
ysOuVrPcuCI3/VmMseCocvNNEEmh
-----END CERTIFICATE-----
`;

test('Kubernetes auth: the gateway presents its service account token, which the vault has reviewed', async () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const jwt = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:gw:skybridge', 'kubernetes.io/serviceaccount/namespace': 'gw', 'kubernetes.io/serviceaccount/service-account.name': 'skybridge', 'kubernetes.io/serviceaccount/service-account.uid': 'sa-uid-1' })}.c2ln`;
  const reviewer = await tokenReviewer(jwt);
  try {
    await bao.api('POST', '/v1/sys/auth/kubernetes', { type: 'kubernetes' });
    await bao.api('POST', '/v1/auth/kubernetes/config', { kubernetes_host: reviewer.url, disable_local_ca_jwt: true, kubernetes_ca_cert: FAKE_CA });
    await bao.api('POST', '/v1/auth/kubernetes/role/gateway', { bound_service_account_names: ['skybridge'], bound_service_account_namespaces: ['gw'], token_policies: ['gateway'] });
    const dir = mkdtempSync(join(tmpdir(), 'skybridge-sa-'));
    writeFileSync(join(dir, 'token'), jwt);
    await bao.putSecret('skybridge/openai', { api_key: KEY_2 });
    await restart(config({ auth: { method: 'kubernetes', role: 'gateway', token_path: join(dir, 'token') } }));
    await chat();
    assert.equal(lastKey(), `Bearer ${KEY_2}`);
    assert.ok(reviewer.reviews >= 1, 'the vault reviewed the token');
    assert.equal((await status()).state, 'up');
  } finally {
    reviewer.server.close();
  }
});

test('bad references and vault settings fail the start naming the field and the path, never a value', async () => {
  await gw?.stop();
  gw = undefined;
  const env = { SKYBRIDGE_TEST_VAULT_TOKEN: bao.rootToken };
  const token = { auth: { method: 'token', token: 'env.SKYBRIDGE_TEST_VAULT_TOKEN' } };
  const refused = async (cfg: unknown, ...patterns: RegExp[]) => {
    await assert.rejects(startGateway(cfg, { env }), (err: Error) => {
      for (const p of patterns) assert.match(err.message, p);
      for (const s of SECRETS) assert.ok(!err.message.includes(s));
      return true;
    });
  };
  const withKey = (value: string, vault: Record<string, unknown> = {}) => ({ ...config({ ...token, ...vault }), providers: { openai: { keys: [{ name: 'k', value, weight: 1 }], network_config: { base_url: `${mock.url}/openai` } } } });
  await refused(withKey('vault.skybridge/openai'), /providers\.openai\.keys\[0\]\.value/, /#<field> is missing/);
  await refused(withKey('vault.skybridge/openai#api_key', { mount: 'nomount' }), /providers\.openai\.keys\[0\]\.value/, /no KV v2 mount 'nomount'/);
  await refused(withKey('vault.skybridge/openai#nope'), /providers\.openai\.keys\[0\]\.value/, /skybridge\/openai#nope/, /has no field 'nope'/);
  await refused(withKey('vault.skybridge/absent#api_key'), /providers\.openai\.keys\[0\]\.value/, /no secret at secret\/skybridge\/absent/);
  // The vault's own credentials are references, never literal.
  await refused(withKey('vault.skybridge/openai#api_key', { auth: { method: 'token', token: 'hvs.literal-token' } }), /vault\.auth\.token: must match pattern/);
  await refused(withKey('vault.skybridge/openai#api_key', { auth: { method: 'approle', role_id: 'env.SKYBRIDGE_TEST_VAULT_TOKEN', token: 'env.SKYBRIDGE_TEST_VAULT_TOKEN' } }), /vault\.auth\.token: is not a setting of approle auth/, /vault\.auth\.secret_id: is required for approle auth/);
  // A vault reference where none is read (here: an allowed CORS origin) is refused, not used as a literal.
  await refused({ ...withKey('vault.skybridge/openai#api_key'), client: { allowed_origins: ['vault.skybridge/openai#api_key'] } }, /client\.allowed_origins\[0\]/, /a vault reference is not read here/);
});
