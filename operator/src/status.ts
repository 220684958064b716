// CR status: `Accepted` and `Ready` conditions with observedGeneration. Pure: the next status from
// the current one and the verdict, with lastTransitionTime moving only when a condition's status
// flips, so rewriting the same verdict changes nothing (and writes nothing).
import type { Condition, CustomResource } from './resources/kinds.ts';
import type { Verdict } from './resources/desired.ts';

export interface ResourceStatus {
  observedGeneration?: number;
  conditions: Condition[];
}

export type DesiredCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** The outcome of writing the rendered configuration, for the Ready condition. */
export type RenderOutcome = { ok: true; revision: string } | { ok: false; message: string; held?: boolean };

export function desiredConditions(verdict: Verdict, outcome: RenderOutcome): DesiredCondition[] {
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
  } else if (outcome.ok) {
    // No revision in the message: it changes with every CR, and would rewrite every status each time.
    ready = { type: 'Ready', status: 'True', reason: 'Rendered', message: 'Included in the configuration the proxies load.' };
  } else {
    ready = { type: 'Ready', status: 'False', reason: outcome.held ? 'RenderHeld' : 'RenderFailed', message: truncate(outcome.message) };
  }
  return [accepted, ready];
}

/** metav1.Condition caps messages at 32768 characters; a person reads far fewer. */
const MAX_MESSAGE = 4000;
const truncate = (m: string): string => (m.length > MAX_MESSAGE ? `${m.slice(0, MAX_MESSAGE - 1)}…` : m);

/** Conditions of `types` replaced by `desired`, keeping lastTransitionTime when the status is unchanged. */
export function nextStatus(current: ResourceStatus | undefined, desired: readonly DesiredCondition[], generation: number | undefined, now: Date): ResourceStatus {
  const previous = new Map((current?.conditions ?? []).map((c) => [c.type, c]));
  const conditions: Condition[] = desired.map((d) => {
    const prev = previous.get(d.type);
    const lastTransitionTime = prev && prev.status === d.status && prev.lastTransitionTime ? prev.lastTransitionTime : timestamp(now);
    return { ...d, ...(generation !== undefined ? { observedGeneration: generation } : {}), lastTransitionTime };
  });
  // Conditions someone else set (other types) are kept as they are.
  for (const c of current?.conditions ?? []) if (!desired.some((d) => d.type === c.type)) conditions.push(c);
  return { ...(generation !== undefined ? { observedGeneration: generation } : {}), conditions };
}

/** Whether writing `next` would change anything. */
export function statusChanged(current: ResourceStatus | undefined, next: ResourceStatus): boolean {
  if (!current) return true;
  if (current.observedGeneration !== next.observedGeneration) return true;
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

export const currentStatus = (cr: CustomResource): ResourceStatus | undefined =>
  cr.status ? { observedGeneration: cr.status.observedGeneration, conditions: cr.status.conditions ?? [] } : undefined;
