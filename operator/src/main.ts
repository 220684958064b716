#!/usr/bin/env node
// The Skybridge operator: watches the gateway's custom resources and renders them into the
// ConfigMaps and Secret the proxies read. Every replica watches; the one holding the Lease writes.
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { configureLog, log } from '../../proxy/src/contract.ts';
import { parseOperatorCli, USAGE } from './cli.ts';
import { KubeClient } from './kube/client.ts';
import { OperatorMetrics } from './metrics.ts';
import { EventRecorder } from './events.ts';
import { Controller } from './controller.ts';
import { LeaderElector, defaultIdentity } from './leader.ts';
import { serveConversion } from './conversion/server.ts';
import { keepCrdsPointed } from './conversion/crd-config.ts';

async function main(): Promise<void> {
  let opts;
  try {
    opts = parseOperatorCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts === 'help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  configureLog({ level: opts.logLevel, style: opts.logStyle });

  const kc = new KubeConfig();
  kc.loadFromDefault();
  const client = new KubeClient(kc);
  const identity = opts.identity ?? defaultIdentity();
  const metrics = new OperatorMetrics();
  // Before the informers: the API server may need the webhook to list objects stored in another version.
  const conversion = opts.conversion;
  const webhook = conversion
    ? await serveConversion({ port: conversion.port, host: conversion.host, certFile: join(conversion.certDir, 'tls.crt'), keyFile: join(conversion.certDir, 'tls.key'), metrics, reloadMs: conversion.checkPeriodMs })
    : undefined;
  const pointed = conversion?.target ? keepCrdsPointed(client, conversion.target, () => readFileSync(join(conversion.certDir, 'ca.crt'), 'utf8'), conversion.checkPeriodMs) : undefined;
  // The elector is made after the controller it drives; writes ask it through this.
  let holdsLease = (): boolean => false;
  const controller = new Controller({
    kc,
    client,
    namespace: opts.namespace,
    watchNamespaces: opts.watchNamespaces,
    resyncMs: opts.resyncMs,
    maxPartBytes: opts.maxPartBytes,
    metrics,
    events: new EventRecorder(client, identity),
    holdsLease: () => holdsLease(),
    secrets: { labelSelector: opts.secretSelector, names: opts.secretNames },
    readyWhen: opts.readyWhen,
    statusConcurrency: opts.statusConcurrency,
  });
  const server = await metrics.serve(opts.metricsPort, opts.metricsHost, () => controller.synced);
  const elector = new LeaderElector({
    client,
    namespace: opts.namespace,
    name: opts.leaseName,
    identity,
    leaseDurationMs: opts.leaseDurationMs,
    onStartedLeading: (resumed) => {
      log.info(resumed ? 'leading again: the lease stayed ours' : 'became the leader', { identity });
      metrics.leader.set(1);
      controller.startLeading(resumed);
    },
    onStoppedLeading: () => {
      log.warn('stopped leading', { identity });
      metrics.leader.set(0);
      controller.stopLeading();
    },
    onNewLeader: (holder) => log.info('leader observed', { leader: holder }),
  });

  holdsLease = () => elector.holdsLease();
  controller.start();
  elector.start();
  log.info('skybridge operator started', {
    identity,
    namespace: opts.namespace,
    watch_namespaces: opts.watchNamespaces,
    cluster: kc.getCurrentCluster()?.server,
    metrics: `http://${opts.metricsHost}:${(server.address() as AddressInfo).port}/metrics`,
    lease_duration_s: opts.leaseDurationMs / 1000,
    ...(webhook ? { conversion_webhook: `https://${conversion?.host}:${(webhook.address() as AddressInfo).port}/convert` } : {}),
  });
  void controller.waitForSync().then(() => log.info('caches synced'));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    controller.stopLeading();
    // Handing the lease back lets another replica take over now instead of after the lease expires.
    await elector.stop();
    controller.stop();
    pointed?.stop();
    webhook?.close();
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`skybridge operator failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
