// Webhook endpoints from Kubernetes: a proxy started with --kube-namespace on a real kube-apiserver
// serves the `webhooks` the operator rendered from Webhook CRs (secret from the Kubernetes Secret):
// they are listed as managed, writes answer 409 naming the CR, and test deliveries and redeliveries
// (which change no configuration) work and are signed with the Secret's value.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { startGateway, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { apiClient, basic, type Api, type ApiError } from '../helpers/api.ts';
import { kubeList, renderConfig } from '../helpers/kube-render.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const NS = 'skybridge';
const SECRET_KEY = 'WEBHOOK_TEAM_A_CR_HOOK_SECRET';
const SECRET = 'whsec_Y3Itd2ViaG9vay1zZWNyZXQtZnJvbS1rdWJl';
const PASSWORD = 'correct-horse-battery-staple';

let kube: KubeApiServer;
let receiver: Receiver;
let proxy: RunningGateway;
let api: Api;

before(
  async () => {
    [kube, receiver] = await Promise.all([startKubeApiServer(), startReceiver()]);
    receiver.setSecret(SECRET);
    assert.equal((await kube.kubectl(['create', 'namespace', NS])).code, 0);
    const doc = {
      client: { enable_logging: true },
      governance: { auth_config: { is_enabled: true, admin_username: 'admin', admin_password: 'env.ADMIN_PASSWORD' } },
      webhooks: [{ name: 'cr-hook', url: receiver.url, events: ['async_job.completed'], secret: `env.${SECRET_KEY}`, allow_private_network: true }],
    };
    const rendered = renderConfig(doc, { [SECRET_KEY]: SECRET, ADMIN_PASSWORD: PASSWORD }, {
      namespace: NS,
      managed: { webhooks: ['cr-hook'] },
      sources: { 'webhooks/cr-hook': 'Webhook team-a/cr-hook' },
    });
    const r = await kube.kubectl(['apply', '--server-side', '--field-manager=skybridge-operator', '--force-conflicts', '-f', '-'], kubeList(rendered.all));
    assert.equal(r.code, 0, r.stderr);
    // Rendered before the proxy starts: the logs store (where deliveries queue) is opened from the start-up document.
    proxy = await startGateway(undefined, { env: { KUBECONFIG: kube.kubeconfig }, args: ['--kube-namespace', NS] });
    api = apiClient(proxy, basic('admin', PASSWORD));
    await eventually(async () => assert.equal((await api('GET', '/api/webhooks/cr-hook')).status, 200), 10_000);
  },
  { timeout: 900_000 },
);

after(async () => {
  await proxy?.stop();
  await receiver?.close();
  await kube?.stop();
});

test('a Webhook CR is served: listed as managed, writes refused with 409 naming the CR', async () => {
  const got = await api<{ webhook: Record<string, unknown> }>('GET', '/api/webhooks/cr-hook');
  assert.equal(got.body.webhook.managed_by, 'kubernetes');
  assert.equal(got.body.webhook.source, 'Webhook team-a/cr-hook');
  assert.ok(!got.text.includes(SECRET.slice(6)));
  const put = await api<ApiError>('PUT', '/api/webhooks/cr-hook', { max_retries: 1 });
  assert.equal(put.status, 409);
  assert.match(put.body.error.message, /Webhook team-a\/cr-hook.*kubectl edit webhooks\.gateway\.skybridge\.dev cr-hook -n team-a/);
  assert.equal((await api('POST', '/api/webhooks/cr-hook/rotate-secret', {})).status, 409);
  assert.equal((await api('DELETE', '/api/webhooks/cr-hook')).status, 409);
  assert.equal((await api('POST', '/api/webhooks', { name: 'new', url: 'https://example.com/h', events: ['async_job.completed'] })).status, 409);
});

test('test delivery and redelivery work on a CR endpoint, signed with the Secret', async () => {
  const res = await api<{ delivery: { id: string } }>('POST', '/api/webhooks/cr-hook/test', {});
  assert.equal(res.status, 202, res.text);
  const id = res.body.delivery.id;
  await eventually(() => assert.equal(receiver.received.filter((r) => r.id === id).length, 1), 10_000);
  assert.equal(receiver.received.find((r) => r.id === id)?.verified, true);
  await eventually(async () => {
    const d = (await api<{ deliveries: { state: string }[] }>('GET', `/api/webhooks/deliveries?delivery_id=${id}`)).body.deliveries[0];
    assert.equal(d.state, 'delivered');
  }, 5000);
  assert.equal((await api('POST', `/api/webhooks/deliveries/${id}/redeliver`, {})).status, 202);
  await eventually(() => assert.equal(receiver.received.filter((r) => r.id === id).length, 2), 10_000);
});
