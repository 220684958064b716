// CR status: `Accepted` and `Ready` conditions with observedGeneration (and `Connected` for an
// MCPClient), plus a few flat fields for printer columns. Pure: the next status from the current
// one and the verdict, with lastTransitionTime moving only when a condition's status flips, so
// rewriting the same verdict changes nothing (and writes nothing).
import type { Condition, CustomResource } from './resources/kinds.ts';
import type { Verdict } from './resources/desired.ts';
import type { ServedCount } from './served.ts';
import { EXHAUSTED_WINDOW_MS, scrubError } from '../../proxy/src/contract.ts';

/** Flat fields beside the conditions (printer columns read them; no arrays). */
export interface StatusFields {
  /** The one reason to act on: the first condition that is not fine, else Ready's. */
  reason?: string;
  /** The message of the condition `reason` comes from: what to do about it (printer column Message). */
  message?: string;
  /** `serving/live` proxy replicas, e.g. `2/2`. */
  served?: string;
  servedReplicas?: number;
  /** Live proxy replicas (reporting what they serve). */
  replicas?: number;
  /** MCPClient: tools the server lists (from a connected replica). */
  toolCount?: number;
  /** MCPClient: the last connection error a replica reports, secrets scrubbed. */
  lastError?: string;
}

export const STATUS_FIELDS = ['reason', 'message', 'served', 'servedReplicas', 'replicas', 'toolCount', 'lastError'] as const satisfies readonly (keyof StatusFields)[];

export interface ResourceStatus extends StatusFields {
  observedGeneration?: number;
  conditions: Condition[];
}

export type DesiredCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** The outcome of writing the rendered configuration, for the Ready condition. */
export type RenderOutcome = { ok: true; revision: string } | { ok: false; message: string; held?: boolean };

/** What the proxies report for one CR (absent: Ready means rendered, `--ready-when rendered`). */
export interface ServedView {
  count: ServedCount;
  kind: string;
  /** MCPClient: each live replica's view of the client. */
  mcp?: { identity: string; client: { state: string; tools: number; error?: string } }[];
  /** Webhook: the live replicas that gave up deliveries to it lately. */
  givenUp?: { identity: string; webhook: { exhausted: number; error?: string } }[];
  /** Provider naming an InferencePool: the live replicas that find no server in it, with why. */
  pools?: { identity: string; pool: { problem: string } }[];
}

export function desiredConditions(verdict: Verdict, outcome: RenderOutcome, served?: ServedView): DesiredCondition[] {
  const accepted: DesiredCondition = {
    type: 'Accepted',
    status: verdict.accepted ? 'True' : 'False',
    reason: verdict.reason,
    message: truncate(verdict.message),
  };
  let ready: DesiredCondition;
  if (!outcome.ok && outcome.held) {
    // Nothing new is written: what the proxies serve is the last rendering, whatever this CR says now.
    ready = { type: 'Ready', status: 'False', reason: 'RenderHeld', message: truncate(outcome.message) };
  } else if (!verdict.accepted) {
    ready = { type: 'Ready', status: 'False', reason: 'NotAccepted', message: 'Not rendered: see the Accepted condition.' };
  } else if (outcome.ok && served) {
    ready = servedCondition(served);
  } else if (outcome.ok) {
    // No revision in the message: it changes with every CR, and would rewrite every status each time.
    ready = { type: 'Ready', status: 'True', reason: 'Rendered', message: 'Included in the configuration the proxies load.' };
  } else {
    ready = { type: 'Ready', status: 'False', reason: outcome.held ? 'RenderHeld' : 'RenderFailed', message: truncate(outcome.message) };
  }
  const out = [accepted, ready];
  if (served && served.kind === 'MCPClient') out.push(connectedCondition(verdict, served));
  if (served && served.kind === 'Webhook') out.push(deliveringCondition(verdict, served));
  if (served?.pools) out.push(poolCondition(verdict, served));
  return out;
}

const replicas = (n: number): string => `${n} proxy ${n === 1 ? 'replica' : 'replicas'}`;

/** Why a kind may have no replica acting on it. */
const NOT_IMPLEMENTED_HINT: Record<string, string> = {
  Webhook: ' (webhook deliveries need a logs store: chart values logsStore.*)',
  CachePolicy: ' (the response cache needs a vector store: chart values vectorStore.*)',
};

/** Ready from the replicas' reports: True only when every live replica serves this generation. */
function servedCondition({ count, kind }: ServedView): DesiredCondition {
  const waiting = count.waiting.length ? `; waiting for ${count.waiting.join(', ')}${count.live - count.serving > count.waiting.length ? ', ...' : ''}` : '';
  if (count.live === 0) {
    return { type: 'Ready', status: 'False', reason: 'NoReplicas', message: 'Rendered, but no proxy replica reports what it serves: none is running, or they cannot write their Lease (check the proxy Role).' };
  }
  if (count.implementing === 0) {
    return { type: 'Ready', status: 'False', reason: 'NotImplemented', message: `Rendered, but none of the ${replicas(count.live)} acts on ${kind} resources${NOT_IMPLEMENTED_HINT[kind] ?? ''}.` };
  }
  if (count.serving === count.live) return { type: 'Ready', status: 'True', reason: 'Served', message: count.live === 1 ? 'Served by the one live proxy replica.' : `Served by all ${replicas(count.live)}.` };
  if (count.serving === count.implementing) {
    return { type: 'Ready', status: 'False', reason: 'PartiallyImplemented', message: `Served by ${count.serving} of ${replicas(count.live)}; the others do not act on ${kind} resources${NOT_IMPLEMENTED_HINT[kind] ?? ''}.` };
  }
  // A replica that rejected the newest rendering will not catch up by itself: say so, and why.
  if (count.problem) {
    return { type: 'Ready', status: 'False', reason: 'RejectedByProxy', message: truncate(`Rendered; served by ${count.serving} of ${replicas(count.live)}; ${scrubError(count.problem)}`) };
  }
  return { type: 'Ready', status: 'False', reason: 'Propagating', message: `Rendered; served by ${count.serving} of ${replicas(count.live)}${waiting}.` };
}

function connectedCondition(verdict: Verdict, { count, mcp = [] }: ServedView): DesiredCondition {
  if (!verdict.accepted) return { type: 'Connected', status: 'False', reason: 'NotAccepted', message: 'Not rendered: see the Accepted condition.' };
  const failed = mcp.find((m) => m.client.state === 'error');
  if (failed) return { type: 'Connected', status: 'False', reason: 'ConnectionFailed', message: truncate(`${failed.identity}: ${failed.client.error ?? 'connection failed'}`) };
  const connected = mcp.filter((m) => m.client.state === 'connected').length;
  if (!mcp.length) return { type: 'Connected', status: 'Unknown', reason: 'NotReported', message: 'No proxy replica reports this client yet.' };
  if (connected === count.live) return { type: 'Connected', status: 'True', reason: 'Connected', message: count.live === 1 ? 'Connected on the one live proxy replica.' : `Connected on all ${replicas(count.live)}.` };
  return { type: 'Connected', status: 'Unknown', reason: 'Connecting', message: `Connected on ${connected} of ${replicas(count.live)}.` };
}

/**
 * Whether deliveries get through: False while a replica reports one given up after its last retry
 * within the window (EXHAUSTED_WINDOW_MS). No count in the message: the Event stays one series.
 */
function deliveringCondition(verdict: Verdict, { givenUp = [] }: ServedView): DesiredCondition {
  if (!verdict.accepted) return { type: 'Delivering', status: 'False', reason: 'NotAccepted', message: 'Not rendered: see the Accepted condition.' };
  const first = givenUp[0];
  if (first) {
    const minutes = Math.round(EXHAUSTED_WINDOW_MS / 60_000);
    const error = first.webhook.error ? `; last error: ${first.webhook.error}` : '';
    return { type: 'Delivering', status: 'False', reason: 'DeliveriesExhausted', message: truncate(`${first.identity}: deliveries were given up after their last retry within the last ${minutes} minutes${error}`) };
  }
  return { type: 'Delivering', status: 'True', reason: 'Delivering', message: 'No delivery was given up lately.' };
}

/**
 * A Provider's InferencePool (network_config.inference_pool): False while a replica finds no server
 * in it (the pool does not exist, cannot be read, or has no ready endpoint), as that replica says.
 */
function poolCondition(verdict: Verdict, { pools = [] }: ServedView): DesiredCondition {
  if (!verdict.accepted) return { type: 'InferencePool', status: 'False', reason: 'NotAccepted', message: 'Not rendered: see the Accepted condition.' };
  const first = pools[0];
  if (first) return { type: 'InferencePool', status: 'False', reason: 'InferencePoolUnavailable', message: truncate(`${first.identity}: ${first.pool.problem}`) };
  return { type: 'InferencePool', status: 'True', reason: 'EndpointsFound', message: 'No proxy replica reports a problem with the InferencePool.' };
}

/** Reasons of the served side that a user must act on: each gets a Warning Event, like a refusal. */
const SERVED_PROBLEMS: ReadonlySet<string> = new Set(['RejectedByProxy', 'NotImplemented', 'ConnectionFailed', 'DeliveriesExhausted', 'InferencePoolUnavailable']);
const ACTIONS: Record<string, string> = { Connected: 'Connect', Delivering: 'Deliver', InferencePool: 'Route' };

/**
 * The problem of an accepted resource that the proxies report (a replica refused the rendering, no
 * replica acts on its kind, its MCP server cannot be reached), as an Event says it; none when served.
 */
export function servedProblem(conditions: readonly DesiredCondition[]): { reason: string; note: string; action: string } | undefined {
  const c = conditions.find((x) => x.status === 'False' && SERVED_PROBLEMS.has(x.reason));
  return c && { reason: c.reason, note: c.message, action: ACTIONS[c.type] ?? 'Serve' };
}

/** The flat fields for `conditions` and the served view. */
export function statusFields(conditions: readonly DesiredCondition[], served?: ServedView): StatusFields {
  const by = (t: string) => conditions.find((c) => c.type === t);
  const accepted = by('Accepted');
  const ready = by('Ready');
  // Connected (MCPClient) or Delivering (Webhook): how the served resource is doing.
  const working = by('Connected') ?? by('Delivering') ?? by('InferencePool');
  // Not accepted: Ready just says NotAccepted, the cause is Accepted's. Degraded: shown even when served.
  let from = ready;
  if (accepted && accepted.status !== 'True') from = accepted;
  else if (ready?.status === 'True' && working && working.status === 'False') from = working;
  else if (ready?.status === 'True' && accepted?.reason === 'Degraded') from = accepted;
  const fields: StatusFields = from?.reason ? { reason: from.reason, ...(from.message ? { message: from.message } : {}) } : {};
  if (served) {
    // A refused generation is rendered nowhere, whatever a replica still serves of an older one.
    const serving = accepted && accepted.status !== 'True' ? 0 : served.count.serving;
    fields.served = `${serving}/${served.count.live}`;
    fields.servedReplicas = serving;
    fields.replicas = served.count.live;
  }
  if (served?.mcp) {
    const tools = served.mcp.filter((m) => m.client.state === 'connected').map((m) => m.client.tools);
    if (tools.length) fields.toolCount = Math.max(...tools);
    const error = served.mcp.find((m) => m.client.state === 'error')?.client.error;
    if (error) fields.lastError = truncate(error);
  }
  return fields;
}

/** metav1.Condition caps messages at 32768 characters; a person reads far fewer. */
const MAX_MESSAGE = 4000;
const truncate = (m: string): string => (m.length > MAX_MESSAGE ? `${m.slice(0, MAX_MESSAGE - 1)}…` : m);

/** Conditions of `types` replaced by `desired`, keeping lastTransitionTime when the status is unchanged. */
export function nextStatus(current: ResourceStatus | undefined, desired: readonly DesiredCondition[], generation: number | undefined, now: Date, fields: StatusFields = {}): ResourceStatus {
  const previous = new Map((current?.conditions ?? []).map((c) => [c.type, c]));
  const conditions: Condition[] = desired.map((d) => {
    const prev = previous.get(d.type);
    const lastTransitionTime = prev && prev.status === d.status && prev.lastTransitionTime ? prev.lastTransitionTime : timestamp(now);
    return { ...d, ...(generation !== undefined ? { observedGeneration: generation } : {}), lastTransitionTime };
  });
  // Conditions someone else set (other types) are kept as they are.
  for (const c of current?.conditions ?? []) if (!desired.some((d) => d.type === c.type)) conditions.push(c);
  return { ...(generation !== undefined ? { observedGeneration: generation } : {}), ...fields, conditions };
}

/** Whether writing `next` would change anything. */
export function statusChanged(current: ResourceStatus | undefined, next: ResourceStatus): boolean {
  if (!current) return true;
  if (current.observedGeneration !== next.observedGeneration) return true;
  if (STATUS_FIELDS.some((f) => current[f] !== next[f])) return true;
  const cur = current.conditions ?? [];
  if (cur.length !== next.conditions.length) return true;
  return next.conditions.some((n) => {
    const c = cur.find((x) => x.type === n.type);
    return !c || c.status !== n.status || c.reason !== n.reason || c.message !== n.message || c.observedGeneration !== n.observedGeneration || c.lastTransitionTime !== n.lastTransitionTime;
  });
}

/** Kubernetes `metav1.Time`: RFC 3339, seconds precision. */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function currentStatus(cr: CustomResource): ResourceStatus | undefined {
  if (!cr.status) return undefined;
  const out: ResourceStatus = { observedGeneration: cr.status.observedGeneration, conditions: cr.status.conditions ?? [] };
  for (const f of STATUS_FIELDS) if (cr.status[f] !== undefined) (out as unknown as Record<string, unknown>)[f] = cr.status[f];
  return out;
}

/**
 * The merge patch that turns `current` into `next`: a flat field no longer set is removed (null),
 * since a merge patch keeps what it does not mention.
 */
export function statusPatch(current: ResourceStatus | undefined, next: ResourceStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const f of STATUS_FIELDS) if (next[f] === undefined && current?.[f] !== undefined) patch[f] = null;
  return patch;
}
