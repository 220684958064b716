// Kubernetes Events (events.k8s.io/v1) for failures a user should see in `kubectl describe` and
// `kubectl events`. Emitted once per distinct problem of an object, not on every reconcile.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { resourcePath, type KubeClient } from './kube/client.ts';
import { microTime } from './leader.ts';

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

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  /** Last problem reported per object, so a steady failure is reported once. */
  readonly #last = new Map<string, string>();

  constructor(client: KubeClient, instance: string) {
    this.#client = client;
    this.#instance = clip(instance, 128);
  }

  /** A Warning about `target`, unless the same reason and note were the last thing said about it. */
  async warn(target: EventTarget, reason: string, note: string, action: string): Promise<boolean> {
    const key = `${target.kind}/${target.namespace}/${target.name}/${target.uid ?? ''}`;
    const said = `${reason}\u0000${note}`;
    if (this.#last.get(key) === said) return false;
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${target.name}.${Date.now().toString(16)}${randomBytes(2).toString('hex')}`, namespace: target.namespace },
      eventTime: microTime(new Date()),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.#instance,
      action: clip(action, 128),
      reason: clip(reason, 128),
      type: 'Warning',
      // events.k8s.io/v1 caps the note at 1 kB.
      note: clipBytes(note, 1024),
      regarding: { apiVersion: target.apiVersion, kind: target.kind, namespace: target.namespace, name: target.name, ...(target.uid ? { uid: target.uid } : {}) },
    };
    await this.#client.create(resourcePath('events.k8s.io/v1', 'events', target.namespace), event);
    this.#last.set(key, said);
    return true;
  }

  /** The object is fine again: a later failure is news. */
  clear(target: EventTarget): void {
    this.#last.delete(`${target.kind}/${target.namespace}/${target.name}/${target.uid ?? ''}`);
  }
}
