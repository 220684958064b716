// Kubernetes Events (events.k8s.io/v1) for failures a user should see in `kubectl describe` and
// `kubectl events`. One series per problem: an Event's name is derived from the object, the reason
// and the note (the API server keeps a note immutable), so the same problem seen again (a new
// leader with an empty memory, or the problem coming back) finds the Event already there and counts
// it in its series instead of creating another. When a problem this replica reported clears, a
// Normal `Resolved` Event says so.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { isConflict, resourcePath, type KubeClient } from './kube/client.ts';
import { microTime } from './leader.ts';
import { FIELD_MANAGER } from './render/contract.ts';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export const REPORTING_CONTROLLER = 'gateway.skybridge.dev/operator';

const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** At most `max` UTF-8 bytes (the API server counts bytes), cut between code points. */
function clipBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = '';
  let bytes = 3; // the ellipsis
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > max) break;
    out += ch;
    bytes += n;
  }
  return `${out}…`;
}

interface StoredEvent {
  series?: { count?: number };
}

/** The Event name for one problem of one object: stable across replicas and restarts. */
export function eventName(target: EventTarget, reason: string, note: string): string {
  const hash = createHash('sha256').update(`${target.kind}\u0000${target.namespace}\u0000${target.name}\u0000${target.uid ?? ''}\u0000${reason}\u0000${note}`).digest('hex').slice(0, 16);
  // Object names are at most 253 characters; a long target name is cut, the hash keeps it unique.
  return `${target.name.slice(0, 200).replace(/[^a-z0-9.-]/g, '-')}.${hash}`;
}

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  /** Last problem reported per object (reason and note), so a steady failure is reported once. */
  readonly #last = new Map<string, { reason: string; note: string }>();

  constructor(client: KubeClient, instance: string) {
    this.#client = client;
    this.#instance = clip(instance, 128);
  }

  /** A Warning about `target`, unless the same reason and note were the last thing said about it. */
  async warn(target: EventTarget, reason: string, note: string, action: string): Promise<boolean> {
    const key = keyOf(target);
    const last = this.#last.get(key);
    if (last && last.reason === reason && last.note === note) return false;
    const said = await this.#record(target, 'Warning', reason, note, action);
    this.#last.set(key, { reason, note });
    return said;
  }

  /** The object is fine again: a Normal Event if this replica had reported a problem; a later failure is news. */
  async clear(target: EventTarget, note?: string): Promise<boolean> {
    const key = keyOf(target);
    const last = this.#last.get(key);
    if (!last) return false;
    this.#last.delete(key);
    await this.#record(target, 'Normal', 'Resolved', note ?? `${last.reason} no longer applies: ${last.note}`, 'Resolve');
    return true;
  }

  /** Creates the problem's Event, or counts it again in the existing series. */
  async #record(target: EventTarget, type: 'Warning' | 'Normal', reason: string, note: string, action: string): Promise<boolean> {
    // events.k8s.io/v1 caps the note at 1 kB.
    const clipped = clipBytes(note, 1024);
    const name = eventName(target, reason, clipped);
    const path = resourcePath('events.k8s.io/v1', 'events', target.namespace);
    const now = microTime(new Date());
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace: target.namespace },
      eventTime: now,
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.#instance,
      action: clip(action, 128),
      reason: clip(reason, 128),
      type,
      note: clipped,
      regarding: { apiVersion: target.apiVersion, kind: target.kind, namespace: target.namespace, name: target.name, ...(target.uid ? { uid: target.uid } : {}) },
    };
    try {
      await this.#client.create(path, event);
      return true;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    // The series exists (said before, maybe by another replica): count it, add no Event. Only the
    // series may change: everything else of an events.k8s.io Event is immutable.
    const existing = await this.#client.get<StoredEvent>(`${path}/${name}`);
    await this.#client.mergePatch(`${path}/${name}`, { series: { count: (existing.series?.count ?? 1) + 1, lastObservedTime: now } }, FIELD_MANAGER);
    return false;
  }
}

const keyOf = (t: EventTarget): string => `${t.kind}/${t.namespace}/${t.name}/${t.uid ?? ''}`;
