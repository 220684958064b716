// Counters for a single gateway process. Each limit key holds the usage of one window; a newer
// window replaces it lazily on the next access. Memory is bounded: past `maxKeys` keys, ended
// windows are dropped first, then the oldest keys (their limits restart from 0; with the default
// of 100k keys that takes 100k distinct budgets and rate limits in use at once).
import { addAmount, kindOf, limitWindow, type AdmitResult, type CounterStore, type Limit, type UsageAdd } from './store.ts';

interface Entry {
  start: number;
  end: number;
  value: number;
}

export interface MemoryCounterStoreOptions {
  maxKeys?: number;
}

export class MemoryCounterStore implements CounterStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxKeys: number;

  constructor(options: MemoryCounterStoreOptions = {}) {
    this.#maxKeys = options.maxKeys ?? 100_000;
  }

  admit(limits: readonly Limit[], nowMs: number): Promise<AdmitResult> {
    this.#makeRoom(limits.length, nowMs);
    const entries = limits.map((l) => this.#entry(l, nowMs));
    for (let i = 0; i < limits.length; i++) {
      if (!(entries[i].value < limits[i].max)) {
        return Promise.resolve({ ok: false, index: i, usage: entries.map((e) => e.value), retryAfterMs: Math.max(0, entries[i].end - nowMs) });
      }
    }
    // Limits sharing a key share an entry: increment it once.
    const done = new Set<Entry>();
    for (let i = 0; i < limits.length; i++) {
      if (kindOf(limits[i]) === 'requests' && !done.has(entries[i])) {
        done.add(entries[i]);
        entries[i].value += 1;
      }
    }
    return Promise.resolve({ ok: true, usage: entries.map((e) => e.value) });
  }

  record(adds: readonly UsageAdd[], nowMs: number): Promise<void> {
    this.#makeRoom(adds.length, nowMs);
    for (const add of adds) {
      const amount = addAmount(add);
      if (amount > 0) this.#entry(add.limit, nowMs).value += amount;
    }
    return Promise.resolve();
  }

  peek(limits: readonly Limit[], nowMs: number): Promise<number[]> {
    this.#makeRoom(limits.length, nowMs);
    return Promise.resolve(limits.map((l) => this.#entry(l, nowMs).value));
  }

  cached(key: string): number | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    return Date.now() >= e.end ? 0 : e.value;
  }

  close(): Promise<void> {
    this.#entries.clear();
    return Promise.resolve();
  }

  /** Number of keys held (for tests of the memory bound). */
  get size(): number {
    return this.#entries.size;
  }

  #entry(limit: Limit, nowMs: number): Entry {
    const w = limitWindow(limit, nowMs);
    const e = this.#entries.get(limit.key);
    if (e) {
      if (w.start > e.start) {
        e.start = w.start;
        e.end = w.end;
        e.value = 0;
      } else if (w.start === e.start) {
        e.end = w.end;
      }
      // An older window (a clock stepping back, a late caller) keeps counting in the newest one.
      return e;
    }
    const fresh: Entry = { start: w.start, end: w.end, value: 0 };
    this.#entries.set(limit.key, fresh);
    return fresh;
  }

  /** Evicts before an operation touches up to `n` new keys, so no entry it holds is evicted under it. */
  #makeRoom(n: number, nowMs: number): void {
    if (this.#entries.size + n <= this.#maxKeys) return;
    for (const [k, e] of this.#entries) if (e.end <= nowMs) this.#entries.delete(k);
    if (this.#entries.size + n <= this.#maxKeys) return;
    let drop = Math.max(this.#entries.size + n - this.#maxKeys, Math.floor(this.#maxKeys / 10));
    for (const k of this.#entries.keys()) {
      this.#entries.delete(k);
      if (--drop === 0) break;
    }
  }
}
