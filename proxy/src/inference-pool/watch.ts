// Follows one InferencePool (inference.networking.k8s.io/v1) and the EndpointSlices its selector
// matches, through the Kubernetes API: list, then watch, each restarted with backoff after an
// error. Only `get`, `list` and `watch` on inferencepools and endpointslices are needed. Loaded only
// when a provider names a pool (the Kubernetes client costs ~30 MB).
import { CustomObjectsApi, DiscoveryV1Api, ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1EndpointSlice } from '@kubernetes/client-node';
import { Follower, cappedDelay, defaultKubeConfig, describe } from '../config/kube-source.ts';

export const POOL_GROUP = 'inference.networking.k8s.io';
export const POOL_VERSION = 'v1';
const POOL_PLURAL = 'inferencepools';

/** The part of an InferencePool's spec the proxies act on. */
export interface PoolSpec {
  /** spec.selector.matchLabels */
  matchLabels: Record<string, string>;
  /** spec.targetPorts[].number */
  targetPorts: number[];
}

export interface InferencePoolObject extends KubernetesObject {
  spec?: { selector?: { matchLabels?: Record<string, string> }; targetPorts?: { number?: number }[] };
}

export interface PoolWatchEvents {
  /** The pool as it is now; undefined when there is none of that name. */
  pool(spec: PoolSpec | undefined): void;
  /** Every EndpointSlice the pool's selector matches, after any change. */
  slices(slices: readonly V1EndpointSlice[]): void;
  /** A list or watch failed (it is retried): why. */
  error(message: string): void;
}

export interface PoolWatch {
  namespace: string;
  stop(): Promise<void>;
}

/** The namespace of the kubeconfig's current context (in a pod: the pod's), else `default`. */
export function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}

export function poolSpec(pool: InferencePoolObject): PoolSpec {
  return {
    matchLabels: { ...(pool.spec?.selector?.matchLabels ?? {}) },
    targetPorts: (pool.spec?.targetPorts ?? []).map((p) => p.number).filter((n): n is number => typeof n === 'number'),
  };
}

const selectorOf = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

export function watchPool(name: string, namespace: string | undefined, events: PoolWatchEvents, kc: KubeConfig = defaultKubeConfig()): PoolWatch {
  const ns = namespace ?? contextNamespace(kc);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const id = `${ns}/${name}`;
  let slices: Follower<V1EndpointSlice> | undefined;
  let selector: string | undefined;
  let stopped = false;

  // Stopping aborts the watches: that is no failure to report.
  const failed = (what: string) => (err: unknown) => {
    if (!stopped) events.error(`${what}: ${describe(err)}`);
  };

  const followSlices = (labels: Record<string, string> | undefined): void => {
    const next = labels && Object.keys(labels).length > 0 ? selectorOf(labels) : undefined;
    if (next === selector) return;
    selector = next;
    const old = slices;
    slices = undefined;
    void old?.stop();
    if (next === undefined || stopped) {
      events.slices([]);
      return;
    }
    const report = () => {
      if (slices === follower) events.slices(informer.list(ns));
    };
    const informer = new ListWatch<V1EndpointSlice>(
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
      new Watch(kc),
      async () => {
        const list = await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: next });
        follower.connected();
        // ListWatch calls no handler for an empty list: report every list once the cache holds it.
        setImmediate(report);
        return list;
      },
      false,
      next,
      undefined,
      { delayFn: cappedDelay },
    );
    const follower: Follower<V1EndpointSlice> = new Follower(`endpointslices ${next} in ${ns}`, informer, report);
    informer.on('error', failed(`the EndpointSlices of InferencePool ${id} (selector ${next}) cannot be read`));
    slices = follower;
    void follower.start().catch(() => undefined);
  };

  const fieldSelector = `metadata.name=${name}`;
  const poolInformer = new ListWatch<InferencePoolObject>(
    `/apis/${POOL_GROUP}/${POOL_VERSION}/namespaces/${ns}/${POOL_PLURAL}`,
    new Watch(kc),
    async () => {
      const list = (await custom.listNamespacedCustomObject({ group: POOL_GROUP, version: POOL_VERSION, namespace: ns, plural: POOL_PLURAL, fieldSelector })) as KubernetesListObject<InferencePoolObject>;
      pools.connected();
      // A pool that does not exist gives an empty list and no event: say so once the cache holds it.
      setImmediate(() => {
        if (!stopped) onPool();
      });
      return list;
    },
    false,
    undefined,
    fieldSelector,
    { delayFn: cappedDelay },
  );
  const onPool = () => {
    const pool = poolInformer.get(name, ns);
    const spec = pool ? poolSpec(pool) : undefined;
    events.pool(spec);
    followSlices(spec?.matchLabels);
  };
  const pools = new Follower<InferencePoolObject>(`inferencepool ${id}`, poolInformer, onPool);
  poolInformer.on('error', failed(`InferencePool ${id} cannot be read (is the InferencePool CRD, ${POOL_GROUP}/${POOL_VERSION}, installed, and may the proxy get, list and watch inferencepools there?)`));
  void pools.start().catch(() => undefined);

  return {
    namespace: ns,
    async stop() {
      stopped = true;
      await Promise.allSettled([pools.stop(), slices?.stop()]);
    },
  };
}
