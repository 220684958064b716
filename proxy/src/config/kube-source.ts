// The configuration from Kubernetes (`--kube-namespace NS`): list+watch informers on the operator's
// ConfigMaps (label skybridge.dev/config=true) and its Secret shards (each by name), and on every event the rendered
// document is verified against the index (kube-document.ts) and, once complete, handed to
// ConfigService.replace. What is served only ever changes to a whole, valid document: a partial write
// or an invalid document keeps the last good snapshot.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, ListWatch, Watch, type KubernetesObject, type V1ConfigMap, type V1Secret } from '@kubernetes/client-node';
import { assemble, AssemblyMemo, type Assembly, type DataLookup } from './kube-document.ts';
import { rehearsalEdits } from './kube-rehearse.ts';
import { CONFIG_LABEL_SELECTOR, SECRET_SHARD_NAMES } from '../schema/config-index.ts';
import { checkConfig, ConfigError, type LoadedConfig } from './check.ts';
import { withGatewaySettings } from './env-settings.ts';
import type { ConfigOrigin, ConfigService } from './service.ts';
import { log } from '../log.ts';

export type CompleteAssembly = Extract<Assembly, { state: 'complete' }>;

export interface KubeSourceOptions {
  namespace: string;
  /** Default: KUBECONFIG, else in-cluster, else ~/.kube/config. */
  kubeConfig?: KubeConfig;
  /** How long a part or Secret may disagree with the index before that is reported as an error. */
  partialGraceMs?: number;
  /**
   * Events arriving within this long are read as one. Default 0: the events of one turn of the
   * event loop are read together, and the next read follows at once (a read of a write still in
   * progress costs a checksum of the part that changed: the index, written last, decides).
   */
  debounceMs?: number;
}

// A retry against an API server that is away costs one refused connection; a long cap is what
// would delay recovery once it is back (changes flow again within about half a second).
const RESTART_BASE_MS = 250;
const RESTART_MAX_MS = 500;
/**
 * ListWatch waits before re-opening a watch that ended cleanly, doubling up to 30 s and resetting
 * only on an event, so a quiet resource could wait that long after an API server restart. Capped.
 */
const MAX_RECONNECT_DELAY_MS = 250;
export const cappedDelay = (ms: number): Promise<void> => sleep(Math.min(ms, MAX_RECONNECT_DELAY_MS));

export function defaultKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kc = new KubeConfig();
  if (!env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** An informer that starts itself again after an error, with capped exponential backoff (InferencePool discovery uses it too). */
export class Follower<T extends KubernetesObject> {
  readonly informer: ListWatch<T>;
  #what: string;
  #delay = RESTART_BASE_MS;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(what: string, informer: ListWatch<T>, onChange: () => void) {
    this.#what = what;
    this.informer = informer;
    // An event means the watch is healthy again: the next failure backs off from the start.
    const changed = () => {
      this.connected();
      onChange();
    };
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('error', (err: unknown) => this.#restart(err));
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  /** A list succeeded: the connection is healthy again, so the next failure backs off from the start. */
  connected(): void {
    this.#delay = RESTART_BASE_MS;
  }

  // The informer stops on any error but a 410 Gone (that one it handles itself: it lists again).
  #restart(err: unknown): void {
    if (this.#stopped) return;
    const delay = this.#delay;
    this.#delay = Math.min(this.#delay * 2, RESTART_MAX_MS);
    // Once per streak of failures: an API server away for minutes should not flood the log.
    (delay === RESTART_BASE_MS ? log.warn : log.debug)('kubernetes watch failed; retrying', { watch: this.#what, retry_in_ms: delay, error: describe(err) });
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.start(), delay);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.informer.stop();
  }
}

export function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as Error & { statusCode?: number; code?: unknown }).statusCode ?? (err as Error & { code?: unknown }).code;
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}${code !== undefined ? ` (${String(code)})` : ''}`;
  }
  return String(err);
}

/**
 * Watches the rendered configuration in one namespace. `onDocument` gets every complete document
 * that differs from the last one given (by revision and Secret checksum); if it throws, the
 * document is reported like an invalid one. `onError` is called once per bad state.
 */
export class KubeConfigSource {
  readonly namespace: string;
  #configMaps: Follower<V1ConfigMap>;
  #secrets: Follower<V1Secret>[];
  #graceMs: number;
  #debounceMs: number;
  #debounce: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #grace: NodeJS.Timeout | undefined;
  #onDocument: ((doc: CompleteAssembly) => Promise<void>) | undefined;
  #onError: ((message: string) => void) | undefined;
  /** What a reload runs short of serving (kube-rehearse.ts), rehearsed once the first document is served. */
  #rehearse: ((doc: CompleteAssembly) => Promise<void>) | undefined;
  /** Whether this process has rehearsed reloads yet: the runtime's warmth is per process. */
  #rehearsed = false;
  /** Revision and Secret checksum of the last document handed on (or rejected). */
  #lastKey: string | undefined;
  /** The last bad state reported, so a repeated event does not report it twice. */
  #lastReported: string | undefined;
  #served = false;
  #reading: Promise<void> = Promise.resolve();
  /** Checksums of the parts and Secret shards already read: a change re-hashes only what changed. */
  readonly #assembly = new AssemblyMemo();
  /** The index of the document being served now (reported to the operator: served-report.ts). */
  servedIndex: { revision: string; secretChecksum: string } | undefined;
  /** Why the newest rendering is not served (rejected, or incomplete past the grace period); reported to the operator. */
  problem: string | undefined;

  constructor(opts: KubeSourceOptions) {
    this.namespace = opts.namespace;
    this.#graceMs = opts.partialGraceMs ?? 3000;
    this.#debounceMs = opts.debounceMs ?? 0;
    const kc = opts.kubeConfig ?? defaultKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const ns = opts.namespace;
    const onChange = () => this.#schedule();
    const listed = <L>(list: () => Promise<L>, follower: () => Follower<V1ConfigMap> | Follower<V1Secret>) => async (): Promise<L> => {
      const result = await list();
      follower().connected();
      return result;
    };
    this.#configMaps = new Follower(
      'configmaps',
      new ListWatch<V1ConfigMap>(
        `/api/v1/namespaces/${ns}/configmaps`,
        new Watch(kc),
        listed(() => core.listNamespacedConfigMap({ namespace: ns, labelSelector: CONFIG_LABEL_SELECTOR }), () => this.#configMaps),
        false,
        CONFIG_LABEL_SELECTOR,
        undefined,
        { delayFn: cappedDelay },
      ),
      onChange,
    );
    // Each shard by name, so RBAC can grant exactly these Secrets (resourceNames) and nothing else.
    this.#secrets = SECRET_SHARD_NAMES.map((name) => {
      const selector = `metadata.name=${name}`;
      const follower: Follower<V1Secret> = new Follower(
        `secret ${name}`,
        new ListWatch<V1Secret>(
          `/api/v1/namespaces/${ns}/secrets`,
          new Watch(kc),
          listed(() => core.listNamespacedSecret({ namespace: ns, fieldSelector: selector }), () => follower),
          false,
          undefined,
          selector,
          { delayFn: cappedDelay },
        ),
        onChange,
      );
      return follower;
    });
  }

  /** Lists both kinds once (the first read), then keeps watching. Errors are retried, not thrown. */
  async start(): Promise<void> {
    await Promise.all([this.#configMaps.start(), ...this.#secrets.map((s) => s.start())]);
  }

  /** What the informers hold now, verified. */
  read(): Assembly {
    const ns = this.namespace;
    return assemble((name) => this.#configMaps.informer.get(name, ns)?.data, (name) => this.#secretsNamed(name)?.informer.get(name, ns)?.data, this.#assembly);
  }

  #secretsNamed(name: string): Follower<V1Secret> | undefined {
    const n = SECRET_SHARD_NAMES.indexOf(name);
    return n < 0 ? undefined : this.#secrets[n];
  }

  /** From now on, changes go to `onDocument`; the current state is read at once. */
  follow(onDocument: (doc: CompleteAssembly) => Promise<void>, onError: (message: string) => void, initial?: CompleteAssembly, rehearse?: (doc: CompleteAssembly) => Promise<void>): Promise<void> {
    this.#onDocument = onDocument;
    this.#onError = onError;
    this.#rehearse = rehearse;
    if (initial) {
      this.#lastKey = keyOf(initial);
      this.#served = true;
      this.servedIndex = { revision: initial.index.revision, secretChecksum: initial.index.secretChecksum };
    }
    const first = this.#readNow(false);
    if (initial) void first.then(() => this.#startRehearsal());
    return first;
  }

  /**
   * A few reloads rehearsed, each in a turn of its own after the reads queued before it: the
   * rendering as served, edited copies of it (kube-rehearse.ts), then as served again, so the memos
   * end on what is served. Stops at the first real change: that one needs no rehearsal any more.
   */
  #startRehearsal(): void {
    const rehearse = this.#rehearse;
    if (this.#rehearsed || !rehearse) return;
    this.#rehearsed = true;
    const ns = this.namespace;
    const configMap: DataLookup = (name) => this.#configMaps.informer.get(name, ns)?.data;
    const secret: DataLookup = (name) => this.#secretsNamed(name)?.informer.get(name, ns)?.data;
    const steps = [configMap, ...rehearsalEdits(configMap), configMap];
    const started = Date.now();
    let done = 0;
    const next = (): void => {
      const step = steps[done];
      if (!step || !this.#onDocument || this.#debounce) {
        log.debug('reloads rehearsed', { namespace: ns, reloads: done, ms: Date.now() - started });
        return;
      }
      done++;
      this.#reading = this.#reading
        .then(async () => {
          const state = assemble(step, secret, this.#assembly);
          if (state.state === 'complete') await rehearse(state);
        })
        .catch((err: unknown) => log.debug('rehearsing a reload failed', { namespace: ns, error: describe(err) }))
        .then(() => void setImmediate(next));
    };
    setImmediate(next);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#debounce as NodeJS.Timeout);
    clearImmediate(this.#debounce as NodeJS.Immediate);
    clearTimeout(this.#grace);
    this.#onDocument = undefined;
    await Promise.all([this.#configMaps.stop(), ...this.#secrets.map((s) => s.stop())]);
  }

  #schedule(): void {
    if (!this.#onDocument) return;
    // A fixed wait here was on every change's path (20 ms of a change's p50 at 2,000 resources).
    if (this.#debounceMs <= 0) {
      if (this.#debounce) return;
      this.#debounce = setImmediate(() => {
        this.#debounce = undefined;
        void this.#readNow(false);
      });
      return;
    }
    clearTimeout(this.#debounce as NodeJS.Timeout);
    this.#debounce = setTimeout(() => void this.#readNow(false), this.#debounceMs);
  }

  #readNow(graceOver: boolean): Promise<void> {
    // One read at a time, in order; a failure must not stop the ones after it.
    this.#reading = this.#reading
      .then(() => this.#reconcile(graceOver))
      .catch((err: unknown) => log.error('reading the rendered configuration failed', { namespace: this.namespace, error: describe(err) }));
    return this.#reading;
  }

  async #reconcile(graceOver: boolean): Promise<void> {
    const onDocument = this.#onDocument;
    if (!onDocument) return;
    const state = this.read();
    if (state.state !== 'partial') {
      clearTimeout(this.#grace);
      this.#grace = undefined;
    }
    switch (state.state) {
      case 'absent':
        if (this.#served) this.#report('absent', `ConfigMap skybridge-config-index in namespace ${this.namespace} is gone: keeping the last good configuration`, false);
        else this.#report('absent', `no configuration rendered in namespace ${this.namespace} yet (ConfigMap skybridge-config-index): waiting for the operator`, false);
        return;
      case 'partial':
        if (graceOver) {
          this.#report(`partial ${state.revision} ${state.reason}`, `rendered configuration revision ${state.revision} is incomplete: ${state.reason}; keeping the last good configuration`, true);
          return;
        }
        log.debug('rendered configuration is being written; waiting for the rest', { namespace: this.namespace, revision: state.revision, reason: state.reason });
        // Reported only if no event completes it in time: the operator writes several objects.
        if (!this.#grace) {
          this.#grace = setTimeout(() => {
            this.#grace = undefined;
            void this.#readNow(true);
          }, this.#graceMs);
          this.#grace.unref();
        }
        return;
      case 'invalid':
        this.#report(`invalid ${state.revision ?? ''} ${state.reason}`, `rendered configuration${state.revision ? ` revision ${state.revision}` : ''} rejected: ${state.reason}; keeping the last good configuration`, true);
        return;
      case 'complete': {
        const key = keyOf(state);
        if (key === this.#lastKey) return;
        this.#lastKey = key;
        try {
          await onDocument(state);
          this.#served = true;
          this.servedIndex = { revision: state.index.revision, secretChecksum: state.index.secretChecksum };
          this.#lastReported = undefined;
          this.problem = undefined;
          this.#startRehearsal();
        } catch (err) {
          const message = err instanceof ConfigError ? err.message : describe(err);
          this.#report(`rejected ${key}`, `rendered configuration revision ${state.index.revision} rejected; keeping the last good configuration: ${message}`, true);
        }
        return;
      }
    }
  }

  #report(key: string, message: string, isError: boolean): void {
    if (key === this.#lastReported) return;
    this.#lastReported = key;
    if (!isError) {
      log.warn(message, { namespace: this.namespace });
      return;
    }
    log.error(message, { namespace: this.namespace });
    this.problem = message;
    this.#onError?.(message);
  }
}

const keyOf = (doc: CompleteAssembly): string => `${doc.index.revision}/${doc.index.secretChecksum}`;

/** The origin /api reports for a document rendered from custom resources. */
export const kubeOrigin = (doc: CompleteAssembly | undefined): ConfigOrigin => ({
  managedBy: 'kubernetes',
  editWith: 'the Skybridge custom resources (gateway.skybridge.dev) with kubectl',
  sources: doc?.index.sources ?? {},
});

/** Applies every complete document through the service (validated, compiled, swapped). */
export function followKubernetes(
  source: KubeConfigSource,
  service: ConfigService,
  onError: (message: string) => void,
  initial?: CompleteAssembly,
  onLoaded?: (revision: string) => void,
): Promise<void> {
  service.setOrigin(kubeOrigin(initial));
  return source.follow(
    async (rendered) => {
      // The deployment's own settings (SKYBRIDGE_CLIENT, management auth...) hold for every document.
      const doc = withGatewaySettings(rendered);
      const next = await service.replace(doc.document, { source: `Kubernetes (namespace ${source.namespace}, revision ${doc.index.revision})`, env: doc.env, origin: kubeOrigin(doc) });
      log.info('configuration reloaded from Kubernetes', { namespace: source.namespace, revision: doc.index.revision, config_hash: next.hash });
      onLoaded?.(doc.index.revision);
    },
    onError,
    initial,
    (rendered) => {
      const doc = withGatewaySettings(rendered);
      return service.rehearse(doc.document, doc.env);
    },
  );
}

export interface KubeStart {
  source: KubeConfigSource;
  /** The first document, validated; an empty configuration when there is none (yet) or it is bad. */
  loaded: LoadedConfig;
  /** The document `loaded` came from, when it did. */
  initial: CompleteAssembly | undefined;
  /** Applies every later change through `service`; `onError` counts rejected ones, `onLoaded` gets each served revision. */
  follow(service: ConfigService, onError: (message: string) => void, onLoaded?: (revision: string) => void): Promise<void>;
}

/**
 * Starts watching and waits (at most `waitMs`, e.g. while the API server is unreachable) for the
 * first read, so a proxy starts serving the configuration that is there. A missing, partial or
 * invalid one starts the proxy on an empty configuration; following it reports why and swaps in
 * the first good one.
 */
export async function openKubernetesConfig(namespace: string, opts: Omit<KubeSourceOptions, 'namespace'> & { waitMs?: number } = {}): Promise<KubeStart> {
  const source = new KubeConfigSource({ ...opts, namespace });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([source.start(), new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.waitMs ?? 10_000)))]);
  clearTimeout(timer);
  const first = source.read();
  if (first.state === 'complete') {
    try {
      const doc = withGatewaySettings(first);
      const loaded = checkConfig(doc.document, `Kubernetes (namespace ${namespace}, revision ${first.index.revision})`, doc.env);
      return { source, loaded, initial: first, follow: (service, onError, onLoaded) => followKubernetes(source, service, onError, first, onLoaded) };
    } catch {
      // Reported (and counted) by follow(), which reads the same document again.
    }
  }
  const empty = withGatewaySettings({ document: {}, env: {} });
  return { source, loaded: checkConfig(empty.document, 'an empty configuration', empty.env), initial: undefined, follow: (service, onError, onLoaded) => followKubernetes(source, service, onError, undefined, onLoaded) };
}
