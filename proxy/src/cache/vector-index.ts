// Nearest-neighbour search in memory over one scope's entries: unit vectors packed in one
// Float32Array (cosine = dot product). A full scan of 100,000 vectors of a few hundred floats takes
// tens of milliseconds, so each vector also gets a 128-bit signature: the signs of its projections
// on fixed random hyperplanes (SimHash). Two vectors at angle θ differ in each bit with probability
// exactly θ/π, whatever the data, so the Hamming distance bounds the angle: only entries within the
// threshold's angle plus a four-sigma margin are compared exactly. A true match is missed with
// probability about 3e-5; a query reads 16 bytes per entry instead of the whole vector.

export function normalised(v: Float32Array): Float32Array | undefined {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  if (!(sum > 0) || !Number.isFinite(sum)) return undefined;
  const inv = 1 / Math.sqrt(sum);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * inv;
  return out;
}

const WORDS = 4;
const BITS = WORDS * 32;
/** Hyperplanes per dimension, from a fixed seed: every process draws the same ones. */
const planesByDimension = new Map<number, Float32Array>();

function planes(dimension: number): Float32Array {
  let p = planesByDimension.get(dimension);
  if (!p) {
    p = new Float32Array(BITS * dimension);
    // xorshift32 then Box-Muller: Gaussian hyperplanes make the bit probability θ/π exact.
    let x = 0x9e3779b9 ^ dimension;
    const next = () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return ((x >>> 0) + 0.5) / 4294967296;
    };
    for (let i = 0; i < p.length; i++) p[i] = Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
    planesByDimension.set(dimension, p);
  }
  return p;
}

function signature(unit: Float32Array, out: Int32Array, at: number): void {
  const d = unit.length;
  const p = planes(d);
  for (let w = 0; w < WORDS; w++) {
    let word = 0;
    for (let b = 0; b < 32; b++) {
      const base = (w * 32 + b) * d;
      let dot = 0;
      for (let j = 0; j < d; j++) dot += unit[j] * p[base + j];
      if (dot >= 0) word |= 1 << b;
    }
    out[at + w] = word;
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Largest Hamming distance a vector at similarity >= min can plausibly have (mean + 4 sigma). */
function hammingCutoff(min: number): number {
  const p = Math.acos(Math.max(-1, Math.min(1, min))) / Math.PI;
  return Math.ceil(BITS * p + 4 * Math.sqrt(BITS * p * (1 - p)) + 1);
}

/** A vector's unit form and signature, computed once at write and stored, so loading a scope costs no projections. */
export function signatureOf(vector: Float32Array): { unit: Float32Array; sig: Int32Array } | undefined {
  const unit = normalised(vector);
  if (!unit) return undefined;
  const sig = new Int32Array(WORDS);
  signature(unit, sig, 0);
  return { unit, sig };
}

export class VectorIndex {
  readonly dimension: number;
  #data: Float32Array;
  #sigs = new Int32Array(WORDS * 16);
  #ids: string[] = [];
  #expires: number[] = [];
  readonly #pos = new Map<string, number>();

  constructor(dimension: number) {
    this.dimension = dimension;
    this.#data = new Float32Array(dimension * 16);
  }

  get size(): number {
    return this.#ids.length;
  }

  /** Adds or replaces; a zero vector cannot match anything and is left out. `sig`: its stored signature (see signatureOf). */
  set(id: string, vector: Float32Array, expiresAt: number, sig?: Int32Array): void {
    if (vector.length !== this.dimension) return;
    const unit = sig ? vector : normalised(vector);
    if (!unit) return;
    let at = this.#pos.get(id);
    if (at === undefined) {
      at = this.#ids.length;
      if ((at + 1) * this.dimension > this.#data.length) {
        const grown = new Float32Array(this.#data.length * 2);
        grown.set(this.#data);
        this.#data = grown;
        const sigs = new Int32Array(this.#sigs.length * 2);
        sigs.set(this.#sigs);
        this.#sigs = sigs;
      }
      this.#ids.push(id);
      this.#expires.push(expiresAt);
      this.#pos.set(id, at);
    } else {
      this.#expires[at] = expiresAt;
    }
    this.#data.set(unit, at * this.dimension);
    if (sig && sig.length === WORDS) this.#sigs.set(sig, at * WORDS);
    else signature(unit, this.#sigs, at * WORDS);
  }

  delete(id: string): boolean {
    const at = this.#pos.get(id);
    if (at === undefined) return false;
    const last = this.#ids.length - 1;
    if (at !== last) {
      const d = this.dimension;
      this.#data.copyWithin(at * d, last * d, (last + 1) * d);
      this.#sigs.copyWithin(at * WORDS, last * WORDS, (last + 1) * WORDS);
      this.#ids[at] = this.#ids[last];
      this.#expires[at] = this.#expires[last];
      this.#pos.set(this.#ids[at], at);
    }
    this.#ids.pop();
    this.#expires.pop();
    this.#pos.delete(id);
    return true;
  }

  /** Ids of entries expired at `now`. */
  expired(now: number): string[] {
    return this.#ids.filter((_, i) => this.#expires[i] <= now);
  }

  /** The live entry most similar to `query` with similarity >= min, best first. */
  nearest(query: Float32Array, min: number, now: number): { id: string; similarity: number } | undefined {
    if (query.length !== this.dimension) return undefined;
    const q = normalised(query);
    if (!q) return undefined;
    const d = this.dimension;
    const data = this.#data;
    const sigs = this.#sigs;
    const n = this.#ids.length;
    const qs = new Int32Array(WORDS);
    signature(q, qs, 0);
    const q0 = qs[0], q1 = qs[1], q2 = qs[2], q3 = qs[3];
    const cutoff = hammingCutoff(min);
    let best = -1;
    let bestSim = min;
    for (let i = 0, s = 0; i < n; i++, s += WORDS) {
      const ham = popcount(q0 ^ sigs[s]) + popcount(q1 ^ sigs[s + 1]) + popcount(q2 ^ sigs[s + 2]) + popcount(q3 ^ sigs[s + 3]);
      if (ham > cutoff) continue;
      const base = i * d;
      let dot = 0;
      let j = 0;
      for (; j + 3 < d; j += 4) dot += q[j] * data[base + j] + q[j + 1] * data[base + j + 1] + q[j + 2] * data[base + j + 2] + q[j + 3] * data[base + j + 3];
      for (; j < d; j++) dot += q[j] * data[base + j];
      if (dot >= bestSim && this.#expires[i] > now) {
        best = i;
        bestSim = dot;
      }
    }
    if (best < 0) return undefined;
    return { id: this.#ids[best], similarity: Math.min(1, Math.max(0, bestSim)) };
  }
}
