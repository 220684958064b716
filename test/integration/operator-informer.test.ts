// The operator's informer on a real kube-apiserver whose watches expire fast (no watch cache, etcd
// compacted every second): a watch resumed from a compacted resourceVersion gets 410 Gone, and the
// informer relists, so the cache matches the server again, with the events for what changed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { startKubeApiServer, type KubeApiServer } from '../helpers/kube.ts';
import { Informer } from '../../operator/src/kube/informer.ts';
import { KubeClient } from '../../operator/src/kube/client.ts';

let kube: KubeApiServer;
let client: KubeClient;
let kc: KubeConfig;

before(async () => {
  kube = await startKubeApiServer({ apiserverArgs: ['--watch-cache=false', '--etcd-compaction-interval=1s'] });
  kc = new KubeConfig();
  kc.loadFromFile(kube.kubeconfig);
  client = new KubeClient(kc);
  await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w' } });
}, { timeout: 30 * 60_000 });

after(async () => {
  await kube?.stop();
});

const cm = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'w' }, data: { value } });

async function until(what: string, fn: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

test('a watch resumed from an expired resourceVersion (410 Gone) relists, and the cache catches up', async () => {
  const events: string[] = [];
  let syncs = 0;
  const errors: unknown[] = [];
  const informer = new Informer(kc, client, {
    path: '/api/v1/namespaces/w/configmaps',
    onEvent: (type, obj) => events.push(`${type} ${obj.metadata?.name}`),
    onSynced: () => syncs++,
    onError: (err) => errors.push(err),
  });
  await client.create('/api/v1/namespaces/w/configmaps', cm('old', '1'));
  informer.start();
  await informer.waitForSync();
  await until('the first object', () => events.includes('add old'));
  assert.equal(syncs, 1);

  // Stopped, it keeps its resourceVersion; meanwhile the object changes and etcd compacts past it.
  informer.stop();
  await client.delete('/api/v1/namespaces/w/configmaps/old');
  await client.create('/api/v1/namespaces/w/configmaps', cm('new', '1'));
  for (let i = 0; i < 30; i++) {
    await client.apply('/api/v1/namespaces/w/configmaps/churn', cm('churn', String(i)), 'test');
    await sleep(100);
  }
  assert.deepEqual(events, ['add old'], 'nothing arrives while stopped');
  events.length = 0;

  // Resumed from its old resourceVersion, the watch is refused as expired: only a relist can count a second sync.
  informer.start();
  await until('the relist after 410', () => syncs >= 2);
  await until('the cache to match the server', () => informer.get('new', 'w') !== undefined && informer.get('old', 'w') === undefined);
  assert.ok(events.includes('delete old'), `events: ${events.join(', ')}`);
  assert.ok(events.includes('add new'), `events: ${events.join(', ')}`);
  assert.equal((informer.get('churn', 'w') as { data?: Record<string, string> } | undefined)?.data?.value, '29');

  // Watching again: a later change arrives as an event.
  await client.apply('/api/v1/namespaces/w/configmaps/new', cm('new', '2'), 'test');
  await until('the update event', () => events.includes('update new'));
  informer.stop();
});

test('when the API server goes away the informer restarts with a short backoff, and changes flow within 2 s of its return', async () => {
  const events: string[] = [];
  const retries: number[] = [];
  const informer = new Informer(kc, client, {
    path: '/api/v1/namespaces/w/configmaps',
    onEvent: (type, obj) => events.push(`${type} ${obj.metadata?.name}`),
    onError: (_err, retryInMs) => retries.push(retryInMs),
  });
  informer.start();
  await informer.waitForSync();
  // Down long enough for the backoff to reach its cap, as in a real control-plane restart.
  await kube.restart();
  const back = Date.now();
  await client.apply('/api/v1/namespaces/w/configmaps/after-restart', cm('after-restart', '1'), 'test');
  await until('the change made after the restart', () => events.includes('add after-restart'), 30_000);
  const recoveryMs = Date.now() - back;
  assert.ok(recoveryMs <= 2000, `changes flowed again ${recoveryMs} ms after the API server was back`);
  process.stdout.write(`# changes flowed again ${recoveryMs} ms after the API server was back\n`);
  assert.ok(retries.length >= 1, 'the watch failed at least once');
  // Exponential from 0.25 s, capped at 1 s.
  assert.equal(retries[0], 250);
  for (const r of retries) assert.ok([250, 500, 1000].includes(r), `retry in ${r} ms`);

  // A second outage starts the backoff over: the successful reconnect reset it.
  retries.length = 0;
  await kube.restart();
  const back2 = Date.now();
  await client.apply('/api/v1/namespaces/w/configmaps/after-restart-2', cm('after-restart-2', '1'), 'test');
  await until('the change made after the second restart', () => events.includes('add after-restart-2'), 30_000);
  assert.ok(Date.now() - back2 <= 2000, `changes flowed again ${Date.now() - back2} ms after the second restart`);
  assert.equal(retries[0], 250, 'the backoff started over');
  informer.stop();
});
