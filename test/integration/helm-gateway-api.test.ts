// The chart's HTTPRoute (Gateway API) and Ingress: rendered by helm, then applied to the real
// kube-apiserver with the Gateway API's standard-channel CRDs installed (from the Go module
// sigs.k8s.io/gateway-api, through the module proxy), so the API server's own validation, CEL rules
// included, judges what the chart writes. Bad value combinations stop helm template with a message
// naming the values.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubectlOk, startKubeApiServer, waitFor, type KubeApiServer } from '../helpers/kube.ts';
import { crdsIn, goModuleDir } from '../helpers/go-module.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const CHART = join(ROOT, 'charts/skybridge');
export const GATEWAY_API = 'sigs.k8s.io/gateway-api@v1.4.0';
const NS = 'skybridge';

let kube: KubeApiServer;
let helm = '';
let kubeVersion = '';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

before(async () => {
  // One after the other: build.sh runs hold a lock each other's output depends on.
  kube = await startKubeApiServer();
  const build = await run('bash', [join(ROOT, 'test/kube/build.sh'), 'helm'], { maxBuffer: 1 << 24 });
  const gatewayApi = await goModuleDir(GATEWAY_API);
  helm = join(build.stdout.trim().split('\n').at(-1) as string, 'helm');
  kubeVersion = (JSON.parse(await kubectlOk(kube, ['version', '-o', 'json'])) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion;
  const crds = crdsIn(join(gatewayApi, 'config/crd/standard'));
  assert.ok(crds.some((c) => c.name.includes('httproutes')), `no HTTPRoute CRD in ${gatewayApi}/config/crd/standard`);
  await kubectlOk(kube, ['apply', '--server-side', '-f', '-'], crds.map((c) => c.yaml).join('\n---\n'));
  await kubectlOk(kube, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/httproutes.gateway.networking.k8s.io', 'crd/gateways.gateway.networking.k8s.io']);
  await kubectlOk(kube, ['create', 'namespace', NS]);
}, { timeout: 30 * 60_000 });

after(async () => {
  await kube?.stop();
});

/** `helm template` of one template with `sets`; the parsed objects, or the error output. */
async function render(template: string, sets: string[]): Promise<{ docs: Manifest[]; text: string }> {
  const args = ['template', 'sb', CHART, '-n', NS, '--kube-version', kubeVersion, '--show-only', `templates/${template}`, ...sets.flatMap((s) => ['--set', s])];
  const { stdout } = await run(helm, args, { maxBuffer: 1 << 24 });
  return { text: stdout, docs: parseAllDocuments(stdout).map((d) => d.toJS() as Manifest).filter(Boolean) };
}

async function refused(template: string, sets: string[]): Promise<string> {
  return render(template, sets).then(
    () => assert.fail(`helm template accepted ${sets.join(' ')}`),
    (e: { stderr?: string }) => e.stderr ?? String(e),
  );
}

/** Applies as the API server sees it (server-side, strict field validation) and reads the stored object back. */
async function applied(text: string, kind: string, name: string): Promise<Manifest> {
  await kubectlOk(kube, ['apply', '--server-side', '--field-manager=helm', '--validate=strict', '-n', NS, '-f', '-'], text);
  return JSON.parse(await kubectlOk(kube, ['get', kind, name, '-n', NS, '-o', 'json'])) as Manifest;
}

const ROUTE = ['httpRoute.enabled=true', 'httpRoute.parentRefs[0].name=shared-gateway', 'httpRoute.parentRefs[0].namespace=gateway-infra', 'httpRoute.parentRefs[0].sectionName=https'];

describe('HTTPRoute', () => {
  test('off by default', async () => {
    assert.equal((await render('httproute.yaml', []).catch((e: { stderr?: string }) => ({ docs: [], text: e.stderr ?? '' }))).docs.length, 0);
  });

  test('attaches the inference Service to the Gateway with hour-long timeouts for streams and WebSockets; the API server accepts it', async () => {
    const { text, docs } = await render('httproute.yaml', [...ROUTE, 'httpRoute.hostnames={llm.example.com,*.llm.example.com}']);
    assert.equal(docs.length, 1);
    const route = await applied(text, 'httproute', 'sb-skybridge-proxy');
    assert.equal(route.apiVersion, 'gateway.networking.k8s.io/v1');
    const spec = route.spec as { parentRefs: { name: string; namespace: string; sectionName: string }[]; hostnames: string[]; rules: { matches: unknown[]; backendRefs: { name: string; port: number }[]; timeouts: Record<string, string> }[] };
    assert.deepEqual(spec.parentRefs.map((p) => [p.name, p.namespace, p.sectionName]), [['shared-gateway', 'gateway-infra', 'https']]);
    assert.deepEqual(spec.hostnames, ['llm.example.com', '*.llm.example.com']);
    // Only the inference Service (port 80): the admin port's /api, /metrics and dashboard are not routed.
    assert.deepEqual(spec.rules[0].backendRefs.map((b) => [b.name, b.port]), [['sb-skybridge-proxy', 80]]);
    assert.deepEqual(spec.rules[0].timeouts, { request: '1h', backendRequest: '1h' });
    assert.deepEqual(spec.rules[0].matches, [{ path: { type: 'PathPrefix', value: '/' } }]);
  });

  test('timeouts and the path prefix come from the values; an empty timeout is left unset', async () => {
    const { text } = await render('httproute.yaml', [...ROUTE, 'httpRoute.timeouts.request=0s', 'httpRoute.timeouts.backendRequest=', 'httpRoute.pathPrefix=/llm', 'proxy.service.port=8081']);
    const route = await applied(text, 'httproute', 'sb-skybridge-proxy');
    const rule = (route.spec as { rules: { timeouts: Record<string, string>; backendRefs: { port: number }[]; matches: { path: { value: string } }[] }[] }).rules[0];
    assert.deepEqual(rule.timeouts, { request: '0s' });
    assert.equal(rule.backendRefs[0].port, 8081);
    assert.equal(rule.matches[0].path.value, '/llm');
    const tuned = await render('httproute.yaml', [...ROUTE, 'httpRoute.timeouts.request=10m', 'httpRoute.timeouts.backendRequest=9m30s']);
    const stored = await applied(tuned.text, 'httproute', 'sb-skybridge-proxy');
    assert.deepEqual((stored.spec as { rules: { timeouts: Record<string, string> }[] }).rules[0].timeouts, { request: '10m', backendRequest: '9m30s' });
  });

  test('bad combinations stop helm template, naming the values', async () => {
    assert.match(await refused('httproute.yaml', ['httpRoute.enabled=true']), /httpRoute\.parentRefs/);
    assert.match(await refused('httproute.yaml', [...ROUTE, 'httpRoute.timeouts.request=30s', 'httpRoute.timeouts.backendRequest=1m']), /backendRequest \(1m\) is longer than httpRoute\.timeouts\.request \(30s\)/);
    assert.match(await refused('httproute.yaml', [...ROUTE, 'httpRoute.timeouts.request=1h', 'httpRoute.timeouts.backendRequest=0s']), /backendRequest \(0s\)/);
    assert.match(await refused('httproute.yaml', [...ROUTE, 'proxy.tls.existingSecret=gateway-tls']), /proxy\.tls\.existingSecret/);
    assert.match(await refused('httproute.yaml', [...ROUTE, 'httpRoute.timeouts.request=an hour']), /timeouts\/request|request/);
    assert.match(await refused('httproute.yaml', [...ROUTE, 'httpRoute.hostnames={LLM_host}']), /hostnames/);
  });

  test('what the chart refuses, the API server would refuse too (backendRequest longer than request)', async () => {
    const { text } = await render('httproute.yaml', ROUTE);
    const tooLong = text.replace('backendRequest: 1h', 'backendRequest: 2h');
    assert.notEqual(tooLong, text);
    const r = await kube.kubectl(['apply', '--server-side', '--field-manager=helm', '-n', NS, '-f', '-'], tooLong);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /backendRequest timeout cannot be longer than request timeout/);
  });
});

describe('Ingress', () => {
  const INGRESS = ['ingress.enabled=true', 'ingress.className=nginx', 'ingress.hosts={llm.example.com,llm.internal.example.com}', 'ingress.tls[0].secretName=llm-tls', 'ingress.tls[0].hosts={llm.example.com}'];

  test('hosts to the inference Service, TLS, and annotations for long-lived connections; the API server accepts it', async () => {
    const { text } = await render('ingress.yaml', INGRESS);
    const ing = await applied(text, 'ingress', 'sb-skybridge-proxy');
    const spec = ing.spec as { ingressClassName: string; tls: { secretName: string; hosts: string[] }[]; rules: { host: string; http: { paths: { path: string; pathType: string; backend: { service: { name: string; port: { name: string } } } }[] } }[] };
    assert.equal(spec.ingressClassName, 'nginx');
    assert.deepEqual(spec.tls, [{ secretName: 'llm-tls', hosts: ['llm.example.com'] }]);
    assert.deepEqual(spec.rules.map((r) => r.host), ['llm.example.com', 'llm.internal.example.com']);
    for (const r of spec.rules) assert.deepEqual(r.http.paths, [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'sb-skybridge-proxy', port: { name: 'http' } } } }]);
    const annotations = ing.metadata.annotations ?? {};
    assert.equal(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'], '3600');
    assert.equal(annotations['nginx.ingress.kubernetes.io/proxy-buffering'], 'off');
  });

  test('annotations are values: one can be dropped (null) and others added', async () => {
    const { docs } = await render('ingress.yaml', [...INGRESS, 'ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-buffering=null', 'ingress.annotations.example\\.com/idle-timeout=1h']);
    const annotations = docs[0].metadata.annotations ?? {};
    assert.equal(annotations['nginx.ingress.kubernetes.io/proxy-buffering'], undefined);
    assert.equal(annotations['example.com/idle-timeout'], '1h');
  });

  test('bad combinations stop helm template, naming the values', async () => {
    assert.match(await refused('ingress.yaml', ['ingress.enabled=true']), /ingress\.hosts/);
    assert.match(await refused('ingress.yaml', [...INGRESS, 'ingress.tls[0].hosts={other.example.com}']), /ingress\.tls\[0\]\.hosts: other\.example\.com is not one of ingress\.hosts/);
    assert.match(await refused('ingress.yaml', ['ingress.enabled=true', 'ingress.hosts={llm.example.com}', 'ingress.tls[0].hosts={llm.example.com}']), /ingress\.tls\[0\]: set secretName/);
    assert.match(await refused('ingress.yaml', [...INGRESS, 'ingress.pathType=Regex']), /pathType/);
  });
});

describe('InferencePool RBAC', () => {
  test('off by default; on, a Role per namespace with get, list, watch on inferencepools and endpointslices only', async () => {
    const off = await render('proxy-rbac.yaml', []);
    assert.ok(!off.docs.some((d) => d.metadata.name.endsWith('-inference-pools')));
    const { docs, text } = await render('proxy-rbac.yaml', ['proxy.inferencePools.enabled=true', 'proxy.inferencePools.namespaces={skybridge}']);
    const roles = docs.filter((d) => d.kind === 'Role' && d.metadata.name === 'sb-skybridge-proxy-inference-pools');
    assert.deepEqual(roles.map((r) => r.metadata.namespace), ['skybridge']);
    assert.deepEqual((roles[0] as unknown as { rules: unknown[] }).rules, [
      { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
    ]);
    await kubectlOk(kube, ['apply', '-n', NS, '-f', '-'], text);
    // A SubjectAccessReview asks RBAC itself (kubectl auth can-i would first look the resource up, and
    // this API server has no InferencePool CRD).
    const can = async (verb: string, resource: string): Promise<boolean> => {
      const [name, ...group] = resource.split('.');
      const review = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: `system:serviceaccount:${NS}:sb-skybridge-proxy`, groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`], resourceAttributes: { namespace: NS, verb, group: group.join('.'), resource: name } },
      };
      return (JSON.parse(await kubectlOk(kube, ['create', '-o', 'json', '-f', '-'], JSON.stringify(review))) as { status: { allowed?: boolean } }).status.allowed === true;
    };
    await waitFor('the Role to apply', async () => can('watch', 'inferencepools.inference.networking.k8s.io'));
    assert.equal(await can('list', 'endpointslices.discovery.k8s.io'), true);
    assert.equal(await can('get', 'inferencepools.inference.networking.k8s.io'), true);
    for (const [verb, resource] of [['create', 'endpointslices.discovery.k8s.io'], ['update', 'inferencepools.inference.networking.k8s.io'], ['list', 'pods'], ['list', 'services']]) {
      assert.equal(await can(verb, resource), false, `${verb} ${resource}`);
    }
    const defaults = await render('proxy-rbac.yaml', ['proxy.inferencePools.enabled=true', 'configNamespace=gateway-config']);
    assert.deepEqual(defaults.docs.filter((d) => d.kind === 'Role' && d.metadata.name.endsWith('-inference-pools')).map((r) => r.metadata.namespace), ['gateway-config']);
  });
});
