// The live snapshot: read once per request on the hot path, swapped whole by the config sources
// (file watch, /api writes, Redis, Kubernetes), with listeners told of each swap.
import type { Snapshot } from './snapshot.ts';

/** A listener that returns a promise (the model catalog's refresh) holds up whoever awaits swap(). */
export type SnapshotListener = (next: Snapshot, previous: Snapshot) => void | Promise<unknown>;

export class SnapshotHolder {
  #current: Snapshot;
  #listeners: SnapshotListener[] = [];

  constructor(initial: Snapshot) {
    this.#current = initial;
  }

  current(): Snapshot {
    return this.#current;
  }

  /**
   * Serves `next` at once; resolves when every listener's work is done (an /api write answers only
   * then, so what it wrote is what the next request is served with). A failed listener is its own
   * business: it never rejects this.
   */
  swap(next: Snapshot): Promise<void> {
    const previous = this.#current;
    this.#current = next;
    const pending: Promise<unknown>[] = [];
    for (const l of this.#listeners) {
      const r = l(next, previous);
      if (r) pending.push(r.catch(() => undefined));
    }
    return Promise.all(pending).then(() => undefined);
  }

  onSwap(listener: SnapshotListener): void {
    this.#listeners.push(listener);
  }
}
