// The bytes of cache entries one virtual key may keep (plugin `max_bytes_per_key`). Each replica
// keeps a ledger of the entries it wrote per key (id, size, expiry); a write that takes a key past
// its bound evicts that key's oldest entries from the store first, and an entry larger than the
// whole bound is not written. Store-agnostic (eviction is deleteById), so it holds on SQLite, Redis
// and PostgreSQL alike; what it cannot see is said in docs/cache.md (entries written by another
// replica, or before a restart, are not in this ledger).

export interface Written {
  namespace: string;
  id: string;
  bytes: number;
  expiresAt: number;
}

interface Ledger {
  entries: Written[];
  /** Index of the oldest entry still counted (entries before it were evicted or expired). */
  head: number;
  bytes: number;
}

export type BudgetVerdict = { write: false } | { write: true; evict: Written[] };

export class KeyBudget {
  readonly #keys = new Map<string, Ledger>();

  /**
   * Records `entry` for `key` and says what must go first so the key stays within `max` bytes: its
   * oldest entries (expired ones are dropped from the ledger for free), or the entry itself when it
   * is larger than `max`.
   */
  admit(key: string, entry: Written, max: number, now: number): BudgetVerdict {
    if (entry.bytes > max) return { write: false };
    let l = this.#keys.get(key);
    if (!l) {
      l = { entries: [], head: 0, bytes: 0 };
      this.#keys.set(key, l);
    }
    const evict: Written[] = [];
    // Expired entries first (they free room without a delete), then the oldest live ones.
    l.entries = l.entries.slice(l.head).filter((e) => {
      if (e.expiresAt > now) return true;
      l.bytes -= e.bytes;
      return false;
    });
    l.head = 0;
    while (l.bytes + entry.bytes > max && l.head < l.entries.length) {
      const oldest = l.entries[l.head++];
      l.bytes -= oldest.bytes;
      evict.push(oldest);
    }
    l.entries.push(entry);
    l.bytes += entry.bytes;
    return { write: true, evict };
  }

  /** Forgets keys with nothing counted (their entries all expired), so the ledger does not grow with keys seen once. */
  prune(now: number): void {
    for (const [key, l] of this.#keys) if (l.entries.every((e, i) => i < l.head || e.expiresAt <= now)) this.#keys.delete(key);
  }

  /** Bytes this replica counts for `key` (tests and stats). */
  bytesOf(key: string): number {
    return this.#keys.get(key)?.bytes ?? 0;
  }
}
