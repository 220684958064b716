// The reconcile loop. Informers (every replica, so a new leader starts with warm caches) feed a work
// queue keyed by target namespace; the leader's worker renders the WHOLE desired state from the
// caches on each pass (level-based: no event is ever interpreted, only the current state), writes it
// with server-side apply (parts and Secret first, the index last as the commit point, stale parts
// deleted after), then writes each CR's status. Nothing outside Kubernetes is created, so no
// finalizers are needed: a deleted CR simply drops out of the next render.
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { CheckMemo, SERVED_REPORT_SELECTOR, log, parseIndex, readSources, type ConfigIndex } from '../../proxy/src/contract.ts';
import { KubeApiError, isNotFound, resourcePath, type KubeClient } from './kube/client.ts';
import { Informer } from './kube/informer.ts';
import { WorkQueue } from './queue.ts';
import type { OperatorMetrics } from './metrics.ts';
import type { EventRecorder } from './events.ts';
import { KINDS, STORAGE_API_VERSION, crRef, refOf, type CustomResource, type KindInfo } from './resources/kinds.ts';
import { toInternal } from './conversion/convert.ts';
import { desiredState, type DesiredState } from './resources/desired.ts';
import { TranslationCache, type VersionedSecretLookup } from './resources/translation-cache.ts';
import { renderOutput, type AppliedObject, type RenderedOutput } from './render/output.ts';
import { RenderMemo } from './render/memo.ts';
import { FIELD_MANAGER, INDEX_KEY, INDEX_NAME, LABEL_SELECTOR, partNumber, sourcesPartNumber } from './render/contract.ts';
import { SECRET_SHARD_NAMES } from './render/limits.ts';
import { describeLost, holdDecision, type HoldDecision } from './safety.ts';
import { currentStatus, desiredConditions, nextStatus, servedProblem, statusChanged, statusFields, statusPatch, type RenderOutcome, type ResourceStatus, type ServedView } from './status.ts';
import { ServedTracker, poolProviderName } from './served.ts';
import { forEachLimited } from './pool.ts';
import { OutageLog } from './outage-log.ts';
import { rehearseEdits } from './rehearse.ts';
import type { Verdict } from './resources/desired.ts';

export interface ControllerOptions {
  kc: KubeConfig;
  client: KubeClient;
  /** Where the rendered ConfigMaps and Secret go (and the lease lives). */
  namespace: string;
  /** Namespaces whose CRs and Secrets are read; `all` for the whole cluster. */
  watchNamespaces: readonly string[] | 'all';
  /** Every this often the whole state is reconciled even without events. */
  resyncMs: number;
  maxPartBytes?: number;
  metrics: OperatorMetrics;
  events: EventRecorder;
  /** Whether the lease is still ours right now (checked before every write). */
  holdsLease?: () => boolean;
  /**
   * Which Secrets are read. Default: every Secret of a watched namespace except Helm's release
   * records. `labelSelector`: only those labels select. `names`: only these names, each watched on
   * its own (so RBAC can grant exactly them with resourceNames).
   */
  secrets?: SecretSelection;
  /**
   * `served` (default): Ready=True only when every live proxy replica reports serving the CR's
   * generation (their Leases, served.ts). `rendered`: Ready=True once written, as for a setup with
   * no reporting proxies.
   */
  readyWhen?: 'served' | 'rendered';
  /** Status writes in flight at once. */
  statusConcurrency?: number;
}

/** Queue key suffix of a pass that only rewrites statuses (a replica's report changed). */
const STATUS_PASS = '#status';
/**
 * Status writes give way to a render that is waiting (a bulk change keeps arriving): rendering the
 * newest state matters more than statuses the next pass rewrites anyway. At least this many are
 * written per pass first, so statuses always progress.
 */
const MIN_STATUS_WRITES_BEFORE_YIELD = 100;

/** What the last full pass decided, for status-only passes between renders. */
interface LastPass {
  outcome: RenderOutcome;
  verdicts: Map<string, Verdict>;
  /** By CR uid: the generation that pass saw (a newer one waits for the next render). */
  generations: Map<string, number | undefined>;
  /** `MCPClient ns/name` -> client id in the document. */
  mcpIds: Map<string, string>;
  /** `Webhook ns/name` -> webhook id in the document. */
  webhookIds: Map<string, string>;
}

export interface SecretSelection {
  labelSelector?: string;
  names?: readonly string[];
}

/** Helm keeps every release (the whole rendered chart, per revision) in Secrets: never credentials. */
export const NOT_HELM_RELEASES = 'type!=helm.sh/release.v1';

interface RawObject extends KubernetesObject {
  data?: Record<string, string>;
}

/** Thrown when leadership was lost mid-reconcile: the rest is left to the new leader. */
class NotLeaderError extends Error {}

export class Controller {
  readonly #opts: ControllerOptions;
  readonly #crInformers: { info: KindInfo; informer: Informer }[] = [];
  readonly #secretInformers = new Map<string, Informer[]>();
  readonly #output: { configMaps: Informer; secrets: Informer[] };
  /** The proxies' served reports (absent with readyWhen `rendered`). */
  readonly #reports: Informer | undefined;
  readonly #served = new ServedTracker();
  /** Each CR's translation, reused while its generation and the Secrets it read are unchanged. */
  readonly #translations = new TranslationCache();
  /** The whole-document check's per-resource results, reused while a resource's fragment is the same. */
  readonly #checkMemo = new CheckMemo();
  /**
   * By CR uid: the inputs its status was last computed from and the status object it was compared
   * with, when nothing needed writing. A proxy's report changing re-evaluates every CR; most of them
   * have the same inputs and are skipped at the cost of building a key.
   */
  readonly #statusSeen = new Map<string, StatusSeen>();
  /** The live index as last read, with its sources (parsed once per index text). */
  #liveIndex: { raw: string; index: ConfigIndex } | undefined;
  /** The last desired state, the inputs it came from (a Fingerprint) and #inputEvents then. */
  #lastDesired: { fingerprint: Fingerprint; events: number; desired: DesiredState } | undefined;
  /**
   * Bumped by every event that may change what is rendered (a CR's spec or deletion, a watched
   * Secret): while it stands still (our own writes coming back, the proxies' reports), a pass need
   * not even work out the fingerprint.
   */
  #inputEvents = 0;
  /** The last render of a desired state, reused while the desired state and the index's uid are the same. */
  #lastRender: { input: DesiredState['input']; indexUid: string | undefined; out: RenderedOutput } | undefined;
  /** The laid-out text of each fragment (by identity: a cached translation's fragments are reused). */
  readonly #texts = new WeakMap<object, string>();
  /** Part checksums, the Secret packing and the `sources` layout of earlier renders. */
  readonly #renderMemo = new RenderMemo();
  #lastPass: LastPass | undefined;
  /** Whether this process has rehearsed edits yet (rehearse.ts): the runtime's warmth is per process. */
  #rehearsed = false;
  #expiry: NodeJS.Timeout | undefined;
  #liveKey = '';
  readonly #generations = new Map<string, number | undefined>();
  /** Statuses written and not yet seen back through the watch, by CR uid. */
  readonly #written = new Map<string, ResourceStatus>();
  #queue: WorkQueue<string> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #leading = false;
  /** Bumped whenever leadership starts or stops. */
  #term = 0;

  constructor(opts: ControllerOptions) {
    this.#opts = opts;
    const { kc, client } = opts;
    const namespaces = opts.watchNamespaces === 'all' ? [undefined] : [...new Set(opts.watchNamespaces)];
    const watches = new OutageLog('watch failed, restarting');
    const onError = (what: string) => (err: unknown, retryInMs: number) => {
      opts.metrics.errors.inc({ stage: 'informer' });
      watches.failed({ resource: what, error: (err as Error)?.message ?? String(err), retry_in_ms: retryInMs });
    };
    /** A watch that lists again ends the outage (one line says so) before its own work. */
    const synced = (then: () => void) => () => {
      watches.recovered();
      then();
    };
    for (const info of KINDS) {
      for (const ns of namespaces) {
        // The storage version: listing it needs no conversion webhook (objects not yet migrated aside).
        const path = resourcePath(STORAGE_API_VERSION, info.plural, ns);
        const informer = new Informer(kc, client, {
          path,
          onEvent: (type, obj) => this.#onResourceEvent(type, obj),
          onSynced: synced(() => this.#inputChanged()),
          onError: onError(path),
        });
        this.#crInformers.push({ info, informer });
      }
    }
    const selection = opts.secrets ?? {};
    for (const ns of namespaces) {
      const path = resourcePath('v1', 'secrets', ns);
      // Our own rendered Secret shards are Secrets of a watched namespace too when the operator renders
      // into one it watches: their writes coming back are no input.
      const secretInformer = (fieldSelector: string, labelSelector?: string) =>
        new Informer(kc, client, {
          path,
          fieldSelector,
          labelSelector,
          onEvent: (type, obj) => {
            if (type !== 'delete' && this.#ownWrite('Secret', obj)) return;
            this.#inputChanged();
          },
          onSynced: synced(() => this.#inputChanged()),
          onError: onError(`${path}?${fieldSelector}`),
        });
      const informers = selection.names?.length
        ? [...new Set(selection.names)].sort().map((name) => secretInformer(`metadata.name=${name}`))
        : [secretInformer(NOT_HELM_RELEASES, selection.labelSelector)];
      this.#secretInformers.set(ns ?? '*', informers);
    }
    const outputInformer = (plural: string, name?: string) => {
      const path = resourcePath('v1', plural, opts.namespace);
      // Each rendered Secret shard by its fixed name: RBAC can then grant exactly them (no list of every Secret).
      const fieldSelector = name ? `metadata.name=${name}` : undefined;
      return new Informer(kc, client, { path, labelSelector: LABEL_SELECTOR, fieldSelector, onEvent: (type, obj) => this.#onOutputEvent(plural === 'secrets' ? 'Secret' : 'ConfigMap', type, obj), onSynced: synced(() => this.#enqueue()), onError: onError(path) });
    };
    this.#output = { configMaps: outputInformer('configmaps'), secrets: SECRET_SHARD_NAMES.map((n) => outputInformer('secrets', n)) };
    if ((opts.readyWhen ?? 'served') === 'served') {
      const path = resourcePath('coordination.k8s.io/v1', 'leases', opts.namespace);
      this.#reports = new Informer(kc, client, {
        path,
        labelSelector: SERVED_REPORT_SELECTOR,
        // Renewals only move renewTime: a status pass only when what a replica serves changed.
        onEvent: (type, obj) => {
          if (this.#served.observe(type, obj)) this.#enqueueStatus();
          this.#armExpiry();
        },
        onSynced: synced(() => {
          this.#served.seeing();
          this.#armExpiry();
          this.#enqueueStatus();
        }),
        onError: (err, retryInMs) => {
          this.#served.blind();
          onError(path)(err, retryInMs);
        },
      });
    }
  }

  #all(): Informer[] {
    return [...this.#crInformers.map((c) => c.informer), ...[...this.#secretInformers.values()].flat(), this.#output.configMaps, ...this.#output.secrets, ...(this.#reports ? [this.#reports] : [])];
  }

  #enqueueStatus(): void {
    this.#queue?.add(this.#opts.namespace + STATUS_PASS);
  }

  /** A replica that stops renewing drops out when its lease runs out: look again then. */
  #armExpiry(): void {
    clearTimeout(this.#expiry);
    const next = this.#served.nextExpiry();
    if (next === undefined) return;
    this.#expiry = setTimeout(() => {
      const key = this.#served.liveKey();
      if (key !== this.#liveKey) this.#enqueueStatus();
      this.#armExpiry();
    }, Math.max(0, next - Date.now()) + 20);
    this.#expiry.unref();
  }

  /** Start watching (every replica). */
  start(): void {
    for (const i of this.#all()) i.start();
  }

  stop(): void {
    this.stopLeading();
    for (const i of this.#all()) i.stop();
  }

  // Rendering waits for these; the replicas' reports only feed Ready (missing RBAC for them must not stop rendering).
  get synced(): boolean {
    return this.#all().every((i) => i === this.#reports || i.synced);
  }

  waitForSync(): Promise<void> {
    return Promise.all(this.#all().map((i) => (i === this.#reports ? undefined : i.waitForSync()))).then(() => undefined);
  }

  /**
   * This replica won the lease: start the worker. `resumed`: the lease stayed ours through a break
   * (an API-server outage), so what this replica knows of its own writes and of the revisions it
   * rendered still holds; otherwise another replica may have written meanwhile and only the caches
   * tell the truth.
   */
  startLeading(resumed = false): void {
    if (this.#leading) return;
    if (!resumed) {
      this.#written.clear();
      this.#statusSeen.clear();
      this.#served.reset();
      this.#lastPass = undefined;
    }
    this.#leading = true;
    this.#term++;
    const metrics = this.#opts.metrics;
    const queue = new WorkQueue<string>({ backoff: { baseMs: 200, maxMs: 30_000 }, onDepth: (d) => metrics.queueDepth.set(d) });
    this.#queue = queue;
    void this.#work(queue);
    queue.add(this.#opts.namespace);
    this.#resync = setInterval(() => queue.add(this.#opts.namespace), this.#opts.resyncMs);
    this.#resync.unref();
  }

  /** The lease is lost: stop writing at once. */
  stopLeading(): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#term++;
    clearInterval(this.#resync);
    clearTimeout(this.#expiry);
    this.#queue?.shutDown();
    this.#queue = undefined;
    // What we know of our own writes is dropped when the next term starts, unless it resumes this one.
  }

  #enqueue(): void {
    this.#queue?.add(this.#opts.namespace);
  }

  /**
   * A rendered object changed. Our own write coming back through the watch (the object as the last
   * render made it) needs no pass: each edit writes a part and the index, and each echo used to cost
   * a pass over every resource. Anything else (a deletion, an edit by hand, another replica's write)
   * is judged by a pass.
   */
  #onOutputEvent(kind: AppliedObject['kind'], type: 'add' | 'update' | 'delete', obj: KubernetesObject): void {
    if (type !== 'delete' && this.#ownWrite(kind, obj)) return;
    this.#enqueue();
  }

  /** Whether `obj` is, in every way a write would change, what the last render wrote under its name. */
  #ownWrite(kind: AppliedObject['kind'], obj: KubernetesObject): boolean {
    const out = this.#lastRender?.out;
    const name = obj.metadata?.name;
    if (!out || !name || obj.metadata?.namespace !== out.index.metadata.namespace) return false;
    const rendered = [out.index, ...out.parts, ...out.sourceParts, ...out.secrets].find((o) => o.metadata.name === name && o.kind === kind);
    return rendered !== undefined && sameAsLive(rendered, obj as RawObject);
  }

  #inputChanged(): void {
    this.#inputEvents++;
    this.#enqueue();
  }

  #onResourceEvent(type: 'add' | 'update' | 'delete', obj: KubernetesObject): void {
    const uid = obj.metadata?.uid ?? `${obj.metadata?.namespace}/${obj.metadata?.name}`;
    if (type === 'delete') {
      this.#generations.delete(uid);
      this.#written.delete(uid);
      this.#statusSeen.delete(uid);
      this.#served.forget(uid);
    } else {
      // Our own status writes change resourceVersion but not generation: nothing to render.
      const generation = obj.metadata?.generation;
      if (type === 'update' && this.#generations.has(uid) && this.#generations.get(uid) === generation && !obj.metadata?.deletionTimestamp) return;
      this.#generations.set(uid, generation);
    }
    this.#inputChanged();
  }

  async #work(queue: WorkQueue<string>): Promise<void> {
    const { metrics } = this.#opts;
    // Writes check this first: leadership lost (or lost and regained: a new worker took over) stops them.
    const term = this.#term;
    const holdsLease = this.#opts.holdsLease ?? (() => true);
    const guard = () => {
      if (!this.#leading || this.#term !== term || !holdsLease()) throw new NotLeaderError('not the leader');
    };
    for (;;) {
      const item = await queue.get();
      if (item === undefined) return;
      const stop = metrics.duration.startTimer();
      try {
        const result = item.endsWith(STATUS_PASS) ? await this.#statusPass(guard) : await this.reconcile(item, guard);
        if (result === 'requeue') {
          metrics.reconciles.inc({ result: 'requeue' });
          queue.addAfter(item, 500);
        } else {
          metrics.reconciles.inc({ result: 'success' });
          queue.forget(item);
        }
      } catch (err) {
        if (err instanceof NotLeaderError) {
          // A late renewal rather than a lost lease: try again shortly (a shut-down queue ignores this).
          log.info('reconcile stopped: the lease is not confirmed');
          queue.addAfter(item, 500);
        } else {
          metrics.reconciles.inc({ result: 'error' });
          const delay = queue.addRateLimited(item);
          log.warn('reconcile failed, retrying', { namespace: item, error: (err as Error).message, retry_in_ms: delay });
        }
      } finally {
        stop();
        queue.done(item);
      }
    }
  }

  /** Render everything into `target` and update every CR's status. */
  async reconcile(target: string, guard: () => void): Promise<'done' | 'requeue'> {
    if (!this.synced) return 'requeue';
    const { metrics } = this.#opts;
    const resources = this.#resources();
    const secrets = this.#secretLookup();
    // Nothing the render reads has changed (a resync, the informers listing again after an outage,
    // our own writes coming back): the last desired state stands, and so does what was written.
    const events = this.#inputEvents;
    const last = this.#lastDesired;
    let desired: DesiredState;
    if (last?.events === events) desired = last.desired;
    else {
      const lines = this.#resourceLines(resources);
      const fingerprint = { lines, secrets: this.#translations.secretsKey(secrets) };
      if (last && sameFingerprint(last.fingerprint, fingerprint)) {
        desired = last.desired;
        last.events = events;
      } else {
        this.#translations.retain(resources);
        desired = desiredState(resources, secrets, undefined, (cr) => this.#translations.translate(cr, secrets), this.#checkMemo);
        // The Secrets' part taken again: translating may have read Secrets the last pass did not.
        this.#lastDesired = { fingerprint: { lines, secrets: this.#translations.secretsKey(secrets) }, events, desired };
        this.#countResources(resources, desired);
      }
    }
    for (const w of desired.warnings) log.debug('rendered configuration warning', { warning: w });

    let outcome: RenderOutcome;
    let failure: Error | undefined;
    const hold = this.#holdDecision(target, resources, desired);
    if (desired.unattributed.length) {
      metrics.errors.inc({ stage: 'render' });
      outcome = { ok: false, message: `The combined configuration is invalid: ${desired.unattributed.join('; ')}` };
      log.error('rendered configuration is invalid; keeping the last one', { problems: desired.unattributed });
    } else if (hold.reason) {
      outcome = {
        ok: false,
        held: true,
        message:
          `The proxies keep serving the last good configuration: this change was not rendered because ${hold.reason} (${describeLost(hold.lost)}). ` +
          'Fix the references named in those resources\' Accepted conditions (e.g. restore the Secret), or delete the resources to remove them on purpose.',
      };
      log.error('render held: it would remove most of the served configuration; keeping the last one', { reason: hold.reason, lost: hold.lost.slice(0, 20) });
    } else {
      try {
        const written = await this.#write(target, desired, guard);
        this.#served.rendered(`${written.revision}/${written.secretChecksum}`);
        outcome = { ok: true, revision: written.revision };
      } catch (err) {
        if (err instanceof NotLeaderError) throw err;
        metrics.errors.inc({ stage: 'apply' });
        failure = err as Error;
        outcome = { ok: false, message: `Writing the rendered configuration failed: ${failure.message}` };
      }
    }
    metrics.held.set(!outcome.ok && outcome.held ? 1 : 0);
    const index = { apiVersion: 'v1', kind: 'ConfigMap', namespace: target, name: INDEX_NAME };
    // Best effort: the API server may be what failed.
    const eventFailed = () => metrics.errors.inc({ stage: 'event' });
    if (outcome.ok) {
      await this.#opts.events.clear(index, 'The rendered configuration is written again.').catch(eventFailed);
    } else {
      guard();
      await this.#opts.events.warn(index, outcome.held ? 'RenderHeld' : 'RenderFailed', outcome.message, 'Render').catch(eventFailed);
    }
    const pass: LastPass = { outcome, verdicts: desired.verdicts, generations: new Map(), ...clientIds(desired.input.sources) };
    for (const cr of resources) {
      if (!cr.metadata.uid) continue;
      pass.generations.set(cr.metadata.uid, cr.metadata.generation);
      if (outcome.ok && desired.verdicts.get(refOf(cr))?.accepted) this.#served.includes(cr.metadata.uid, cr.metadata.generation);
    }
    this.#lastPass = pass;
    await this.#writeStatuses(resources, pass, guard, () => this.#queue?.has(target) === true);
    if (failure) throw failure;
    // Once written, before any real edit needs them: not while a pass waits (a later one rehearses).
    if (!this.#rehearsed && outcome.ok && this.#queue?.has(target) !== true) this.#rehearse(target, resources, secrets);
    return 'done';
  }

  /** A few edits rehearsed after the first render (rehearse.ts), so that the first real ones find their paths compiled. */
  #rehearse(target: string, resources: readonly CustomResource[], secrets: VersionedSecretLookup): void {
    this.#rehearsed = true;
    const started = Date.now();
    try {
      const translate = (cr: CustomResource) => this.#translations.translate(cr, secrets);
      const render = (d: DesiredState) => {
        renderOutput(d.input, { namespace: target, maxPartBytes: this.#opts.maxPartBytes, indexUid: this.#lastRender?.indexUid, textCache: this.#texts, memo: this.#renderMemo });
      };
      const edits = rehearseEdits(resources, secrets, translate, this.#checkMemo, render);
      log.debug('edits rehearsed', { edits, ms: Date.now() - started });
    } catch (err) {
      log.warn('rehearsing edits failed', { error: (err as Error).message });
    }
  }

  /** A replica's report changed (or one expired): rewrite the statuses that depend on it. */
  async #statusPass(guard: () => void): Promise<'done' | 'requeue'> {
    const pass = this.#lastPass;
    // Before the first render there is nothing to count; a failed or held one does not depend on replicas.
    if (!pass || !pass.outcome.ok || !this.#reports) return 'done';
    // A CR changed since the last render waits for it (a full pass is queued for it).
    const resources = this.#resources().filter((cr) => !cr.metadata.uid || pass.generations.get(cr.metadata.uid) === cr.metadata.generation);
    await this.#writeStatuses(resources, pass, guard, () => this.#queue?.has(this.#opts.namespace) === true);
    return 'done';
  }

  /**
   * `shared`: this pass's views by kind and the render that first included the CR: every CR of a kind
   * included by the same render has the same view (most of thousands of them), worked out once.
   */
  #servedView(cr: CustomResource, pass: LastPass, live: ReturnType<ServedTracker['live']>, shared?: SharedViews): ServedView | undefined {
    if (!this.#reports) return undefined;
    const plain = cr.kind !== 'MCPClient' && cr.kind !== 'Webhook' && cr.kind !== 'Provider';
    // By kind, then by the render that first included it (no key string per resource: thousands per pass).
    let byRender: Map<number | undefined, ServedView> | undefined;
    let included: number | undefined;
    if (plain && shared) {
      byRender = shared.get(cr.kind);
      if (!byRender) shared.set(cr.kind, (byRender = new Map()));
      included = this.#served.included(cr.metadata.uid, cr.metadata.generation);
      const known = byRender.get(included);
      if (known) return known;
    }
    const info = KIND_BY_NAME.get(cr.kind) as KindInfo;
    const view: ServedView = { kind: cr.kind, count: this.#served.count(cr.metadata.uid, cr.metadata.generation, info.section, live) };
    byRender?.set(included, view);
    if (cr.kind === 'MCPClient') {
      const id = pass.mcpIds.get(refOf(cr));
      view.mcp = id ? this.#served.mcp(id, live) : [];
    } else if (cr.kind === 'Webhook') {
      const id = pass.webhookIds.get(refOf(cr));
      view.givenUp = id ? this.#served.givenUp(id, live) : [];
    } else if (cr.kind === 'Provider') {
      // Only the replicas can tell whether an InferencePool gives them a server.
      const name = poolProviderName(cr);
      if (name) view.pools = this.#served.pools(name, live);
    }
    return view;
  }

  /** Whether writing `desired` would empty most of what the proxies serve by accident (safety.ts). */
  #holdDecision(target: string, resources: readonly CustomResource[], desired: DesiredState): HoldDecision {
    const raw = (this.#output.configMaps.get(INDEX_NAME, target) as RawObject | undefined)?.data?.[INDEX_KEY];
    let live: ConfigIndex | undefined;
    if (raw !== undefined && this.#liveIndex?.raw === raw) live = this.#liveIndex.index;
    else {
      try {
        const parsed = raw ? parseIndex(raw) : undefined;
        // A sharded index's sources come from its parts (a part still being written: judged next time).
        const read = parsed && readSources(parsed, (name) => (this.#output.configMaps.get(name, target) as RawObject | undefined)?.data);
        live = read?.state === 'complete' ? read.index : undefined;
      } catch {
        live = undefined; // not ours to judge: the next write replaces it
      }
      // The index names its source parts by checksum: the same index text, the same sources.
      if (raw !== undefined && live) this.#liveIndex = { raw, index: live };
    }
    // Made only when asked (most passes lose nothing and never ask): thousands of names otherwise.
    let existing: Set<string> | undefined;
    const exists = (source: string) => (existing ??= new Set(resources.filter((r) => !r.metadata.deletionTimestamp).map(crRef))).has(source);
    return holdDecision(live && hasEntries(live.sources) ? live : undefined, desired.input, exists, (source) => desired.verdicts.get(source)?.reason);
  }

  /** Every CR's identity, generation and deletion, one line each: the resources' part of a Fingerprint. */
  #resourceLines(resources: readonly CustomResource[]): string[] {
    const lines: string[] = [];
    for (const cr of resources) {
      // Once per object the informer holds (an update is a new object): thousands per render otherwise.
      let line = this.#fingerprintLines.get(cr);
      if (line === undefined) {
        line = `${cr.kind}/${cr.metadata.namespace}/${cr.metadata.name}/${cr.metadata.uid}:${cr.metadata.generation}:${cr.metadata.creationTimestamp ?? ''}:${cr.metadata.deletionTimestamp ? 'x' : ''}`;
        this.#fingerprintLines.set(cr, line);
      }
      lines.push(line);
    }
    return lines;
  }

  /** Each internal form's line of a Fingerprint. */
  readonly #fingerprintLines = new WeakMap<CustomResource, string>();

  /** Each cached object's internal form, made once per object the informer holds (an update is a new object). */
  readonly #internalForms = new WeakMap<object, CustomResource>();

  #internal(o: KubernetesObject, info: KindInfo): CustomResource {
    let cr = this.#internalForms.get(o);
    if (!cr) {
      cr = toInternal(o as unknown as Record<string, unknown>, info.kind) as unknown as CustomResource;
      this.#internalForms.set(o, cr);
    }
    return cr;
  }

  #resources(): CustomResource[] {
    const out: CustomResource[] = [];
    for (const { info, informer } of this.#crInformers) {
      for (const o of informer.list()) out.push(this.#internal(o, info));
    }
    return out;
  }

  #secretLookup(): VersionedSecretLookup {
    const informers = this.#secretInformers;
    const find = (namespace: string, name: string) => {
      for (const informer of informers.get('*') ?? informers.get(namespace) ?? []) {
        const secret = informer.get(name, namespace) as RawObject | undefined;
        if (secret) return secret;
      }
      return undefined;
    };
    // Asked for the same Secret once per resource that reads it (thousands) in a pass: looked up once.
    // A lookup serves one pass; a change meanwhile is an event, and the next pass takes a new lookup.
    const versions = new Map<string, Map<string, string | undefined>>();
    const version = (namespace: string, name: string): string | undefined => {
      let byName = versions.get(namespace);
      if (!byName) versions.set(namespace, (byName = new Map()));
      if (byName.has(name)) return byName.get(name);
      const v = find(namespace, name)?.metadata?.resourceVersion;
      byName.set(name, v);
      return v;
    };
    const selection = this.#opts.secrets ?? {};
    const hint = selection.names?.length
      ? `the operator reads only the Secrets named ${selection.names.join(', ')}`
      : selection.labelSelector
        ? `the operator reads only Secrets labelled ${selection.labelSelector}`
        : undefined;
    return {
      get(namespace, name) {
        const secret = find(namespace, name);
        // A Secret without data exists: its keys are missing, not the Secret.
        return secret ? (secret.data ?? {}) : undefined;
      },
      version,
      ...(hint ? { hint } : {}),
    };
  }

  #countResources(resources: readonly CustomResource[], desired: DesiredState): void {
    const counts = new Map<string, number>();
    for (const info of KINDS) for (const a of ['true', 'false']) counts.set(`${info.kind}|${a}`, 0);
    for (const r of resources) {
      const v = desired.verdicts.get(refOf(r));
      if (!v) continue;
      const key = `${r.kind}|${v.accepted}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counts) {
      const [kind, accepted] = key.split('|');
      this.#opts.metrics.resources.set({ kind, accepted }, n);
    }
  }

  /** Parts and Secret, then the index (the commit point), then stale parts. Returns what the index names. */
  async #write(target: string, desired: DesiredState, guard: () => void): Promise<{ revision: string; secretChecksum: string }> {
    const live = new Map<string, RawObject>();
    for (const o of this.#output.configMaps.list(target)) live.set(`ConfigMap/${o.metadata?.name}`, o);
    for (const o of this.#output.secrets.flatMap((i) => i.list(target))) live.set(`Secret/${o.metadata?.name}`, o);
    // Not yet in the cache (just created): parts rendered without an owner then still match the
    // live ones that have it (sameAsLive ignores owners it is not asked for), so nothing flaps.
    const uidBefore = live.get(`ConfigMap/${INDEX_NAME}`)?.metadata?.uid;
    const render = (indexUid: string | undefined): RenderedOutput => {
      const last = this.#lastRender;
      if (last && last.input === desired.input && last.indexUid === indexUid && last.out.index.metadata.namespace === target) return last.out;
      const out = renderOutput(desired.input, { namespace: target, maxPartBytes: this.#opts.maxPartBytes, indexUid, textCache: this.#texts, memo: this.#renderMemo });
      this.#lastRender = { input: desired.input, indexUid, out };
      return out;
    };

    const out = render(uidBefore);
    // Only the objects whose content changed are written: an edit to one resource is its part and the index.
    for (const part of [...out.parts, ...out.sourceParts]) await this.#applyIfChanged(part, live, guard);
    for (const secret of out.secrets) await this.#applyIfChanged(secret, live, guard);
    await this.#applyIfChanged(out.index, live, guard);
    // The index as written, with the sources it was rendered from: when it comes back through the
    // watch, the hold check need not read its sources parts again (they are the whole list).
    const written = out.index.data[INDEX_KEY];
    if (this.#liveIndex?.raw !== written) this.#liveIndex = { raw: written, index: { ...parseIndex(written), managed: desired.input.managed as Record<string, string[]>, sources: desired.input.sources as Record<string, string> } };
    const uid = live.get(`ConfigMap/${INDEX_NAME}`)?.metadata?.uid;
    // First render (or the index was recreated): now the parts can name their owner.
    if (uid && uid !== uidBefore) {
      const owned = render(uid);
      for (const part of [...owned.parts, ...owned.sourceParts]) await this.#applyIfChanged(part, live, guard);
      for (const secret of owned.secrets) await this.#applyIfChanged(secret, live, guard);
    }

    // The index no longer names parts (or Secret shards) beyond the new count: proxies never read them again.
    for (const [key, obj] of live) {
      const name = obj.metadata?.name ?? '';
      const n = partNumber(name);
      const s = sourcesPartNumber(name);
      const staleSecret = key.startsWith('Secret/') && SECRET_SHARD_NAMES.indexOf(name) >= out.secrets.length;
      const stalePart = key.startsWith('ConfigMap/') && ((n !== undefined && n >= out.parts.length) || (s !== undefined && s >= out.sourceParts.length));
      if (!staleSecret && !stalePart) continue;
      guard();
      try {
        await this.#opts.client.delete(resourcePath('v1', staleSecret ? 'secrets' : 'configmaps', target, name), { uid: obj.metadata?.uid });
        this.#opts.metrics.applies.inc({ kind: staleSecret ? 'Secret' : 'ConfigMap', action: 'delete' });
        log.info('deleted stale part', { namespace: target, name });
      } catch (err) {
        // Gone already, or replaced by a newer object of that name (uid precondition): fine.
        if (!isNotFound(err) && !(err instanceof KubeApiError && err.statusCode === 409)) throw err;
      }
    }
    log.debug('configuration rendered', { namespace: target, revision: out.revision, parts: out.parts.length });
    return { revision: out.revision, secretChecksum: out.indexDocument.secretChecksum };
  }

  async #applyIfChanged(obj: AppliedObject, live: Map<string, RawObject>, guard: () => void): Promise<void> {
    const key = `${obj.kind}/${obj.metadata.name}`;
    if (sameAsLive(obj, live.get(key))) return;
    guard();
    const plural = obj.kind === 'Secret' ? 'secrets' : 'configmaps';
    const applied = await this.#opts.client.apply<RawObject>(resourcePath('v1', plural, obj.metadata.namespace, obj.metadata.name), obj, FIELD_MANAGER);
    this.#opts.metrics.applies.inc({ kind: obj.kind, action: 'apply' });
    live.set(key, applied);
  }

  /**
   * The CR's status as last written: the informer's copy, unless our own later write has not come
   * back through the watch yet (then the cache is stale, and comparing against it would write again
   * with a new lastTransitionTime).
   */
  #knownStatus(cr: CustomResource): ResourceStatus | undefined {
    const cached = currentStatus(cr);
    const written = cr.metadata.uid ? this.#written.get(cr.metadata.uid) : undefined;
    if (!written) return cached;
    if (!statusChanged(cached, written)) {
      this.#written.delete(cr.metadata.uid as string); // caught up
      return cached;
    }
    return written;
  }

  /** `renderWaiting`: a newer full pass is queued (it rewrites every status): stop early then. */
  async #writeStatuses(resources: readonly CustomResource[], pass: LastPass, guard: () => void, renderWaiting: () => boolean): Promise<void> {
    const { client, events, metrics } = this.#opts;
    let writes = 0;
    let yielded = false;
    const { outcome } = pass;
    const now = new Date();
    const live = this.#served.live(now.getTime());
    this.#liveKey = live.map((r) => r.identity).join(',');
    if (this.#reports) metrics.servedReplicas.set(live.length);
    let firstError: Error | undefined;
    const shared: SharedViews = new Map();
    // What a status reads of the render's outcome (not its revision, which changes with every render).
    const rendered = outcomeText(outcome);
    // First, at once, the resources with anything to look at: most of thousands have the same inputs
    // as last time, and are passed over without a turn in the pool.
    const todo: { cr: CustomResource; ref: string; verdict: Verdict; served: ServedView | undefined; uid: string | undefined; inputs: string | undefined }[] = [];
    for (const cr of resources) {
      const ref = refOf(cr);
      const verdict = pass.verdicts.get(ref);
      if (!verdict) continue; // being deleted
      const served = this.#servedView(cr, pass, live, shared);
      // The same inputs as last time, against the same status, with nothing of ours in flight: that
      // pass found nothing to write (or its write came back), so this one would not either.
      const uid = cr.metadata.uid;
      const seen = uid ? this.#statusSeen.get(uid) : undefined;
      const unchanged = uid !== undefined && seen !== undefined && seen.status === cr.status && !this.#written.has(uid);
      // The same verdict object and render outcome (unchanged resources keep their verdict's object): no key to build.
      if (unchanged && seen.verdict === verdict && seen.rendered === rendered && seen.generation === cr.metadata.generation && seen.served === (served ? viewText(served) : '')) continue;
      const inputs = uid ? statusInputs(cr.metadata.generation, verdict, rendered, served) : undefined;
      if (unchanged && seen.inputs === inputs) continue;
      todo.push({ cr, ref, verdict, served, uid, inputs });
    }
    // Bounded concurrency: one round trip per changed status, many in flight.
    await forEachLimited(todo, this.#opts.statusConcurrency ?? 32, async ({ cr, ref, verdict, served, uid, inputs }) => {
      if (yielded || (writes >= MIN_STATUS_WRITES_BEFORE_YIELD && renderWaiting())) {
        yielded = true;
        return;
      }
      let wrote = false;
      const conditions = desiredConditions(verdict, outcome, served);
      const current = this.#knownStatus(cr);
      const next = nextStatus(current, conditions, cr.metadata.generation, now, statusFields(conditions, served));
      const target = { apiVersion: STORAGE_API_VERSION, kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name, uid: cr.metadata.uid };
      try {
        if (statusChanged(current, next)) {
          guard();
          const plural = KINDS.find((k) => k.kind === cr.kind)?.plural as string;
          await client.mergePatch(`${resourcePath(STORAGE_API_VERSION, plural, cr.metadata.namespace, cr.metadata.name)}/status`, { status: statusPatch(current, next) }, FIELD_MANAGER);
          metrics.statusWrites.inc();
          writes++;
          wrote = true;
          if (cr.metadata.uid) this.#written.set(cr.metadata.uid, next);
        }
      } catch (err) {
        if (err instanceof NotLeaderError) throw err;
        if (isNotFound(err)) return; // deleted meanwhile
        metrics.errors.inc({ stage: 'status' });
        firstError ??= err as Error;
        return;
      }
      // A refused, degraded or unserved CR gets its own Event (best effort); a failed write is one Event on the index, not one per CR.
      try {
        const valid = verdict.accepted && verdict.reason === 'Valid';
        const problem = valid ? servedProblem(conditions) : { reason: verdict.reason, note: verdict.message, action: 'Validate' };
        guard();
        if (!problem) await events.clear(target);
        else if (await events.warn(target, problem.reason, `${ref}: ${problem.note}`, problem.action)) {
          log.warn(valid ? 'resource not served' : verdict.accepted ? 'resource degraded' : 'resource refused', { resource: ref, reason: problem.reason, message: problem.note });
        }
        if (uid && inputs !== undefined && !wrote) this.#statusSeen.set(uid, { inputs, status: cr.status, verdict, rendered, generation: cr.metadata.generation, served: served ? viewText(served) : '' });
      } catch (err) {
        if (err instanceof NotLeaderError) throw err;
        metrics.errors.inc({ stage: 'event' });
        log.warn('recording an event failed', { resource: ref, error: (err as Error).message });
      }
    });
    if (yielded) log.debug('status writes yield to a newer render', { written: writes });
    if (firstError) throw firstError;
  }
}

/** Whether applying `desired` would change the live object (data, labels, our owner reference). */
export function sameAsLive(desired: AppliedObject, live: RawObject | undefined): boolean {
  if (!live) return false;
  const data = live.data ?? {};
  const want = desired.data;
  const keys = Object.keys(want);
  if (keys.length !== Object.keys(data).length || keys.some((k) => data[k] !== want[k])) return false;
  const labels = live.metadata?.labels ?? {};
  if (Object.entries(desired.metadata.labels).some(([k, v]) => labels[k] !== v)) return false;
  const liveOwners = new Set((live.metadata?.ownerReferences ?? []).map((o) => o.uid));
  const wantOwners = desired.metadata.ownerReferences ?? [];
  return wantOwners.every((o) => liveOwners.has(o.uid));
}

/**
 * What the desired state depends on: every CR's identity, generation and deletion, and the version
 * of every Secret the translations read (not every Secret: our own rendered ones change on each write).
 */
interface Fingerprint {
  lines: readonly string[];
  secrets: string;
}

/** Lines are kept per object, so an unchanged resource's line is the very same string: mostly a pointer compare. */
function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  if (a.secrets !== b.secrets || a.lines.length !== b.lines.length) return false;
  for (let i = 0; i < a.lines.length; i++) if (a.lines[i] !== b.lines[i]) return false;
  return true;
}

/** Whether a map has any entry, without listing thousands of keys. */
function hasEntries(o: Readonly<Record<string, unknown>>): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

const KIND_BY_NAME = new Map(KINDS.map((k) => [k.kind, k]));

/** A served view's text, once per view (views are shared by the CRs of a pass: #servedView). */
const viewTexts = new WeakMap<ServedView, string>();
const viewText = (served: ServedView): string => {
  let text = viewTexts.get(served);
  if (text === undefined) viewTexts.set(served, (text = JSON.stringify(served)));
  return text;
};

/** What a CR's status was last found up to date against; the objects let a pass skip it without building `inputs`. */
interface StatusSeen {
  inputs: string;
  status: unknown;
  verdict: Verdict;
  /** outcomeText of the render it was seen with. */
  rendered: string;
  generation: number | undefined;
  served: string;
}

/** A pass's served views, by kind and then by the render that first included the resource. */
type SharedViews = Map<string, Map<number | undefined, ServedView>>;

/** What a status depends on of a render's outcome: whether it was written, or why not (no revision: desiredConditions never reads it). */
const outcomeText = (outcome: RenderOutcome): string => (outcome.ok ? 'ok' : `${outcome.held ? 'held' : 'failed'}:${outcome.message}`);

/** The MCP client and webhook ids of a render's sources, by resource: once per sources object (kept while every entry is the same). */
const clientIdsOf = new WeakMap<object, Pick<LastPass, 'mcpIds' | 'webhookIds'>>();
function clientIds(sources: Readonly<Record<string, string>>): Pick<LastPass, 'mcpIds' | 'webhookIds'> {
  let ids = clientIdsOf.get(sources);
  if (ids) return ids;
  ids = { mcpIds: new Map(), webhookIds: new Map() };
  for (const [key, ref] of Object.entries(sources)) {
    if (key.startsWith('mcp_clients/')) ids.mcpIds.set(ref, key.slice('mcp_clients/'.length));
    else if (key.startsWith('webhooks/')) ids.webhookIds.set(ref, key.slice('webhooks/'.length));
  }
  clientIdsOf.set(sources, ids);
  return ids;
}

/** Everything a CR's desired status is computed from (besides the status it has), as one string. */
function statusInputs(generation: number | undefined, verdict: Verdict, rendered: string, served: ServedView | undefined): string {
  return `${generation}|${verdict.accepted}|${verdict.reason}|${verdict.message}|${rendered}|${served ? viewText(served) : ''}`;
}
