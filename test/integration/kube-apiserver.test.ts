// Proves the Kubernetes test harness is a real control plane: the genuine kube-apiserver on etcd,
// CRD schema and CEL validation, watches, RBAC with tokens, and data surviving an API server restart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';

let kube: KubeApiServer;
let agent: Agent;

before(async () => {
  kube = await startKubeApiServer({ users: [{ name: 'alice', groups: ['skybridge:testers'] }] });
  agent = new Agent({ connect: { ca: kube.ca } });
}, { timeout: 30 * 60_000 });
after(async () => {
  await agent?.close();
  await kube?.stop();
});

const GROUP = 'test.skybridge.dev';
const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const CEL_MESSAGE = 'replicas must not exceed maxReplicas';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['replicas', 'maxReplicas'],
                properties: { replicas: { type: 'integer', minimum: 0 }, maxReplicas: { type: 'integer' } },
                'x-kubernetes-validations': [{ rule: 'self.replicas <= self.maxReplicas', message: CEL_MESSAGE }],
              },
            },
          },
        },
      },
    ],
  },
};

interface Widget {
  metadata: { name: string };
  spec: { replicas: number; maxReplicas: number };
}

const widget = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec });

async function ok(args: string[], stdin?: string): Promise<string> {
  const r = await kube.kubectl(args, stdin);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

function api(path: string, token = kube.token, init: { method?: string; body?: string } = {}) {
  return fetch(`${kube.url}${path}`, {
    ...init,
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
}

describe('kube-apiserver harness', () => {
  test('serves the real API over HTTPS with authentication', async () => {
    const version = JSON.parse(await ok(['version', '-o', 'json'])) as Record<'clientVersion' | 'serverVersion', { gitVersion: string }>;
    assert.match(version.serverVersion.gitVersion, /^v1\.\d+\.\d+$/);
    assert.equal(version.clientVersion.gitVersion, version.serverVersion.gitVersion);
    assert.equal(await (await api('/readyz')).text(), 'ok');
    assert.equal((await api('/api/v1/namespaces', 'not-a-token')).status, 401);
    assert.ok(kube.url.startsWith('https://127.0.0.1:'));
  });

  test('a CRD with a CEL rule: valid objects stored, invalid ones rejected with the rule message', async () => {
    await ok(['apply', '-f', '-'], JSON.stringify(crd));
    await ok(['wait', '--for=condition=Established', `crd/widgets.${GROUP}`, '--timeout=60s']);

    await ok(['apply', '-f', '-'], widget('small', { replicas: 1, maxReplicas: 3 }));
    const stored = JSON.parse(await ok(['get', 'widget', 'small', '-o', 'json'])) as { spec: { replicas: number } };
    assert.equal(stored.spec.replicas, 1);

    const bad = await kube.kubectl(['apply', '-f', '-'], widget('too-big', { replicas: 5, maxReplicas: 3 }));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /is invalid/);
    assert.ok(bad.stderr.includes(CEL_MESSAGE), bad.stderr);

    const wrongType = await kube.kubectl(['apply', '-f', '-'], widget('typo', { replicas: 'three', maxReplicas: 3 }));
    assert.notEqual(wrongType.code, 0);
    assert.match(wrongType.stderr, /spec\.replicas: Invalid value: "string"/);

    const missing = await kube.kubectl(['get', 'widget', 'too-big']);
    assert.match(missing.stderr, /NotFound|not found/);
  });

  test('a @kubernetes/client-node watch sees custom resources created and changed', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kube.kubeconfig);
    const crs = kc.makeApiClient(CustomObjectsApi);
    const list = (await crs.listNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'widgets' })) as {
      items: Widget[];
      metadata: { resourceVersion: string };
    };
    assert.deepEqual(list.items.map((w) => w.metadata.name), ['small']);

    const events: string[] = [];
    let notify = () => {};
    const watch = await new Watch(kc).watch(
      WIDGETS,
      { resourceVersion: list.metadata.resourceVersion },
      (type: string, obj: Widget) => {
        events.push(`${type} ${obj.metadata.name} ${obj.spec.replicas}`);
        notify();
      },
      () => {},
    );
    const until = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`watch saw only ${JSON.stringify(events)}`)), 20_000);
        notify = () => {
          if (events.length < count) return;
          clearTimeout(timer);
          resolve();
        };
        notify();
      });
    try {
      await ok(['apply', '-f', '-'], widget('watched', { replicas: 2, maxReplicas: 2 }));
      await until(1);
      await ok(['patch', 'widget', 'watched', '--type=merge', '-p', '{"spec":{"replicas":1}}']);
      await until(2);
      assert.deepEqual(events, ['ADDED watched 2', 'MODIFIED watched 1']);
    } finally {
      watch.abort();
    }
  });

  test('RBAC: a token user is forbidden until a RoleBinding grants it; service-account tokens work too', async () => {
    const alice = kube.tokens.alice;
    assert.equal((await api(WIDGETS, alice)).status, 403);
    const me = JSON.parse(await ok(['auth', 'whoami', '-o', 'json', `--token=${alice}`])) as { status: { userInfo: { username: string; groups: string[] } } };
    assert.equal(me.status.userInfo.username, 'alice');
    assert.ok(me.status.userInfo.groups.includes('skybridge:testers'));
    const denied = await kube.kubectl(['get', 'widgets', `--token=${alice}`]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /forbidden: User "alice" cannot list resource "widgets"/);

    await ok(['create', 'role', 'widget-reader', '--verb=get,list,watch', `--resource=widgets.${GROUP}`]);
    await ok(['create', 'rolebinding', 'alice-reads-widgets', '--role=widget-reader', '--user=alice']);
    assert.equal((await api(WIDGETS, alice)).status, 200);
    // Least privilege holds: reading was granted, writing was not.
    assert.equal((await api(WIDGETS, alice, { method: 'POST', body: widget('by-alice', { replicas: 0, maxReplicas: 1 }) })).status, 403);

    await ok(['create', 'serviceaccount', 'operator']);
    const saToken = (await ok(['create', 'token', 'operator', '--duration=1h'])).trim();
    assert.equal((await api(WIDGETS, saToken)).status, 403);
    await ok(['create', 'rolebinding', 'operator-reads-widgets', '--role=widget-reader', '--serviceaccount=default:operator']);
    assert.equal((await api(WIDGETS, saToken)).status, 200);
    const review = JSON.parse(await ok(['auth', 'whoami', '-o', 'json', `--token=${saToken}`])) as { status: { userInfo: { username: string } } };
    assert.equal(review.status.userInfo.username, 'system:serviceaccount:default:operator');
  });

  test('restart keeps the data, the URL and issued tokens', async () => {
    const url = kube.url;
    const saToken = (await ok(['create', 'token', 'operator'])).trim();
    await kube.restart();
    assert.equal(kube.url, url);
    const stored = JSON.parse(await ok(['get', 'widget', 'small', '-o', 'json'])) as { spec: { maxReplicas: number } };
    assert.equal(stored.spec.maxReplicas, 3);
    assert.equal((await api(WIDGETS, saToken)).status, 200);
    assert.equal((await api(WIDGETS, kube.tokens.alice)).status, 200);
    // The CEL rule is still enforced after the restart.
    const bad = await kube.kubectl(['apply', '-f', '-'], widget('after-restart', { replicas: 9, maxReplicas: 1 }));
    assert.ok(bad.stderr.includes(CEL_MESSAGE), bad.stderr);
  });
});
