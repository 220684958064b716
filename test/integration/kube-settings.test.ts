// The secure install end to end: a proxy in Kubernetes mode on a real kube-apiserver, started with
// the arguments and environment the Helm chart renders for it (helm template; the secretKeyRef
// variables filled from a Secret in the cluster, as the kubelet would). With the chart's defaults
// a request without a virtual key is refused, /api lives on the admin port only, and the
// management credentials from the Secret protect it there — for every configuration the operator
// renders, not only the first.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { kubeList, renderConfig, type KubeObject } from '../helpers/kube-render.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const NS = 'skybridge';
const OPENAI_KEY = 'PROVIDER_SKYBRIDGE_OPENAI_KEY0';
const VK = 'VIRTUALKEY_TEAM_A_CHECKOUT_VALUE';
const VK_VALUE = 'sk-bf-checkout-secure-1';
const ADMIN_PASSWORD = 'admin-password-from-a-secret-42';
const ADMIN_API_KEY = 'mgmt-key-0123456789abcdef';

let kube: KubeApiServer;
let mock: MockProvider;
let proxy: RunningGateway;
let adminUrl: string;

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: unknown };
}

/** The proxy container of `helm template` with the secure defaults and management auth from a Secret (and `more` values). */
async function chartProxy(more: string[] = []): Promise<{ args: string[]; env: EnvVar[] }> {
  const build = await run('bash', [join(ROOT, 'test/kube/build.sh'), 'helm'], { maxBuffer: 1 << 24 });
  const helm = join(build.stdout.trim().split('\n').at(-1) as string, 'helm');
  const sets = ['gateway.managementAuth.existingSecret=skybridge-admin', 'gateway.managementAuth.apiKeysKey=api-keys', ...more];
  const { stdout } = await run(helm, ['template', 'sb', join(ROOT, 'charts/skybridge'), '-n', NS, '--kube-version', '1.34.0', ...sets.flatMap((s) => ['--set', s])], { maxBuffer: 1 << 26 });
  const deployment = parseAllDocuments(stdout)
    .map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { template: { spec: { containers: { args: string[]; env: EnvVar[] }[] } } } })
    .find((d) => d?.kind === 'Deployment' && d.metadata.name === 'sb-skybridge-proxy');
  assert.ok(deployment, 'the chart renders the proxy Deployment');
  return deployment.spec.template.spec.containers[0];
}

/** The container's environment as the kubelet would set it: values, and Secret keys read from the cluster. */
async function resolveEnv(env: EnvVar[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const r = await kube.kubectl(['get', 'secret', ref.name, '-n', NS, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      out[e.name] = Buffer.from((JSON.parse(r.stdout) as { data: Record<string, string> }).data[ref.key], 'base64').toString('utf8');
    }
  }
  return out;
}

function document(rev: string): Record<string, unknown> {
  return {
    providers: { openai: { keys: [{ name: 'key0', value: `env.${OPENAI_KEY}`, weight: 1 }], network_config: { base_url: `${mock.url}/openai`, max_retries: 0, extra_headers: { 'x-config-rev': rev } } } },
    governance: { virtual_keys: [{ id: 'checkout', name: 'checkout', value: `env.${VK}`, is_active: true, provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }] }] },
  };
}

async function apply(objects: KubeObject[] | Record<string, unknown>[]): Promise<void> {
  const r = await kube.kubectl(['apply', '--server-side', '--field-manager=skybridge-operator', '--force-conflicts', '-f', '-'], kubeList(objects as KubeObject[]));
  assert.equal(r.code, 0, `kubectl apply failed: ${r.stderr}`);
}

const renderRev = (rev: string) => renderConfig(document(rev), { [OPENAI_KEY]: 'sk-openai-1', [VK]: VK_VALUE }, { namespace: NS, managed: { providers: ['openai'], virtual_keys: ['checkout'] } });

const chat = (headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10 }),
  });

let chartEnv: Record<string, string>;
let chartArgs: string[];

before(
  async () => {
    [kube, mock] = await Promise.all([startKubeApiServer(), startMockProvider()]);
    assert.equal((await kube.kubectl(['create', 'namespace', NS])).code, 0);
    // Secrets before what references them: the management credentials, then the rendered configuration.
    const admin = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'skybridge-admin', namespace: NS }, type: 'Opaque', stringData: { username: 'admin', password: ADMIN_PASSWORD, 'api-keys': ADMIN_API_KEY } };
    await apply([admin]);
    await apply(renderRev('1').all);
    const c = await chartProxy();
    chartEnv = await resolveEnv(c.env);
    // The chart's own proxy arguments, but on free local ports (the chart's are fixed container ports).
    chartArgs = c.args.filter((a) => a.startsWith('--admin-port=')).map(() => '--admin-port=0');
    assert.deepEqual(chartArgs, ['--admin-port=0'], `the chart sets --admin-port: ${JSON.stringify(c.args)}`);
    proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, ...chartEnv }, args: ['--kube-namespace', NS, ...chartArgs] });
    const m = /"admin_address":"http:\/\/[^:]+:(\d+)"/.exec(proxy.logs());
    assert.ok(m, proxy.logs());
    adminUrl = `http://127.0.0.1:${m[1]}`;
  },
  { timeout: 900_000 },
);

after(async () => {
  await proxy?.stop();
  await mock?.close();
  await kube?.stop();
});

describe('the chart’s secure defaults on a proxy following Kubernetes', () => {
  test('the chart passes virtual-key enforcement and the management credentials (from the Secret) as environment', () => {
    assert.equal(chartEnv.SKYBRIDGE_CLIENT, '{"enforce_auth_on_inference":true}');
    assert.equal(chartEnv.SKYBRIDGE_ADMIN_PASSWORD, ADMIN_PASSWORD);
  });

  test('a request without a virtual key gets 401; with the VirtualKey it is served', async () => {
    const refused = await chat();
    assert.equal(refused.status, 401);
    const body = (await refused.json()) as { error: { message: string } };
    assert.match(body.error.message, /virtual key is required/);
    // (The model catalog's list request may have; no completion did.)
    assert.equal(mock.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 0, 'nothing reached the provider');
    const served = await chat({ 'x-bf-vk': VK_VALUE });
    assert.equal(served.status, 200, await served.clone().text());
  });

  test('/api is refused on the inference port; on the admin port it asks for the Secret’s credentials', async () => {
    const onInference = await fetch(`${proxy.url}/api/config`);
    assert.equal(onInference.status, 404);
    assert.equal(((await onInference.json()) as { error: { code: string } }).error.code, 'admin_port_only');
    assert.equal((await fetch(`${proxy.url}/metrics`)).status, 404);

    assert.equal((await fetch(`${adminUrl}/api/config`)).status, 401);
    const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
    const viaBasic = await fetch(`${adminUrl}/api/config`, { headers: { authorization: basic } });
    assert.equal(viaBasic.status, 200);
    const text = await viaBasic.text();
    for (const secret of [ADMIN_PASSWORD, ADMIN_API_KEY, VK_VALUE]) assert.ok(!text.includes(secret), 'no secret in /api/config');
    assert.equal((await fetch(`${adminUrl}/api/config`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}` } })).status, 200);
    assert.equal((await fetch(`${adminUrl}/api/config`, { headers: { authorization: `Bearer ${ADMIN_API_KEY}x` } })).status, 401);
    assert.equal((await fetch(`${adminUrl}/metrics`)).status, 200);
  });

  test('the settings hold for every configuration the operator renders, not only the first', async () => {
    const before = ((await (await fetch(`${proxy.url}/health`)).json()) as { config_hash: string }).config_hash;
    await apply(renderRev('2').all);
    await eventually(async () => {
      const now = ((await (await fetch(`${proxy.url}/health`)).json()) as { config_hash: string }).config_hash;
      assert.notEqual(now, before);
    }, 10_000);
    assert.equal((await chat()).status, 401);
    const served = await chat({ 'x-bf-vk': VK_VALUE });
    assert.equal(served.status, 200);
    assert.equal(mock.requests.at(-1)?.headers['x-config-rev'], '2');
    assert.equal((await fetch(`${adminUrl}/api/config`)).status, 401);
  });

  test('audit log settings from chart values reach the proxy: retention as a value, the HMAC key from a Secret', async () => {
    const HMAC = 'audit-hmac-key-from-a-secret-0123456789abcdef';
    await apply([{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'skybridge-audit', namespace: NS }, type: 'Opaque', stringData: { 'hmac-key': HMAC } }]);
    const c = await chartProxy(['gateway.auditLogs.retentionDays=30', 'gateway.auditLogs.hmacKeySecret=skybridge-audit', 'gateway.client.enable_logging=true']);
    const keyVar = c.env.find((e) => e.name === 'SKYBRIDGE_AUDIT_HMAC_KEY');
    assert.deepEqual(keyVar?.valueFrom?.secretKeyRef, { name: 'skybridge-audit', key: 'hmac-key' }, 'the key is a Secret reference');
    assert.equal(c.env.find((e) => e.name === 'SKYBRIDGE_AUDIT_LOGS')?.value, '{"disabled":false,"retention_days":30}');
    const audited = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, ...(await resolveEnv(c.env)) }, args: ['--kube-namespace', NS, '--admin-port=0'] });
    try {
      const port = /"admin_address":"http:\/\/[^:]+:(\d+)"/.exec(audited.logs())?.[1];
      assert.ok(port, audited.logs());
      const auth = { authorization: `Bearer ${ADMIN_API_KEY}` };
      const verify = await fetch(`http://127.0.0.1:${port}/api/audit-logs/verify`, { headers: auth });
      assert.equal(verify.status, 200, await verify.clone().text());
      assert.equal(((await verify.json()) as { algorithm: string }).algorithm, 'hmac-sha256', 'the chain is keyed by the Secret');
      const config = await (await fetch(`http://127.0.0.1:${port}/api/config`, { headers: auth })).text();
      assert.match(config, /"retention_days":30/);
      assert.ok(!config.includes(HMAC), 'the key is not in /api/config');
      assert.ok(!audited.logs().includes(HMAC), 'nor in the log');
    } finally {
      await audited.stop();
    }
  });

  test('a bad setting stops the start with a message naming the variable and the field', async () => {
    await assert.rejects(
      startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, SKYBRIDGE_CLIENT: '{"enforce_auth_on_inference":"yes"}' }, args: ['--kube-namespace', NS] }),
      /gateway exited with 1:[\s\S]*SKYBRIDGE_CLIENT: enforce_auth_on_inference: /,
    );
    await assert.rejects(
      startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig, SKYBRIDGE_ADMIN_API_KEYS: 'short' }, args: ['--kube-namespace', NS] }),
      /gateway exited with 1:[\s\S]*SKYBRIDGE_ADMIN_API_KEYS: governance\.auth_config\.api_keys\[0\]/,
    );
  });
});
