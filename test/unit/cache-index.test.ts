// The embedded store's in-memory nearest-neighbour index: the signature prefilter must not lose
// matches an exact scan finds, and expiry, replacement and removal must hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalised, VectorIndex } from '../../proxy/src/cache/vector-index.ts';

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296 - 0.5;
  };
}

const cos = (a: Float32Array, b: Float32Array) => {
  const ua = normalised(a)!;
  const ub = normalised(b)!;
  let d = 0;
  for (let i = 0; i < ua.length; i++) d += ua[i] * ub[i];
  return d;
};

test('finds the same best match as an exact scan, above the threshold only', () => {
  const dim = 96;
  const r = rng(7);
  const index = new VectorIndex(dim);
  const vectors: Float32Array[] = [];
  for (let i = 0; i < 3000; i++) {
    const v = Float32Array.from({ length: dim }, r);
    vectors.push(v);
    index.set(`e${i}`, v, Number.MAX_SAFE_INTEGER);
  }
  let found = 0;
  for (let q = 0; q < 200; q++) {
    // Near copies of stored vectors (similarity ~0.8-0.99) and random ones (no match).
    const base = vectors[(q * 13) % vectors.length];
    const noise = q % 4 === 0 ? 1 : 0.15 + (q % 5) * 0.06;
    const query = Float32Array.from(base, (x) => x + r() * noise);
    let best = -1;
    let bestSim = 0.8;
    vectors.forEach((v, i) => {
      const s = cos(query, v);
      if (s >= bestSim) {
        best = i;
        bestSim = s;
      }
    });
    const hit = index.nearest(query, 0.8, Date.now());
    if (best < 0) assert.equal(hit, undefined);
    else {
      found++;
      assert.equal(hit?.id, `e${best}`);
      assert.ok(Math.abs(hit.similarity - bestSim) < 1e-5);
    }
  }
  assert.ok(found > 100, `${found} queries had a match`);
});

test('expired entries are not matched; replaced and deleted entries behave', () => {
  const index = new VectorIndex(4);
  const now = Date.now();
  index.set('old', Float32Array.from([1, 0, 0, 0]), now - 1);
  assert.equal(index.nearest(Float32Array.from([1, 0, 0, 0]), 0.5, now), undefined);
  assert.deepEqual(index.expired(now), ['old']);
  index.set('old', Float32Array.from([0, 1, 0, 0]), now + 1000);
  assert.equal(index.nearest(Float32Array.from([0, 1, 0, 0]), 0.9, now)?.id, 'old');
  assert.equal(index.nearest(Float32Array.from([1, 0, 0, 0]), 0.5, now), undefined, 'replaced vector');
  index.set('other', Float32Array.from([0, 0, 1, 0]), now + 1000);
  assert.equal(index.delete('old'), true);
  assert.equal(index.size, 1);
  assert.equal(index.nearest(Float32Array.from([0, 0, 1, 0]), 0.9, now)?.id, 'other');
  assert.equal(index.nearest(Float32Array.from([0, 1, 0, 0]), 0.5, now), undefined);
  // A zero vector or one of the wrong dimension matches nothing.
  assert.equal(index.nearest(new Float32Array(4), 0, now), undefined);
  assert.equal(index.nearest(new Float32Array(3).fill(1), 0, now), undefined);
});
