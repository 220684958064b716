// The live snapshot: read once per request on the hot path, swapped whole by the config sources
// (file watch, /api writes, Redis, Kubernetes), with listeners told of each swap.
import type { Snapshot } from './snapshot.ts';

export type SnapshotListener = (next: Snapshot, previous: Snapshot) => void;

export class SnapshotHolder {
  #current: Snapshot;
  #listeners: SnapshotListener[] = [];

  constructor(initial: Snapshot) {
    this.#current = initial;
  }

  current(): Snapshot {
    return this.#current;
  }

  swap(next: Snapshot): void {
    const previous = this.#current;
    this.#current = next;
    for (const l of this.#listeners) l(next, previous);
  }

  onSwap(listener: SnapshotListener): void {
    this.#listeners.push(listener);
  }
}
