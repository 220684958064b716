// Our CRDs on a real kube-apiserver: the examples are admitted, and a CR that breaks a rule is
// refused at admission with the rule's own message, before the operator ever sees it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { installCrds, type InstalledCrds } from '../helpers/crds.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
let kube: KubeApiServer;
let crds: InstalledCrds | undefined;

before(async () => {
  kube = await startKubeApiServer();
  crds = await installCrds(kube);
});
after(async () => {
  await kube?.stop();
  await crds?.close();
});

test('every example CR is admitted', async () => {
  const dir = `${ROOT}examples/kubernetes`;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
    const r = await kube.kubectl(['apply', '-n', 'default', '-f', '-'], readFileSync(`${dir}/${f}`, 'utf8'));
    assert.equal(r.code, 0, `${f}: ${r.stderr}`);
  }
});

test('every v1beta1 example is admitted, and reads back as v1alpha1 equal to the v1alpha1 example', async () => {
  assert.equal((await kube.kubectl(['create', 'namespace', 'beta'])).code, 0);
  const dir = `${ROOT}examples/kubernetes/v1beta1`;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
    const r = await kube.kubectl(['apply', '-n', 'beta', '-f', '-'], readFileSync(`${dir}/${f}`, 'utf8'));
    assert.equal(r.code, 0, `${f}: ${r.stderr}`);
  }
  // Through the conversion webhook: the v1beta1 VirtualKey as v1alpha1 is the v1alpha1 example.
  const [alpha, beta] = await Promise.all(['default', 'beta'].map(async (ns) => {
    const r = await kube.kubectl(['get', 'virtualkeys.v1alpha1.gateway.skybridge.dev', 'checkout', '-n', ns, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { spec: unknown }).spec;
  }));
  assert.deepEqual(beta, alpha);
});

const routingRule = (name: string, spec: string) => `apiVersion: gateway.skybridge.dev/v1alpha1
kind: RoutingRule
metadata:
  name: ${name}
  namespace: default
spec:
${spec}`;

const cases: [string, string, RegExp][] = [
  [
    'weights',
    routingRule('bad-weights', '  targets:\n    - provider: openai\n      weight: 0.5\n    - provider: anthropic\n      weight: 0.2'),
    /the weights of targets must sum to 1/,
  ],
  ['scope_id', routingRule('bad-scope', '  scope: team\n  targets:\n    - provider: openai\n      weight: 1'), /scope_id is required unless scope is global/],
  ['key_id', routingRule('bad-pin', '  targets:\n    - key_id: 0f8fad5b-d9cb-469f-a165-70867728950e\n      weight: 1'), /key_id requires provider/],
  [
    'webhook url',
    `apiVersion: gateway.skybridge.dev/v1alpha1
kind: Webhook
metadata:
  name: plain-http
  namespace: default
spec:
  url: http://hooks.example.com/skybridge
  events: [async_job.completed]
  secretFrom:
    secretKeyRef: { name: skybridge-example-secrets, key: webhook-secret }`,
    /url must be https/,
  ],
  [
    'team budget',
    `apiVersion: gateway.skybridge.dev/v1alpha1
kind: Team
metadata:
  name: two-budgets
  namespace: default
spec:
  budget_id: shared
  budget: { max_limit: 10, reset_duration: 1d }`,
    /set budget \(this team's own\) or budget_id, not both/,
  ],
  [
    'customer rate limit',
    `apiVersion: gateway.skybridge.dev/v1alpha1
kind: Customer
metadata:
  name: no-window
  namespace: default
spec:
  rateLimit: { token_max_limit: 1000 }`,
    /token_reset_duration is required with token_max_limit/,
  ],
];

for (const [what, manifest, message] of cases) {
  test(`a CR breaking the ${what} rule is refused at admission with a readable message`, async () => {
    const r = await kube.kubectl(['apply', '-f', '-'], manifest);
    assert.notEqual(r.code, 0, 'the API server admitted it');
    assert.match(r.stderr, message);
    const name = /name: (\S+)/.exec(manifest)![1];
    const kind = /kind: (\S+)/.exec(manifest)![1].toLowerCase();
    const get = await kube.kubectl(['get', '-n', 'default', kind, name]);
    assert.notEqual(get.code, 0, 'nothing was stored');
  });
}
