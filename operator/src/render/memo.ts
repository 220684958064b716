// What a render keeps for the next one (the controller's), so an edit to one resource costs that
// resource, not a pass over every part, Secret value and `sources` entry: each part's checksum by its
// text, and the Secret packing and the `sources` layout while their content is the same. Each input
// is compared entry by entry (string comparisons, far cheaper than hashing or laying them out again).
import { ChecksumMemo } from '../../../proxy/src/contract.ts';
import type { PartCache } from './parts.ts';

/** One value kept with the input it was made from. */
class KeptByInput {
  #kept: { input: Readonly<Record<string, string>>; value: unknown } | undefined;

  /** `make()`, or what it gave for the last input with the same entries. */
  get<T>(input: Readonly<Record<string, string>>, make: () => T): T {
    const kept = this.#kept;
    if (kept && sameEntries(kept.input, input)) return kept.value as T;
    const value = make();
    this.#kept = { input, value };
    return value;
  }
}

/** Whether two flat string maps hold the same entries (the same object: at once). */
export function sameEntries(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (a[k] !== b[k] || !(k in b)) return false;
  return true;
}

export class RenderMemo {
  readonly #sums = new ChecksumMemo();
  readonly #secrets = new KeptByInput();
  readonly #sources = new KeptByInput();
  /** The last cut of the document into parts, per part size limit. */
  readonly #parts = new Map<number, PartCache>();

  /** What cutParts keeps between renders at this part size limit. */
  parts(maxBytes: number): PartCache {
    let kept = this.#parts.get(maxBytes);
    if (!kept) this.#parts.set(maxBytes, (kept = []));
    return kept;
  }

  /** sha256 of the text `name` holds, once per text. */
  checksum(name: string, text: string): string {
    return this.#sums.of(name, text);
  }

  /** Part texts hashed (not reused): what a test counts. */
  get hashed(): number {
    return this.#sums.hashed;
  }

  /** `make(input)`, or what it gave for the last input with the same entries. */
  secrets<T>(input: Readonly<Record<string, string>>, make: () => T): T {
    return this.#secrets.get(input, make);
  }

  /** The same, for the sources layout. */
  sources<T>(input: Readonly<Record<string, string>>, make: () => T): T {
    return this.#sources.get(input, make);
  }
}
