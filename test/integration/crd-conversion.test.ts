// The two API versions on a real kube-apiserver, converted by the operator's own webhook: the CRDs
// from crds/ as a user applies them (the placeholder conversion Service), the operator run with a
// certificate and least privilege points them at itself with the CA, then an object written in
// either version reads back in the other with kubectl, is stored as v1beta1, and is served by a
// proxy. `kubectl explain` shows the field descriptions, and the printer columns the reason.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import OpenAI from 'openai';
import { kubectlOk, kubeGet, startKubeApiServer, type KubeApiServer, waitFor as waitUntil, kubeconfigFor } from '../helpers/kube.ts';
import { operatorCrdRbac, operatorRbac, proxyRbac } from '../helpers/kube-rbac.ts';
import { startOperator, type OperatorProcess } from '../helpers/operator-process.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { makeTestCa } from '../helpers/test-ca.ts';
import { freePort } from '../helpers/ports.ts';
import { eventually, patience } from '../helpers/patience.ts';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { crdNames } from '../../operator/src/conversion/crd-config.ts';

const NS = 'skybridge';
const ROOT = new URL('../..', import.meta.url).pathname;
const VK_ALPHA = 'sk-bf-alpha-written-0001';
const VK_BETA = 'sk-bf-beta-written-0002';

let kube: KubeApiServer | undefined;
let agent: Agent | undefined;
let operator: OperatorProcess | undefined;
let mock: MockProvider | undefined;
let proxy: RunningGateway | undefined;
let webhookUrl = '';
let caPem = '';

const kubectl = (args: string[], stdin?: string): Promise<string> => kubectlOk(kube!, args, stdin);
const apply = (obj: unknown) => kubectl(['apply', '--server-side', '-n', NS, '-f', '-'], JSON.stringify(obj));
const logs = () => [`--- operator ---\n${operator?.output().split('\n').slice(-30).join('\n')}`, `--- proxy ---\n${proxy?.logs().split('\n').slice(-20).join('\n') ?? ''}`].join('\n');
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> => waitUntil(what, fn, { timeoutMs, everyMs: 200, context: logs });
/** The object as kubectl reads it in one version (`virtualkeys.v1beta1.gateway.skybridge.dev`). */
const getAs = async (plural: string, version: string, name: string) =>
  JSON.parse(await kubectl(['get', `${plural}.${version}.gateway.skybridge.dev`, name, '-n', NS, '-o', 'json'])) as { apiVersion: string; spec: Record<string, unknown>; status?: { reason?: string; message?: string } };

const sdk = (vk: string) => new OpenAI({ baseURL: `${proxy!.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-bf-vk': vk } });
const ask = async (vk: string, model = 'openai/gpt-4o') => (await sdk(vk).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }] })).choices[0].message.content;

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'skybridge-operator' }, { name: 'skybridge-proxy' }] });
  agent = new Agent({ connect: { ca: kube.ca } });
  mock = await startMockProvider();
  // As a user installs them: the files' placeholder Service, no caBundle.
  await kubectl(['apply', '--server-side', '-f', `${ROOT}/crds`]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=120s', 'crd', '--all']);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['apply', '-f', '-'], `${proxyRbac(NS)}\n---${operatorRbac(NS, { servedLeases: true })}\n---${operatorCrdRbac(crdNames())}`);
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'llm-credentials', namespace: NS }, stringData: { openai: 'sk-openai-conversion-1', alpha: VK_ALPHA, beta: VK_BETA } });

  // The chart's Secret layout: tls.crt, tls.key and ca.crt in one directory.
  const ca = makeTestCa();
  const { cert, key } = ca.issue('conversion');
  const certDir = ca.dir;
  copyFileSync(cert, join(certDir, 'tls.crt'));
  copyFileSync(key, join(certDir, 'tls.key'));
  writeFileSync(join(certDir, 'ca.crt'), ca.pem);
  caPem = ca.pem;
  const port = await freePort();
  webhookUrl = `https://127.0.0.1:${port}/convert`;
  operator = startOperator(kube, {
    namespace: NS,
    identity: 'op',
    kubeconfig: kubeconfigFor(kube, 'skybridge-operator'),
    args: ['--lease-duration', '5', '--conversion-cert-dir', certDir, '--conversion-host', '127.0.0.1', '--conversion-port', String(port), '--conversion-url', webhookUrl, '--conversion-check-period', '1'],
  });
  proxy = await startGateway(undefined, { env: { KUBECONFIG: kubeconfigFor(kube, 'skybridge-proxy'), HOME: kube.stateDir }, args: ['--kube-namespace', NS] });
}, { timeout: 30 * 60_000 });

after(async () => {
  await proxy?.stop();
  await operator?.stop();
  await mock?.close();
  await agent?.close();
  await kube?.stop();
});

// Each test runs kubectl several times and waits on the operator's one-second check: on a busy
// machine that outlasts the suite's 120 s, so the limit stretches with the load like the waits do.
const slow = { timeout: patience(120_000) };

describe('conversion through the operator', () => {
  test('the operator points every CRD at its webhook with its CA, and puts it back when it is changed', slow, async () => {
    const caBundle = Buffer.from(caPem).toString('base64');
    const pointed = async () => {
      for (const name of crdNames()) {
        const crd = await kubeGet<{ spec: { conversion: { webhook?: { clientConfig?: { url?: string; caBundle?: string; service?: unknown } } } } }>(kube!, agent!, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        const cc = crd?.spec.conversion.webhook?.clientConfig;
        if (cc?.url !== webhookUrl || cc.caBundle !== caBundle || cc.service) return undefined;
      }
      return true;
    };
    await waitFor('every CRD to call the operator', pointed);
    // Someone changes it (an edit, an old CA written back): the operator sets it again.
    const other = Buffer.from(makeTestCa().pem).toString('base64');
    for (const name of crdNames()) await kubectl(['patch', 'crd', name, '--type', 'merge', '-p', JSON.stringify({ spec: { conversion: { webhook: { clientConfig: { caBundle: other } } } } })]);
    await waitFor('the operator to point the CRDs at itself again', pointed);
  });

  test('a v1alpha1 VirtualKey reads back as v1beta1 in camelCase, is stored as v1beta1, and the proxy serves it', slow, async () => {
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'openai', namespace: NS },
      spec: { keys: [{ name: 'default', valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'openai' } } }], network_config: { base_url: `${mock!.url}/openai`, max_retries: 0 } },
    });
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1alpha1',
      kind: 'VirtualKey',
      metadata: { name: 'alpha-written', namespace: NS },
      spec: { valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'alpha' } }, is_active: true, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }], rateLimit: { request_max_limit: 100, request_reset_duration: '1m' } },
    });
    const beta = await getAs('virtualkeys', 'v1beta1', 'alpha-written');
    assert.equal(beta.apiVersion, 'gateway.skybridge.dev/v1beta1');
    assert.deepEqual(beta.spec, {
      valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'alpha' } },
      isActive: true,
      providerConfigs: [{ provider: 'openai', allowedModels: ['gpt-4o'], keyIDs: ['*'] }],
      rateLimit: { requestMaxLimit: 100, requestResetDuration: '1m' },
    });
    const alpha = await getAs('virtualkeys', 'v1alpha1', 'alpha-written');
    assert.deepEqual(alpha.spec.provider_configs, [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'] }]);
    for (const name of crdNames()) {
      const crd = await kubeGet<{ status: { storedVersions: string[] } }>(kube!, agent!, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      assert.deepEqual(crd?.status.storedVersions, ['v1beta1'], name);
    }
    await eventually(async () => assert.equal(await ask(VK_ALPHA), 'Mock reply to: Hello'), 60_000);
    // The converted allowed_models holds: another model is refused.
    await assert.rejects(ask(VK_ALPHA, 'openai/gpt-4o-mini'), (err: { status?: number }) => err.status === 403);
  });

  test('a v1beta1 VirtualKey reads back as v1alpha1 in snake_case, and the proxy serves it', slow, async () => {
    await apply({
      apiVersion: 'gateway.skybridge.dev/v1beta1',
      kind: 'VirtualKey',
      metadata: { name: 'beta-written', namespace: NS },
      spec: { valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'beta' } }, providerConfigs: [{ provider: 'openai', allowedModels: ['gpt-4o-mini'], keyIDs: ['*'] }], budget: { maxLimit: 5, resetDuration: '1d' } },
    });
    const alpha = await getAs('virtualkeys', 'v1alpha1', 'beta-written');
    assert.equal(alpha.apiVersion, 'gateway.skybridge.dev/v1alpha1');
    assert.deepEqual(alpha.spec, { valueFrom: { secretKeyRef: { name: 'llm-credentials', key: 'beta' } }, provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o-mini'], key_ids: ['*'] }], budget: { max_limit: 5, reset_duration: '1d' } });
    await eventually(async () => assert.equal(await ask(VK_BETA, 'openai/gpt-4o-mini'), 'Mock reply to: Hello'), 60_000);
    await assert.rejects(ask(VK_BETA, 'openai/gpt-4o'), (err: { status?: number }) => err.status === 403);
  });

  test('a v1beta1 rule with camelCase fields is checked by its CEL rules, naming the v1beta1 field', slow, async () => {
    const r = await kube!.kubectl(['apply', '-n', NS, '-f', '-'], JSON.stringify({ apiVersion: 'gateway.skybridge.dev/v1beta1', kind: 'RoutingRule', metadata: { name: 'bad-scope', namespace: NS }, spec: { scope: 'team', targets: [{ provider: 'openai', weight: 1 }] } }));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.scopeID: Invalid value: .*scopeID is required unless scope is global/);
  });

  test('the printer columns show the reason and, wide, its message', slow, async () => {
    await apply({ apiVersion: 'gateway.skybridge.dev/v1beta1', kind: 'VirtualKey', metadata: { name: 'no-secret', namespace: NS }, spec: { valueFrom: { secretKeyRef: { name: 'missing', key: 'x' } } } });
    const row = await waitFor('the refused key to show its reason', async () => {
      const out = await kubectl(['get', 'virtualkeys.v1beta1.gateway.skybridge.dev', 'no-secret', '-n', NS, '-o', 'wide']);
      return out.includes('SecretNotFound') ? out : undefined;
    });
    const [header, line] = row.trim().split('\n');
    assert.match(header, /READY\s+REASON\s+SERVED\s+MESSAGE/);
    assert.match(line, /False\s+SecretNotFound\s+\S+\s+.*missing/);
    // v1alpha1 shows the same.
    assert.match(await kubectl(['get', 'virtualkeys.v1alpha1.gateway.skybridge.dev', 'no-secret', '-n', NS]), /SecretNotFound/);
  });

  test('kubectl explain shows the v1beta1 field descriptions', slow, async () => {
    const out = await kubectl(['explain', 'virtualkeys.spec.providerConfigs.allowedModels', '--api-version=gateway.skybridge.dev/v1beta1']);
    assert.match(out, /FIELD:\s+allowedModels/);
    assert.match(out, /DESCRIPTION:\n\s+\S/);
    const provider = await kubectl(['explain', 'providers.spec.networkConfig', '--api-version=gateway.skybridge.dev/v1beta1']);
    assert.match(provider, /baseURL\s+<string>/);
  });

  test('the webhook refuses an object it cannot convert, naming the object and the field', slow, async () => {
    const dispatcher = new Agent({ connect: { ca: caPem } });
    try {
      const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u1', desiredAPIVersion: 'gateway.skybridge.dev/v1alpha1', objects: [{ apiVersion: 'gateway.skybridge.dev/v1beta1', kind: 'VirtualKey', metadata: { name: 'odd', namespace: NS }, spec: { providerConfigs: [{ allowed_models: ['x'] }] } }] } };
      const res = await fetch(webhookUrl, { method: 'POST', body: JSON.stringify(review), headers: { 'content-type': 'application/json' }, dispatcher });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { response: { uid: string; result: { status: string; message: string } } };
      assert.equal(body.response.uid, 'u1');
      assert.deepEqual(body.response.result, {
        status: 'Failure',
        message: `cannot convert VirtualKey ${NS}/odd (gateway.skybridge.dev/v1beta1) to gateway.skybridge.dev/v1alpha1: spec.providerConfigs[0].allowed_models: unknown field (v1beta1 has no such field here)`,
      });
      const bad = await fetch(webhookUrl, { method: 'POST', body: '{"kind":"Pod"}', dispatcher });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { message: string }).message, /ConversionReview/);
    } finally {
      await dispatcher.close();
    }
  });
});
