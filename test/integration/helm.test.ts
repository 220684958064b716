// The Helm chart: `helm lint --strict` and `helm template | kubeconform -strict` for the default
// values and with every optional feature on, validated offline against JSON Schemas converted from
// Kubernetes' own OpenAPI documents (k8s.io/kubernetes, the version test/kube builds), our CRDs and
// the Prometheus operator's ServiceMonitor CRD. helm and kubeconform come from test/kube/build.sh
// (go install from the module proxy, cached outside the repository); a cold build takes minutes.
// HELM and KUBECONFORM in the environment name binaries to use instead.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { crdSchemaFiles, openApiSchemaFiles, schemaFileName } from '../../operator/src/crds/kubeconform-schemas.ts';
import { crdNames } from '../../operator/src/conversion/crd-config.ts';
import { problems, registered } from '../helpers/promql.ts';
import { KINDS } from '../../operator/src/resources/kinds.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const CHART = join(ROOT, 'charts/skybridge');
const PROMETHEUS_OPERATOR = 'github.com/prometheus-operator/prometheus-operator@v0.85.0';
/** The OpenAPI documents of the API groups the chart uses. */
const OPENAPI_FILES = ['api__v1', 'apis__apps__v1', 'apis__rbac.authorization.k8s.io__v1', 'apis__autoscaling__v2', 'apis__policy__v1', 'apis__apiextensions.k8s.io__v1', 'apis__networking.k8s.io__v1', 'apis__admissionregistration.k8s.io__v1'];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

let helm = '';
let kubeconform = '';
let kubeVersion = '';
let schemaDir = '';
let workDir = '';

async function goModDir(cwd: string, module: string, goflags: string): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', module], { cwd, env: { ...process.env, GOFLAGS: goflags }, maxBuffer: 1 << 20 });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

before(async () => {
  if (process.env.HELM && process.env.KUBECONFORM) {
    helm = process.env.HELM;
    kubeconform = process.env.KUBECONFORM;
  } else {
    const build = await run('bash', [join(ROOT, 'test/kube/build.sh'), 'helm', 'kubeconform'], { maxBuffer: 1 << 24 });
    const bin = build.stdout.trim().split('\n').at(-1) as string;
    helm = join(bin, 'helm');
    kubeconform = join(bin, 'kubeconform');
  }

  // Built-in kinds from the Kubernetes release test/kube pins (the module is already in its build).
  const k8sDir = await goModDir(join(ROOT, 'test/kube'), 'k8s.io/kubernetes', '-mod=readonly');
  kubeVersion = /@v([0-9.]+)$/.exec(k8sDir)?.[1] ?? '';
  assert.ok(kubeVersion, `no version in ${k8sDir}`);
  schemaDir = mkdtempSync(join(tmpdir(), 'skybridge-schemas-'));
  workDir = mkdtempSync(join(tmpdir(), 'skybridge-helm-'));
  for (const name of OPENAPI_FILES) {
    const doc = JSON.parse(readFileSync(join(k8sDir, 'api/openapi-spec/v3', `${name}_openapi.json`), 'utf8'));
    for (const f of openApiSchemaFiles(doc, true)) writeFileSync(join(schemaDir, f.name), JSON.stringify(f.schema));
  }
  // Our CRDs, from the committed files (the unit test keeps them equal to the generator's output).
  for (const file of readdirSync(join(ROOT, 'crds'))) {
    for (const d of parseAllDocuments(readFileSync(join(ROOT, 'crds', file), 'utf8'))) {
      for (const f of crdSchemaFiles(d.toJS(), true)) writeFileSync(join(schemaDir, f.name), JSON.stringify(f.schema));
    }
  }
  const promDir = await goModDir(tmpdir(), PROMETHEUS_OPERATOR, '-mod=mod');
  for (const crd of ['servicemonitors', 'prometheusrules']) {
    const doc = parseAllDocuments(readFileSync(join(promDir, `example/prometheus-operator-crd/monitoring.coreos.com_${crd}.yaml`), 'utf8'))
      .map((d) => d.toJS())
      .find((d) => d?.kind === 'CustomResourceDefinition');
    for (const f of crdSchemaFiles(doc, true)) writeFileSync(join(schemaDir, f.name), JSON.stringify(f.schema));
  }
}, { timeout: 30 * 60_000 });

after(() => {
  for (const d of [schemaDir, workDir]) if (d) rmSync(d, { recursive: true, force: true });
});

async function template(sets: string[], namespace = 'skybridge'): Promise<{ text: string; docs: Manifest[] }> {
  const args = ['template', 'sb', CHART, '-n', namespace, '--kube-version', kubeVersion, '--include-crds', ...sets.flatMap((s) => ['--set', s])];
  const { stdout } = await run(helm, args, { maxBuffer: 1 << 26 });
  return { text: stdout, docs: parseAllDocuments(stdout).map((d) => d.toJS() as Manifest).filter(Boolean) };
}

interface Summary {
  valid: number;
  invalid: number;
  errors: number;
  skipped: number;
}

/** kubeconform -strict over `text`; the summary, or a failure with every finding. */
async function conform(text: string, label: string): Promise<Summary> {
  const file = join(workDir, `${label}.yaml`);
  writeFileSync(file, text);
  const args = ['-strict', '-summary', '-output', 'json', '-schema-location', join(schemaDir, '{{ .ResourceKind }}{{ .KindSuffix }}.json'), file];
  const result = await run(kubeconform, args, { maxBuffer: 1 << 24 }).catch((err: { stdout?: string; stderr?: string; code?: number }) => {
    assert.fail(`kubeconform found problems in ${label} (exit ${err.code}):\n${err.stdout}\n${err.stderr}`);
  });
  const out = JSON.parse(result.stdout) as { resources: { kind: string; name: string; status: string; msg: string }[]; summary: Summary };
  const bad = out.resources.filter((r) => r.status !== 'statusValid');
  assert.deepEqual(bad, [], `${label}: ${JSON.stringify(bad, null, 2)}`);
  return out.summary;
}

async function lint(sets: string[]): Promise<void> {
  const args = ['lint', CHART, '--strict', '--kube-version', kubeVersion, ...sets.flatMap((s) => ['--set', s])];
  await run(helm, args).catch((err: { stdout?: string; stderr?: string }) => assert.fail(`helm lint ${sets.join(' ')}:\n${err.stdout}\n${err.stderr}`));
}

const find = (docs: Manifest[], kind: string, name?: string): Manifest => {
  const d = docs.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(d, `no ${kind} ${name ?? ''}`);
  return d;
};
const all = (docs: Manifest[], kind: string) => docs.filter((x) => x.kind === kind);
/** The conversion webhook's certificate, which every release has: no credential of the user's. */
const CONVERSION_TLS = 'sb-skybridge-operator-conversion-tls';
const userSecrets = (docs: Manifest[]) => all(docs, 'Secret').filter((x) => x.metadata.name !== CONVERSION_TLS);

interface Container {
  name: string;
  args?: string[];
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  securityContext: Record<string, unknown>;
  livenessProbe?: { httpGet: { path: string } };
  readinessProbe?: { httpGet: { path: string } };
  startupProbe?: { httpGet: { path: string } };
  ports: { name: string; containerPort: number }[];
}
interface PodTemplate {
  spec: { replicas?: number; template: { spec: { securityContext: Record<string, unknown>; serviceAccountName: string; containers: Container[] } } };
}
const container = (d: Manifest): Container => (d as unknown as PodTemplate).spec.template.spec.containers[0];

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
const rules = (d: Manifest) => (d as unknown as { rules: Rule[] }).rules;

const EVERYTHING_ON = [
  'redis.enabled=true',
  'redis.addr=redis.data.svc:6379',
  'redis.existingSecret=redis-auth',
  'redis.tls=true',
  'redis.keyPrefix=sb:',
  'tracing.enabled=true',
  'tracing.endpoint=http://otel-collector.observability:4318',
  'metrics.serviceMonitor.enabled=true',
  'metrics.serviceMonitor.labels.release=kube-prometheus-stack',
  'metrics.grafanaDashboard.enabled=true',
  'metrics.prometheusRule.enabled=true',
  'metrics.prometheusRule.labels.release=kube-prometheus-stack',
  'operator.replicas=2',
  'operator.watchNamespaces={team-a,team-b}',
  'configNamespace=skybridge-config',
  'proxy.autoscaling.enabled=false',
  'proxy.replicas=3',
  'proxy.pdb.maxUnavailable=null',
  'proxy.pdb.minAvailable=2',
  'proxy.workers=auto',
  'image.digest=sha256:' + 'a'.repeat(64),
  'proxy.tls.existingSecret=gateway-tls',
];

describe('helm chart', () => {
  test('helm lint --strict: defaults and every optional feature on', async () => {
    await lint([]);
    await lint(EVERYTHING_ON);
    await lint(['operator.watchNamespaces={*}']);
    await lint(['operator.enabled=false']);
  });

  test('default values: every object (and the CRDs) conforms to its schema', async () => {
    const { text, docs } = await template([]);
    const summary = await conform(text, 'defaults');
    assert.equal(summary.valid, docs.length);
    assert.deepEqual(
      docs.map((d) => d.kind).sort(),
      [...KINDS.map(() => 'CustomResourceDefinition'),
        'ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Deployment', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'NetworkPolicy', 'PodDisruptionBudget', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'Secret', 'Service', 'Service', 'Service', 'Service', 'ServiceAccount', 'ServiceAccount',
        'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].sort(),
    );
  });

  test('every optional feature on conforms too (Redis, ServiceMonitors, watched namespaces, fixed replicas)', async () => {
    const { text, docs } = await template(EVERYTHING_ON);
    const summary = await conform(text, 'everything');
    assert.equal(summary.valid, docs.length);
    assert.equal(all(docs, 'ServiceMonitor').length, 2);
    assert.equal(all(docs, 'PodDisruptionBudget').length, 2);
    assert.equal(all(docs, 'HorizontalPodAutoscaler').length, 0);
    const star = await template(['operator.watchNamespaces={*}']);
    await conform(star.text, 'watch-all');
    const noOperator = await template(['operator.enabled=false']);
    await conform(noOperator.text, 'no-operator');
    assert.equal(all(noOperator.docs, 'Deployment').length, 1);
  });

  test('proxy: started with --kube-namespace, /health liveness, /ready readiness, a draining shutdown, HPA owns the replicas', async () => {
    const { docs } = await template([]);
    const proxy = find(docs, 'Deployment', 'sb-skybridge-proxy');
    const c = container(proxy);
    assert.ok(c.args?.includes('--kube-namespace=skybridge'), JSON.stringify(c.args));
    assert.equal(c.command, undefined, 'the image entrypoint is the proxy');
    for (const probe of [c.livenessProbe, c.startupProbe]) assert.equal(probe?.httpGet.path, '/health');
    assert.equal(c.readinessProbe?.httpGet.path, '/ready');
    // 30 s grace: a 5 s pause before SIGTERM, then 23 s for streams in flight.
    assert.deepEqual((c as unknown as { lifecycle: unknown }).lifecycle, { preStop: { sleep: { seconds: 5 } } });
    assert.ok(c.args?.includes('--shutdown-grace=23'), JSON.stringify(c.args));
    assert.equal((proxy as unknown as PodTemplate).spec.replicas, undefined);
    const hpa = find(docs, 'HorizontalPodAutoscaler') as unknown as { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number } };
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sb-skybridge-proxy' });
    const svc = find(docs, 'Service', 'sb-skybridge-proxy') as unknown as { spec: { selector: Record<string, string>; ports: { targetPort: string }[] } };
    assert.equal(svc.spec.ports[0].targetPort, 'http');
    assert.equal(svc.spec.selector['app.kubernetes.io/component'], 'proxy');

    const custom = await template(['configNamespace=gateway-config', 'proxy.autoscaling.enabled=false', 'proxy.replicas=4']);
    const p = find(custom.docs, 'Deployment', 'sb-skybridge-proxy');
    assert.ok(container(p).args?.includes('--kube-namespace=gateway-config'));
    assert.equal((p as unknown as PodTemplate).spec.replicas, 4);
  });

  test('proxy.tls.existingSecret: the Secret mounted, --tls-cert/--tls-key passed, probes over HTTPS', async () => {
    const plain = container(find((await template([])).docs, 'Deployment', 'sb-skybridge-proxy'));
    assert.ok(!plain.args?.some((a) => a.startsWith('--tls-')));
    assert.equal((plain.livenessProbe?.httpGet as { scheme?: string }).scheme, undefined);
    const { docs } = await template(['proxy.tls.existingSecret=gateway-tls']);
    const proxy = find(docs, 'Deployment', 'sb-skybridge-proxy');
    const c = container(proxy);
    assert.ok(c.args?.includes('--tls-cert=/etc/skybridge/tls/tls.crt') && c.args.includes('--tls-key=/etc/skybridge/tls/tls.key'), JSON.stringify(c.args));
    for (const probe of [c.livenessProbe, c.startupProbe, c.readinessProbe]) assert.equal((probe?.httpGet as { scheme?: string }).scheme, 'HTTPS');
    const volumes = (proxy as unknown as { spec: { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } } } }).spec.template.spec.volumes;
    assert.equal(volumes.find((v) => v.name === 'tls')?.secret?.secretName, 'gateway-tls');
  });

  test('operator: the same image with its alternate command, writing to the configuration namespace', async () => {
    const { docs } = await template(EVERYTHING_ON);
    const c = container(find(docs, 'Deployment', 'sb-skybridge-operator'));
    // The proxy's young-generation limit too (the image's entrypoint has it; a command replaces it).
    assert.deepEqual(c.command, ['node', '--max-semi-space-size=8', '--max-old-space-size=160', 'dist/operator/src/main.js']);
    // The heap cap stays well under the memory limit it must fit in.
    const limitMiB = Number(/^(\d+)Mi$/.exec(String((c as unknown as { resources: { limits: { memory: string } } }).resources.limits.memory))?.[1]);
    assert.ok(160 <= limitMiB * 0.6, `old space 160 MiB in a ${limitMiB} MiB limit`);
    // A killed leader is replaced within 10 s: lease plus one retry period.
    const lease = Number(c.args?.find((a) => a.startsWith('--lease-duration='))?.split('=')[1]);
    assert.ok(lease > 0 && lease + lease / 7.5 <= 10, `lease ${lease} s`);
    assert.ok(c.args?.includes('--namespace=skybridge-config'));
    assert.ok(c.args?.includes('--watch-namespaces=skybridge-config,team-a,team-b'));
    assert.ok(c.args?.includes('--lease-name=sb-skybridge-operator'));
    assert.equal(c.livenessProbe?.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet.path, '/readyz');
    const star = await template(['operator.watchNamespaces={*}']);
    assert.ok(container(find(star.docs, 'Deployment', 'sb-skybridge-operator')).args?.includes('--watch-namespaces=*'));
  });

  test('security: non-root, read-only root filesystem, no capabilities, for every container', async () => {
    for (const sets of [[], EVERYTHING_ON]) {
      const { docs } = await template(sets);
      for (const d of all(docs, 'Deployment')) {
        const pod = (d as unknown as PodTemplate).spec.template.spec;
        assert.equal(pod.securityContext.runAsNonRoot, true, d.metadata.name);
        for (const c of pod.containers) {
          assert.equal(c.securityContext.readOnlyRootFilesystem, true, `${d.metadata.name}/${c.name}`);
          assert.equal(c.securityContext.allowPrivilegeEscalation, false);
          assert.deepEqual((c.securityContext.capabilities as { drop: string[] }).drop, ['ALL']);
        }
      }
    }
  });

  test('RBAC: the proxies read their ConfigMaps and only the skybridge-secrets shards', async () => {
    const { docs } = await template(EVERYTHING_ON);
    const role = find(docs, 'Role', 'sb-skybridge-proxy');
    assert.equal(role.metadata.namespace, 'skybridge-config');
    assert.deepEqual(rules(role), [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['skybridge-secrets', 'skybridge-secrets-1', 'skybridge-secrets-2', 'skybridge-secrets-3'], verbs: ['get', 'list', 'watch'] },
      // Each proxy's served-configuration report, a Lease named after its pod (no list or watch).
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update', 'delete'] },
    ]);
    const binding = find(docs, 'RoleBinding', 'sb-skybridge-proxy') as unknown as { subjects: { name: string; namespace: string }[] };
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'sb-skybridge-proxy', namespace: 'skybridge' }]);
    // The only cluster-wide grant is the operator's on its own CRDs (the conversion webhook).
    assert.deepEqual(all(docs, 'ClusterRole').map((r) => r.metadata.name), ['sb-skybridge-operator-crds']);
  });

  test('RBAC: the operator writes only in the configuration namespace; elsewhere it reads', async () => {
    const { docs } = await template(EVERYTHING_ON);
    const roles = all(docs, 'Role').filter((r) => r.metadata.name === 'sb-skybridge-operator');
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ['skybridge-config', 'team-a', 'team-b']);
    const writes = (r: Manifest) => rules(r).filter((x) => x.verbs.some((v) => ['create', 'patch', 'update', 'delete'].includes(v)));
    const main = roles.find((r) => r.metadata.namespace === 'skybridge-config') as Manifest;
    const secretWrites = writes(main).filter((x) => x.resources.includes('secrets'));
    assert.deepEqual(secretWrites.map((x) => [x.verbs, x.resourceNames]), [[['get', 'list', 'watch', 'create'], undefined], [['patch', 'update', 'delete'], ['skybridge-secrets', 'skybridge-secrets-1', 'skybridge-secrets-2', 'skybridge-secrets-3']]]);
    assert.ok(rules(main).some((x) => x.resources.includes('leases') && x.resourceNames?.[0] === 'sb-skybridge-operator' && x.verbs.includes('update')));
    // Exactly the kinds the operator reads, each with its status: no wildcard, nothing more.
    const plurals = KINDS.map((k) => k.plural);
    assert.ok(rules(main).some((x) => x.resources.join() === plurals.join() && x.verbs.join() === 'get,list,watch'), 'reads every kind');
    assert.ok(rules(main).some((x) => x.resources.join() === plurals.map((p) => `${p}/status`).join() && x.verbs.join() === 'get,patch,update'), 'writes every kind\'s status');
    for (const r of roles.filter((x) => x !== main)) {
      for (const w of writes(r)) {
        assert.ok(w.resources.every((res) => res.endsWith('/status') || res === 'events'), `${r.metadata.namespace}: ${JSON.stringify(w)}`);
      }
    }
    const star = await template(['operator.watchNamespaces={*}']);
    const cr = find(star.docs, 'ClusterRole', 'sb-skybridge-operator') as Manifest;
    assert.ok(rules(cr).every((x) => x.resources.every((res) => res.endsWith('/status') || res === 'events') || x.verbs.every((v) => ['get', 'list', 'watch'].includes(v))));
  });

  test('conversion webhook: a CA and a serving certificate for its Service, the operator pointed at it, RBAC on the CRDs by name', async () => {
    const { docs, text } = await template([]);
    await conform(text, 'conversion');
    const secret = find(docs, 'Secret', CONVERSION_TLS) as unknown as { type: string; data: Record<string, string> };
    assert.equal(secret.type, 'kubernetes.io/tls');
    const pem = (k: string) => Buffer.from(secret.data[k], 'base64').toString();
    const ca = new X509Certificate(pem('ca.crt'));
    const cert = new X509Certificate(pem('tls.crt'));
    assert.ok(cert.verify(ca.publicKey), 'tls.crt is signed by ca.crt');
    assert.ok(cert.checkHost('sb-skybridge-operator-conversion.skybridge.svc'), cert.subjectAltName);
    assert.ok(createPrivateKey(pem('tls.key')).asymmetricKeyType);
    const svc = find(docs, 'Service', 'sb-skybridge-operator-conversion') as unknown as { spec: { publishNotReadyAddresses: boolean; ports: { port: number; targetPort: string }[]; selector: Record<string, string> } };
    assert.equal(svc.spec.publishNotReadyAddresses, true);
    assert.deepEqual(svc.spec.ports.map((p) => [p.port, p.targetPort]), [[443, 'conversion']]);
    assert.equal(svc.spec.selector['app.kubernetes.io/component'], 'operator');
    const op = find(docs, 'Deployment', 'sb-skybridge-operator');
    const c = container(op);
    for (const arg of ['--conversion-cert-dir=/etc/skybridge/conversion', '--conversion-port=9443', '--conversion-service=skybridge/sb-skybridge-operator-conversion:443']) assert.ok(c.args?.includes(arg), arg);
    const volumes = (op as unknown as { spec: { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } } } }).spec.template.spec.volumes;
    assert.equal(volumes.find((v) => v.name === 'conversion-tls')?.secret?.secretName, CONVERSION_TLS);
    const crdRole = find(docs, 'ClusterRole', 'sb-skybridge-operator-crds');
    assert.deepEqual(rules(crdRole), [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: crdNames(), verbs: ['get', 'patch'] }]);
    // Your own certificate: no Secret generated, the operator mounts yours.
    const own = await template(['operator.conversionWebhook.existingSecret=my-webhook-cert']);
    assert.ok(!own.docs.some((d) => d.kind === 'Secret' && d.metadata.name === CONVERSION_TLS));
    const ownVolumes = (find(own.docs, 'Deployment', 'sb-skybridge-operator') as unknown as { spec: { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } } } }).spec.template.spec.volumes;
    assert.equal(ownVolumes.find((v) => v.name === 'conversion-tls')?.secret?.secretName, 'my-webhook-cert');
  });

  test('RBAC: operator.secrets.names grants exactly those Secrets (watched by name), nowhere every Secret', async () => {
    const { docs } = await template(['operator.secrets.names={llm-credentials,team-b-key}', 'operator.watchNamespaces={team-a}']);
    const c = container(find(docs, 'Deployment', 'sb-skybridge-operator'));
    assert.ok(c.args?.includes('--secret-names=llm-credentials,team-b-key'));
    const roles = all(docs, 'Role').filter((r) => r.metadata.name === 'sb-skybridge-operator');
    assert.equal(roles.length, 2);
    for (const r of roles) {
      for (const rule of rules(r).filter((x) => x.resources.includes('secrets'))) {
        // Only create (which RBAC cannot narrow by name) goes without resourceNames.
        if (!rule.resourceNames) assert.deepEqual(rule.verbs, ['create'], `${r.metadata.namespace}: ${JSON.stringify(rule)}`);
      }
    }
    const main = roles.find((r) => r.metadata.namespace === 'skybridge') as Manifest;
    assert.ok(rules(main).some((x) => x.resourceNames?.join() === 'skybridge-secrets,skybridge-secrets-1,skybridge-secrets-2,skybridge-secrets-3,llm-credentials,team-b-key' && x.verbs.join() === 'get,list,watch'));
    const byLabel = await template(['operator.secrets.labelSelector=skybridge.dev/credentials=true']);
    assert.ok(container(find(byLabel.docs, 'Deployment', 'sb-skybridge-operator')).args?.includes('--secret-selector=skybridge.dev/credentials=true'));
  });

  /** Every proxy names and owns its served-configuration Lease after its pod. */
  const SERVED_REPORT_ENV = { POD_NAME: { fieldRef: { fieldPath: 'metadata.name' } }, POD_UID: { fieldRef: { fieldPath: 'metadata.uid' } }, SKYBRIDGE_SERVED_LEASE_SECONDS: '15' };
  /** The secure default: virtual keys required on inference. */
  const SECURE_ENV = { SKYBRIDGE_CLIENT: '{"enforce_auth_on_inference":true}' };

  test('Redis: address and options as SKYBRIDGE_REDIS_* variables, the password from a Secret', async () => {
    const { docs } = await template(EVERYTHING_ON.filter((s) => s.startsWith('redis.')));
    const env = Object.fromEntries((container(find(docs, 'Deployment', 'sb-skybridge-proxy')).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.deepEqual(env, {
      ...SERVED_REPORT_ENV,
      ...SECURE_ENV,
      SKYBRIDGE_REDIS_ADDR: 'redis.data.svc:6379',
      SKYBRIDGE_REDIS_DB: '0',
      SKYBRIDGE_REDIS_TLS: 'true',
      SKYBRIDGE_REDIS_KEY_PREFIX: 'sb:',
      SKYBRIDGE_REDIS_PASSWORD: { secretKeyRef: { name: 'redis-auth', key: 'password' } },
    });
    assert.equal(userSecrets(docs).length, 0, 'an existing Secret is used, not a new one');
    const own = await template(['redis.enabled=true', 'redis.addr=r:6379', 'redis.password=s3cret']);
    const secret = find(own.docs, 'Secret', 'sb-skybridge-redis') as unknown as { data: { password: string } };
    assert.equal(Buffer.from(secret.data.password, 'base64').toString(), 's3cret');
    const ownEnv = container(find(own.docs, 'Deployment', 'sb-skybridge-proxy')).env ?? [];
    assert.deepEqual(ownEnv.find((e) => e.name === 'SKYBRIDGE_REDIS_PASSWORD')?.valueFrom, { secretKeyRef: { name: 'sb-skybridge-redis', key: 'password' } });
  });

  test('request logs: the PostgreSQL store as SKYBRIDGE_LOGS_STORE_* variables, the password from a Secret', async () => {
    const { docs } = await template(['logsStore.enabled=true', 'logsStore.host=pg.data.svc', 'logsStore.user=skybridge', 'logsStore.dbName=logs', 'logsStore.existingSecret=pg-auth']);
    const env = Object.fromEntries((container(find(docs, 'Deployment', 'sb-skybridge-proxy')).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.deepEqual(env, {
      ...SERVED_REPORT_ENV,
      ...SECURE_ENV,
      SKYBRIDGE_LOGS_STORE_TYPE: 'postgres',
      SKYBRIDGE_LOGS_STORE_HOST: 'pg.data.svc',
      SKYBRIDGE_LOGS_STORE_PORT: '5432',
      SKYBRIDGE_LOGS_STORE_USER: 'skybridge',
      SKYBRIDGE_LOGS_STORE_DB_NAME: 'logs',
      SKYBRIDGE_LOGS_STORE_SSL_MODE: 'require',
      SKYBRIDGE_LOGS_STORE_PASSWORD: { secretKeyRef: { name: 'pg-auth', key: 'password' } },
    });
  });

  test('response cache store: vector_store as SKYBRIDGE_VECTOR_STORE JSON, the password from a Secret by env reference', async () => {
    const { docs } = await template(['vectorStore.enabled=true', 'vectorStore.config.addr=redis-stack.data.svc:6379', 'vectorStore.existingSecret=rs-auth']);
    const env = container(find(docs, 'Deployment', 'sb-skybridge-proxy')).env ?? [];
    const vs = JSON.parse(env.find((e) => e.name === 'SKYBRIDGE_VECTOR_STORE')?.value ?? '{}');
    assert.deepEqual(vs, { enabled: true, type: 'redis', config: { addr: 'redis-stack.data.svc:6379', password: 'env.SKYBRIDGE_VECTOR_STORE_PASSWORD' } });
    assert.deepEqual(env.find((e) => e.name === 'SKYBRIDGE_VECTOR_STORE_PASSWORD')?.valueFrom, { secretKeyRef: { name: 'rs-auth', key: 'password' } });
  });

  test('tracing: the OTel standard variables, the collector headers from a Secret; a bad endpoint, protocol or sampler is refused by name', async () => {
    const { docs } = await template(['tracing.enabled=true', 'tracing.endpoint=http://otel-collector.observability:4317', 'tracing.protocol=grpc', 'tracing.sampler=parentbased_traceidratio', 'tracing.samplerArg=0.1', 'tracing.captureContent=true', 'tracing.headersSecret=otel-auth']);
    const env = Object.fromEntries((container(find(docs, 'Deployment', 'sb-skybridge-proxy')).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.deepEqual(
      Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('OTEL_'))),
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
        OTEL_SERVICE_NAME: 'skybridge',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        OTEL_EXPORTER_OTLP_HEADERS: { secretKeyRef: { name: 'otel-auth', key: 'headers' } },
      },
    );
    const off = await template([]);
    assert.ok(!(container(find(off.docs, 'Deployment', 'sb-skybridge-proxy')).env ?? []).some((e) => e.name.startsWith('OTEL_')), 'off by default');
    for (const [sets, message] of [
      [['tracing.enabled=true'], /endpoint/],
      [['tracing.endpoint=collector:4317'], /endpoint/],
      [['tracing.protocol=http/json'], /protocol/],
      [['tracing.sampler=sometimes'], /sampler/],
    ] as [string[], RegExp][]) {
      const err = await template(sets).then(() => undefined, (e: { stderr?: string }) => e.stderr ?? String(e));
      assert.ok(err, `helm template accepted ${sets.join(' ')}`);
      assert.match(err, message);
    }
  });

  test('ServiceMonitors scrape /metrics on ports the Services have', async () => {
    const { docs } = await template(EVERYTHING_ON);
    // The proxies' /metrics is on the admin port, behind the admin Service (the inference Service has no such port).
    for (const [component, service] of [['proxy', 'proxy-admin'], ['operator', 'operator']]) {
      const sm = find(docs, 'ServiceMonitor', `sb-skybridge-${component}`) as unknown as { metadata: { labels: Record<string, string> }; spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] } };
      const svc = find(docs, 'Service', `sb-skybridge-${service}`) as unknown as { metadata: { labels: Record<string, string> }; spec: { ports: { name: string }[] } };
      for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata.labels[k], v, `${component}: selector ${k}`);
      assert.ok(svc.spec.ports.some((p) => p.name === sm.spec.endpoints[0].port));
      assert.equal(sm.spec.endpoints[0].path, '/metrics');
      assert.equal(sm.metadata.labels.release, 'kube-prometheus-stack');
    }
  });

  test('the Grafana dashboard ships as a sidecar ConfigMap, the alert rules as a PrometheusRule reading only exported metrics', async () => {
    const { docs } = await template(EVERYTHING_ON);
    const cm = find(docs, 'ConfigMap', 'sb-skybridge-grafana-dashboard') as unknown as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
    assert.equal(cm.metadata.labels.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(cm.data['skybridge.json']), JSON.parse(readFileSync(join(CHART, 'dashboards/skybridge.json'), 'utf8')));
    interface AlertRule {
      alert: string;
      expr: string;
      for: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    }
    const rulesOf = (d: Manifest[]): AlertRule[] => (find(d, 'PrometheusRule') as unknown as { spec: { groups: { rules: AlertRule[] }[] } }).spec.groups.flatMap((g) => g.rules);
    const pr = find(docs, 'PrometheusRule', 'sb-skybridge');
    assert.equal(pr.metadata.namespace, 'skybridge');
    assert.equal((pr.metadata as { labels?: Record<string, string> }).labels?.release, 'kube-prometheus-stack');
    const alerts = rulesOf(docs);
    assert.deepEqual(alerts.map((r) => r.alert), ['SkybridgeHighErrorRate', 'SkybridgeUpstreamSlow', 'SkybridgeBudgetNearlyExhausted', 'SkybridgeConfigReloadFailing', 'SkybridgeWebhookDeliveriesExhausted']);
    // Every expression reads series the gateway exports, with labels they carry, and names no job or
    // namespace a plain scrape would lack.
    const known = registered();
    for (const r of alerts) {
      assert.deepEqual(problems(r.expr, known), [], `${r.alert}: ${r.expr}`);
      assert.doesNotMatch(r.expr, /(job|namespace|container)\s*=/, r.alert);
      assert.equal(r.labels.severity, 'warning');
      assert.ok(r.annotations.summary && r.annotations.description, r.alert);
    }
    // Thresholds, durations and extra labels come from the values; an alert can be switched off.
    const tuned = rulesOf((await template([...EVERYTHING_ON, 'metrics.prometheusRule.errorRate.threshold=0.2', 'metrics.prometheusRule.errorRate.for=3m', 'metrics.prometheusRule.budgetExhaustion.remainingRatio=0.25', 'metrics.prometheusRule.upstreamLatency.enabled=false', 'metrics.prometheusRule.alertLabels.team=platform'])).docs);
    assert.ok(!tuned.some((r) => r.alert === 'SkybridgeUpstreamSlow'));
    const errorRate = tuned.find((r) => r.alert === 'SkybridgeHighErrorRate')!;
    assert.match(errorRate.expr, />\s*0\.2\s*$/);
    assert.equal(errorRate.for, '3m');
    assert.equal(errorRate.labels.team, 'platform');
    assert.match(tuned.find((r) => r.alert === 'SkybridgeBudgetNearlyExhausted')!.expr, /<\s*0\.25\s*$/);
    // Off by default: neither object without the values.
    const defaults = (await template([])).docs;
    assert.equal(all(defaults, 'PrometheusRule').length, 0);
    assert.equal(all(defaults, 'ConfigMap').length, 0);
  });

  test('values.schema.json rejects bad values with a message naming them', async () => {
    const bad: [string[], RegExp][] = [
      [['proxy.logLevel=loud'], /logLevel/],
      [['redis.enabled=true'], /addr/],
      [['logsStore.enabled=true', 'logsStore.host=db', 'logsStore.user=u'], /dbName/],
      [['logsStore.sslMode=sometimes'], /sslMode/],
      [['vectorStore.config.password=inline'], /vectorStore/],
      [['image.digest=latest'], /digest/],
      [['operator.watchNamespaces={Team_A}'], /watchNamespaces/],
      [['proxy.unknownSetting=1'], /unknownSetting/],
      [['metrics.prometheusRule.errorRate.threshold=2'], /errorRate\/threshold/],
      [['metrics.prometheusRule.budgetExhaustion.remainingRatio=none'], /remainingRatio/],
      [['metrics.prometheusRule.webhookExhausted.for=soon'], /webhookExhausted\/for/],
    ];
    for (const [sets, message] of bad) {
      const err = await template(sets).then(() => undefined, (e: { stderr?: string }) => e.stderr ?? String(e));
      assert.ok(err, `helm template accepted ${sets.join(' ')}`);
      assert.match(err, message);
    }
  });

  test('the examples under examples/kubernetes (both versions) conform to the CRDs', async () => {
    const dir = join(ROOT, 'examples/kubernetes');
    const text = [dir, join(dir, 'v1beta1')].flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.yaml')).map((f) => readFileSync(join(d, f), 'utf8'))).join('\n---\n');
    const count = parseAllDocuments(text).filter((d) => d.toJS()).length;
    const summary = await conform(text, 'examples');
    assert.equal(summary.valid, count);
    // And a broken one is caught: a secret value inline where a reference belongs, an unknown field.
    const bad = 'apiVersion: gateway.skybridge.dev/v1alpha1\nkind: VirtualKey\nmetadata: {name: x}\nspec:\n  value: sk-inline\n  valueFrom: {secretKeyRef: {name: s, key: k}}\n';
    const file = join(workDir, 'bad.yaml');
    writeFileSync(file, bad);
    const failed = await run(kubeconform, ['-strict', '-schema-location', join(schemaDir, '{{ .ResourceKind }}{{ .KindSuffix }}.json'), file]).then(() => '', (e: { stdout: string }) => e.stdout);
    assert.match(failed, /value/);
    assert.ok(readdirSync(schemaDir).includes(schemaFileName('VirtualKey', 'gateway.skybridge.dev/v1alpha1')));
  });
});

describe('helm chart: the secure install', () => {
  interface Port {
    name: string;
    port?: number;
    targetPort?: string;
  }
  interface Peer {
    podSelector?: { matchLabels: Record<string, string> };
    namespaceSelector?: { matchLabels: Record<string, string> };
  }
  interface NetworkPolicy {
    spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: { ports: { port: string }[]; from?: Peer[] }[] };
  }
  const policy = (docs: Manifest[], name: string) => find(docs, 'NetworkPolicy', name) as unknown as NetworkPolicy;
  const servicePorts = (docs: Manifest[], name: string) => (find(docs, 'Service', name) as unknown as { spec: { type: string; ports: Port[] } }).spec;
  const podSpec = (d: Manifest) => (d as unknown as { spec: { template: { metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> } } }).spec.template;
  const envOf = (docs: Manifest[]) => Object.fromEntries((container(find(docs, 'Deployment', 'sb-skybridge-proxy')).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

  test('defaults: virtual keys required, /api and /metrics on an admin port the inference Service does not expose', async () => {
    const { docs } = await template([]);
    const c = container(find(docs, 'Deployment', 'sb-skybridge-proxy'));
    assert.ok(c.args?.includes('--admin-port=9091'), JSON.stringify(c.args));
    assert.deepEqual(c.ports.map((p) => [p.name, p.containerPort]), [['http', 8080], ['admin', 9091]]);
    assert.equal(envOf(docs).SKYBRIDGE_CLIENT, '{"enforce_auth_on_inference":true}');
    const inference = servicePorts(docs, 'sb-skybridge-proxy');
    assert.deepEqual(inference.ports.map((p) => p.targetPort), ['http'], 'the inference Service exposes the inference port only');
    const admin = servicePorts(docs, 'sb-skybridge-proxy-admin');
    assert.equal(admin.type, 'ClusterIP');
    assert.deepEqual(admin.ports.map((p) => [p.name, p.port, p.targetPort]), [['admin', 9091, 'admin']]);
    // Probes stay on the inference port: /health and /ready are served there.
    assert.equal((c.readinessProbe as unknown as { httpGet: { port: string } }).httpGet.port, 'http');
  });

  test('defaults: a NetworkPolicy admits inference from anywhere, the admin and metrics ports only from monitoring and the release', async () => {
    const { docs } = await template([]);
    const proxy = policy(docs, 'sb-skybridge-proxy');
    assert.equal(proxy.spec.podSelector.matchLabels['app.kubernetes.io/component'], 'proxy');
    assert.deepEqual(proxy.spec.policyTypes, ['Ingress']);
    const [inference, admin] = proxy.spec.ingress;
    assert.deepEqual(inference.ports.map((p) => p.port), ['http']);
    assert.equal(inference.from, undefined, 'no from: any source');
    assert.deepEqual(admin.ports.map((p) => p.port), ['admin']);
    assert.deepEqual(admin.from, [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'sb' } } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    assert.equal(proxy.spec.ingress.length, 2);
    const operator = policy(docs, 'sb-skybridge-operator');
    assert.deepEqual(operator.spec.ingress.map((r) => r.ports.map((p) => p.port)), [['metrics'], ['conversion']]);
    assert.deepEqual(operator.spec.ingress[0].from, admin.from);
    assert.equal(operator.spec.ingress[1].from, undefined, 'the conversion webhook: from the API server, whatever its address');

    const narrowed = await template(['networkPolicy.inferenceFrom[0].namespaceSelector.matchLabels.team=checkout', 'networkPolicy.adminFrom[0].podSelector.matchLabels.app=prometheus']);
    const p = policy(narrowed.docs, 'sb-skybridge-proxy');
    assert.deepEqual(p.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { team: 'checkout' } } }]);
    assert.deepEqual(p.spec.ingress[1].from?.[1], { podSelector: { matchLabels: { app: 'prometheus' } } });
    await conform(narrowed.text, 'narrowed-policy');
    assert.equal(all((await template(['networkPolicy.enabled=false'])).docs, 'NetworkPolicy').length, 0);
  });

  test('proxy.adminPort=null serves everything on one port: no admin Service, the ServiceMonitor scrapes the inference port', async () => {
    const { docs, text } = await template(['proxy.adminPort=null', 'metrics.serviceMonitor.enabled=true']);
    await conform(text, 'one-port');
    const c = container(find(docs, 'Deployment', 'sb-skybridge-proxy'));
    assert.ok(!c.args?.some((a) => a.startsWith('--admin-port')));
    assert.ok(!docs.some((d) => d.kind === 'Service' && d.metadata.name === 'sb-skybridge-proxy-admin'));
    const sm = find(docs, 'ServiceMonitor', 'sb-skybridge-proxy') as unknown as { spec: { endpoints: { port: string }[]; selector: { matchLabels: Record<string, string> } } };
    assert.equal(sm.spec.endpoints[0].port, 'http');
    assert.equal(sm.spec.selector.matchLabels['skybridge.dev/port'], undefined);
    assert.deepEqual(policy(docs, 'sb-skybridge-proxy').spec.ingress.map((r) => r.ports[0].port), ['http']);
  });

  test('management auth and settings: credentials by secretKeyRef (never in the chart’s objects), client and MCP settings as JSON', async () => {
    const sets = [
      'gateway.managementAuth.existingSecret=skybridge-admin',
      'gateway.managementAuth.apiKeysKey=api-keys',
      'gateway.client.allowed_origins={https://console.example.com}',
      'gateway.client.max_request_body_size_mb=8',
      'gateway.mcp.tool_manager_config.tool_execution_timeout=20',
      'gateway.skills.serving=virtual_key',
    ];
    const { docs, text } = await template(sets);
    await conform(text, 'management-auth');
    const env = envOf(docs);
    assert.deepEqual(JSON.parse(env.SKYBRIDGE_CLIENT as string), { enforce_auth_on_inference: true, allowed_origins: ['https://console.example.com'], max_request_body_size_mb: 8 });
    assert.deepEqual(JSON.parse(env.SKYBRIDGE_MCP as string), { tool_manager_config: { tool_execution_timeout: 20 } });
    assert.deepEqual(JSON.parse(env.SKYBRIDGE_SKILLS as string), { serving: 'virtual_key' });
    assert.deepEqual(env.SKYBRIDGE_ADMIN_USERNAME, { secretKeyRef: { name: 'skybridge-admin', key: 'username' } });
    assert.deepEqual(env.SKYBRIDGE_ADMIN_PASSWORD, { secretKeyRef: { name: 'skybridge-admin', key: 'password' } });
    assert.deepEqual(env.SKYBRIDGE_ADMIN_API_KEYS, { secretKeyRef: { name: 'skybridge-admin', key: 'api-keys' } });
    assert.equal(userSecrets(docs).length + all(docs, 'ConfigMap').length, 0);
    const keysOnly = envOf((await template(['gateway.managementAuth.existingSecret=s', 'gateway.managementAuth.usernameKey=', 'gateway.managementAuth.apiKeysKey=keys'])).docs);
    assert.equal(keysOnly.SKYBRIDGE_ADMIN_USERNAME, undefined);
    assert.deepEqual(keysOnly.SKYBRIDGE_ADMIN_API_KEYS, { secretKeyRef: { name: 's', key: 'keys' } });
    // Turning the requirement off is explicit.
    assert.equal(envOf((await template(['gateway.client.enforce_auth_on_inference=false'])).docs).SKYBRIDGE_CLIENT, '{"enforce_auth_on_inference":false}');
  });

  test('audit log settings: retention and disabled as SKYBRIDGE_AUDIT_LOGS, the HMAC key by secretKeyRef only', async () => {
    const { docs, text } = await template(['gateway.auditLogs.retentionDays=90', 'gateway.auditLogs.hmacKeySecret=skybridge-audit']);
    await conform(text, 'audit-logs');
    const env = envOf(docs);
    assert.deepEqual(JSON.parse(env.SKYBRIDGE_AUDIT_LOGS as string), { disabled: false, retention_days: 90 });
    assert.deepEqual(env.SKYBRIDGE_AUDIT_HMAC_KEY, { secretKeyRef: { name: 'skybridge-audit', key: 'hmac-key' } });
    assert.equal(userSecrets(docs).length + all(docs, 'ConfigMap').length, 0, 'no object of the chart holds the key');
    // Off, or retention 0 (kept forever), are said; the defaults set nothing.
    assert.equal(envOf((await template(['gateway.auditLogs.disabled=true'])).docs).SKYBRIDGE_AUDIT_LOGS, '{"disabled":true}');
    assert.equal(envOf((await template(['gateway.auditLogs.retentionDays=0'])).docs).SKYBRIDGE_AUDIT_LOGS, '{"disabled":false,"retention_days":0}');
    const defaults = envOf((await template([])).docs);
    assert.equal(defaults.SKYBRIDGE_AUDIT_LOGS, undefined);
    assert.equal(defaults.SKYBRIDGE_AUDIT_HMAC_KEY, undefined);
    // A key in the values is refused by the schema: there is no such value.
    await assert.rejects(template(['gateway.auditLogs.hmacKey=inline-0123456789abcdef0123456789']), /hmacKey/);
    await assert.rejects(template(['gateway.auditLogs.retentionDays=-1']), /retentionDays/);
  });

  test('the checksum annotation rolls the proxies when the chart’s Secret changes, and only then', async () => {
    const checksum = async (sets: string[]) => podSpec(find((await template(sets)).docs, 'Deployment', 'sb-skybridge-proxy')).metadata.annotations?.['checksum/secret'];
    const base = ['redis.enabled=true', 'redis.addr=r:6379'];
    const one = await checksum([...base, 'redis.password=first-password']);
    assert.match(one ?? '', /^[0-9a-f]{64}$/);
    assert.equal(await checksum([...base, 'redis.password=first-password']), one);
    assert.notEqual(await checksum([...base, 'redis.password=second-password']), one);
    assert.equal(await checksum([...base, 'redis.password=first-password', 'proxy.replicas=5']), one, 'unrelated values leave it alone');
  });

  test('proxies spread over nodes and zones by default (ScheduleAnyway); extra volumes for CA bundles on both workloads', async () => {
    const { docs } = await template([]);
    const spread = podSpec(find(docs, 'Deployment', 'sb-skybridge-proxy')).spec.topologySpreadConstraints as { topologyKey: string; whenUnsatisfiable: string; maxSkew: number; labelSelector: { matchLabels: Record<string, string> } }[];
    assert.deepEqual(spread.map((t) => [t.topologyKey, t.whenUnsatisfiable, t.maxSkew]), [['kubernetes.io/hostname', 'ScheduleAnyway', 1], ['topology.kubernetes.io/zone', 'ScheduleAnyway', 1]]);
    assert.equal(spread[0].labelSelector.matchLabels['app.kubernetes.io/component'], 'proxy');
    const own = await template(['proxy.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname', 'proxy.topologySpreadConstraints[0].maxSkew=2', 'proxy.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule', 'proxy.topologySpreadConstraints[0].labelSelector.matchLabels.app=x']);
    assert.equal((podSpec(find(own.docs, 'Deployment', 'sb-skybridge-proxy')).spec.topologySpreadConstraints as unknown[]).length, 1);
    assert.equal(podSpec(find((await template(['proxy.topologySpread.enabled=false'])).docs, 'Deployment', 'sb-skybridge-proxy')).spec.topologySpreadConstraints, undefined);

    const sets: string[] = [];
    for (const w of ['proxy', 'operator']) {
      sets.push(`${w}.extraVolumes[0].name=ca`, `${w}.extraVolumes[0].configMap.name=corp-ca`, `${w}.extraVolumeMounts[0].name=ca`, `${w}.extraVolumeMounts[0].mountPath=/etc/corp-ca`, `${w}.extraVolumeMounts[0].readOnly=true`);
    }
    const withCa = await template(sets);
    await conform(withCa.text, 'extra-volumes');
    for (const name of ['sb-skybridge-proxy', 'sb-skybridge-operator']) {
      const pod = podSpec(find(withCa.docs, 'Deployment', name)).spec as { volumes: { name: string }[]; containers: { volumeMounts: { name: string; mountPath: string }[] }[] };
      // The operator also mounts its conversion webhook certificate.
      const own = name === 'sb-skybridge-operator' ? { volumes: ['conversion-tls'], mounts: ['/etc/skybridge/conversion'] } : { volumes: [], mounts: [] };
      assert.deepEqual(pod.volumes.map((v) => v.name), ['tmp', ...own.volumes, 'ca'], name);
      assert.deepEqual(pod.containers[0].volumeMounts.map((m) => m.mountPath), ['/tmp', ...own.mounts, '/etc/corp-ca'], name);
    }
  });

  test('values.schema.json: gateway.client is the proxy’s own client schema, and bad new values are refused by name', async () => {
    const { ClientConfigSchema } = await import('../../proxy/src/schema/gateway.ts');
    const { McpSettingsSchema } = await import('../../proxy/src/config/env-settings.ts');
    const { SkillsConfigSchema } = await import('../../proxy/src/schema/gateway.ts');
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as { properties: { gateway: { properties: { client: Record<string, unknown>; mcp: Record<string, unknown>; skills: Record<string, unknown> } } } };
    const { description: _c, ...client } = schema.properties.gateway.properties.client;
    const { description: _m, ...mcp } = schema.properties.gateway.properties.mcp;
    assert.deepEqual(client, JSON.parse(JSON.stringify(ClientConfigSchema)), 'regenerate values.schema.json gateway.client from ClientConfigSchema');
    assert.deepEqual(mcp, JSON.parse(JSON.stringify(McpSettingsSchema)));
    const { description: _s, ...skills } = schema.properties.gateway.properties.skills;
    assert.deepEqual(skills, JSON.parse(JSON.stringify(SkillsConfigSchema)), 'regenerate values.schema.json gateway.skills from SkillsConfigSchema');
    const bad: [string[], RegExp][] = [
      [['gateway.client.enforce_auth_on_inference=maybe'], /enforce_auth_on_inference/],
      [['gateway.client.no_such_setting=1'], /no_such_setting/],
      [['gateway.managementAuth.password=inline'], /password/],
      [['networkPolicy.enabled=yes'], /enabled/],
      [['proxy.adminPort=70000'], /adminPort/],
      [['proxy.topologySpread.whenUnsatisfiable=Sometimes'], /whenUnsatisfiable/],
      [['gateway.mcp.tool_manager_config.max_agent_depth=0'], /max_agent_depth/],
      [['gateway.skills.serving=everyone'], /serving/],
    ];
    for (const [sets, message] of bad) {
      const err = await template(sets).then(() => undefined, (e: { stderr?: string }) => e.stderr ?? String(e));
      assert.ok(err, `helm template accepted ${sets.join(' ')}`);
      assert.match(err, message);
    }
  });
});
