// Which proxy replicas serve which custom resource, from the replicas' own reports (one Lease per
// serving process, proxy/src/state/served-contract.ts). A replica is live while its Lease is
// renewed within its duration (timed by this process's clock from when a renewal was seen, so clock
// skew between nodes does not matter). A replica serves a CR when it acts on the CR's section and
// every revision it serves is one this operator rendered at or after the first render that
// included the CR's current generation. Revisions are content hashes and carry no order, so each
// render is numbered here; revisions rendered before this process led are unknown and count as not
// serving the CR until the replica loads a current one (conservative: Ready never claims too much).
import type { KubernetesObject } from '@kubernetes/client-node';
import { SERVED_ANNOTATION, parseServedReport, type ServedMcpClient, type ServedPool, type ServedReport, type ServedWebhook } from '../../proxy/src/contract.ts';

export interface Replica {
  identity: string;
  report: ServedReport;
  /** This process's clock: when the lease runs out unless renewed. */
  expiresAt: number;
}

export interface ServedCount {
  /** Live replicas. */
  live: number;
  /** Live replicas that act on the CR's section. */
  implementing: number;
  /** Live replicas serving the CR's current generation. */
  serving: number;
  /** Up to a few live replicas that do not serve it yet. */
  waiting: string[];
  /** The first waiting replica that says why it cannot load the newest rendering: `name: why`. */
  problem?: string;
}

interface LeaseObject extends KubernetesObject {
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | Date | null };
}

/** How many render numbers are remembered: a replica serving an older one counts as not serving. */
const REMEMBERED_REVISIONS = 256;

export class ServedTracker {
  readonly #replicas = new Map<string, Replica & { renewTime: string; reportText: string; durationMs: number }>();
  readonly #revisionSeq = new Map<string, number>();
  #seq = 0;
  #current: string | undefined;
  /** By CR uid: the generation last seen and the first render number that included it. */
  readonly #first = new Map<string, { generation: number | undefined; seq: number }>();
  /** Since when the reports cannot be watched (an API-server outage), if they cannot. */
  #blindSince: number | undefined;

  /**
   * The reports' watch failed: renewals made meanwhile cannot be seen, so a replica live then is not
   * taken for gone while this lasts. Otherwise, once the API server is back, every resource would turn
   * Ready=False (and each status be written twice) before the replicas' renewals are seen again.
   */
  blind(now = Date.now()): void {
    this.#blindSince ??= now;
  }

  /** Watching again (the reports listed): each replica live when the watch broke has a lease duration from now to show it renews. */
  seeing(now = Date.now()): void {
    const since = this.#blindSince;
    if (since === undefined) return;
    this.#blindSince = undefined;
    for (const r of this.#replicas.values()) if (r.expiresAt > since) r.expiresAt = Math.max(r.expiresAt, now + r.durationMs);
  }

  /** A Lease event. Returns whether the served picture changed (a reason to recompute statuses). */
  observe(type: 'add' | 'update' | 'delete', obj: KubernetesObject, now = Date.now()): boolean {
    const lease = obj as LeaseObject;
    const name = lease.metadata?.name;
    if (!name) return false;
    const before = this.#replicas.get(name);
    if (type === 'delete') {
      this.#replicas.delete(name);
      return before !== undefined && before.expiresAt > now;
    }
    const reportText = lease.metadata?.annotations?.[SERVED_ANNOTATION] ?? '';
    const report = parseServedReport(reportText);
    if (!report) {
      this.#replicas.delete(name);
      return before !== undefined;
    }
    const durationMs = Math.max(1, lease.spec?.leaseDurationSeconds ?? 15) * 1000;
    const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : '';
    let expiresAt: number;
    if (before && before.renewTime === renewTime) expiresAt = before.expiresAt;
    else if (before) expiresAt = now + durationMs;
    else {
      // First sight (e.g. this operator just started): a lease renewed long ago is already dead.
      const renewed = renewTime ? Date.parse(renewTime) : 0;
      expiresAt = Math.min(now, Number.isNaN(renewed) ? 0 : renewed) + durationMs;
    }
    this.#replicas.set(name, { identity: name, report, expiresAt, renewTime, reportText, durationMs });
    const wasLive = before !== undefined && before.expiresAt > now;
    return !wasLive || before.reportText !== reportText;
  }

  live(now = Date.now()): Replica[] {
    // While blind, a replica live when the watch broke counts as live still.
    const cutoff = this.#blindSince === undefined ? now : Math.min(now, this.#blindSince);
    return [...this.#replicas.values()].filter((r) => r.expiresAt > cutoff).sort((a, b) => (a.identity < b.identity ? -1 : 1));
  }

  /** Identities of the live replicas, to notice one expiring. */
  liveKey(now = Date.now()): string {
    return this.live(now)
      .map((r) => r.identity)
      .join(',');
  }

  /** When the next live replica expires unless renewed. */
  nextExpiry(now = Date.now()): number | undefined {
    if (this.#blindSince !== undefined) return undefined;
    let next: number | undefined;
    for (const r of this.#replicas.values()) if (r.expiresAt > now && (next === undefined || r.expiresAt < next)) next = r.expiresAt;
    return next;
  }

  /** A render succeeded and `revisionKey` (`revision/secretChecksum`) is what the index names now. */
  rendered(revisionKey: string): void {
    if (revisionKey === this.#current) return;
    this.#current = revisionKey;
    this.#revisionSeq.delete(revisionKey);
    this.#revisionSeq.set(revisionKey, ++this.#seq);
    while (this.#revisionSeq.size > REMEMBERED_REVISIONS) this.#revisionSeq.delete(this.#revisionSeq.keys().next().value as string);
  }

  /** After a successful render: the CR at `generation` is in the current revision (from now on if it is new). */
  includes(uid: string, generation: number | undefined): void {
    const seen = this.#first.get(uid);
    if (seen && seen.generation === generation) return;
    this.#first.set(uid, { generation, seq: this.#seq });
  }

  forget(uid: string): void {
    this.#first.delete(uid);
  }

  /** Leadership changed: render numbers start over, so what was learnt about CRs no longer applies. */
  reset(): void {
    this.#first.clear();
    this.#revisionSeq.clear();
    this.#current = undefined;
  }

  /** The render sequence number that first included the CR at `generation`, if one did. */
  included(uid: string | undefined, generation: number | undefined): number | undefined {
    const first = uid ? this.#first.get(uid) : undefined;
    return first && first.generation === generation ? first.seq : undefined;
  }

  /** `live`: this.live(now), taken once per pass. */
  count(uid: string | undefined, generation: number | undefined, section: string, live: readonly Replica[]): ServedCount {
    const first = uid ? this.#first.get(uid) : undefined;
    const included = first && first.generation === generation ? first.seq : undefined;
    let implementing = 0;
    let serving = 0;
    const waiting: string[] = [];
    let problem: string | undefined;
    for (const r of live) {
      if (!r.report.sections.includes(section)) continue;
      implementing++;
      const seq = r.report.revision ? this.#revisionSeq.get(`${r.report.revision}/${r.report.secretChecksum ?? ''}`) : undefined;
      if (included !== undefined && seq !== undefined && seq >= included) serving++;
      else {
        if (waiting.length < 3) waiting.push(r.identity);
        if (r.report.problem) problem ??= `${r.identity}: ${r.report.problem}`;
      }
    }
    return { live: live.length, implementing, serving, waiting, ...(problem ? { problem } : {}) };
  }

  /** Each live replica's view of one MCP client (by client id), where it reports one. */
  mcp(clientId: string, live: readonly Replica[]): { identity: string; client: ServedMcpClient }[] {
    const out: { identity: string; client: ServedMcpClient }[] = [];
    for (const r of live) {
      const client = r.report.mcp[clientId];
      if (client) out.push({ identity: r.identity, client });
    }
    return out;
  }

  /** The live replicas whose InferencePool for provider `name` gives them no server, with why. */
  pools(name: string, live: readonly Replica[]): { identity: string; pool: ServedPool }[] {
    const out: { identity: string; pool: ServedPool }[] = [];
    for (const r of live) {
      const pool = r.report.pools?.[name];
      if (pool) out.push({ identity: r.identity, pool });
    }
    return out;
  }

  /** The live replicas that gave up deliveries to webhook `id` lately. */
  givenUp(id: string, live: readonly Replica[]): { identity: string; webhook: ServedWebhook }[] {
    const out: { identity: string; webhook: ServedWebhook }[] = [];
    for (const r of live) {
      const webhook = r.report.webhooks?.[id];
      if (webhook) out.push({ identity: r.identity, webhook });
    }
    return out;
  }
}

/** The provider name of a Provider resource that names an InferencePool; undefined for any other. */
export function poolProviderName(cr: { metadata: { name: string }; spec?: unknown }): string | undefined {
  const spec = cr.spec && typeof cr.spec === 'object' ? (cr.spec as { name?: unknown; network_config?: { inference_pool?: unknown } }) : undefined;
  if (!spec?.network_config || typeof spec.network_config !== 'object' || spec.network_config.inference_pool === undefined) return undefined;
  return typeof spec.name === 'string' ? spec.name : cr.metadata.name;
}
