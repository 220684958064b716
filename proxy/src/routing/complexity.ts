// complexity_tier: a request takes the tier of its nearest labelled example by cosine similarity
// of embeddings. Nearest example, not nearest centroid: a tier's examples span unrelated topics
// ("hi", "what time is it in Tokyo"), and their average sits between them, close to none; the
// floor then compares against a real phrase, so "below the floor" means "like nothing we know".
// Pure apart from the injected embed function; examples are embedded once, at creation.
import { COMPLEXITY_TIERS, DEFAULT_SIMILARITY_FLOOR, type ComplexityClassifierConfig, type ComplexityTier } from '../schema/complexity.ts';

export type EmbedFn = (texts: string[]) => Promise<number[][]>;

export interface ComplexityMatch {
  tier: ComplexityTier;
  /** Cosine similarity to the nearest example. */
  similarity: number;
  /** The example the request landed on, for the routing log. */
  example: string;
}

export interface ComplexityClassifier {
  /** True once the examples are embedded. */
  readonly ready: boolean;
  /** Settles when warm-up ends: true when ready, false when embedding the examples failed. */
  readonly warmed: Promise<boolean>;
  /** Undefined while not ready, for blank text, when embedding fails, or when nothing clears the floor. Never rejects. */
  classify(text: string): Promise<ComplexityMatch | undefined>;
  /** The same on a vector already embedded with the configured model. */
  classifyVector(vector: readonly number[]): ComplexityMatch | undefined;
}

export interface ClassifierOptions {
  /** Warm-up failure (embed threw, or returned the wrong number or shape of vectors), or a request's embed call failing. */
  onError?(err: Error): void;
  /** Texts per embed call during warm-up (default 64). */
  batchSize?: number;
}

interface Index {
  dim: number;
  /** Unit vectors, row-major: example i is [i * dim, (i + 1) * dim). */
  unit: Float64Array;
  tiers: ComplexityTier[];
  texts: string[];
}

export function createComplexityClassifier(cfg: ComplexityClassifierConfig, embed: EmbedFn, opts: ClassifierOptions = {}): ComplexityClassifier {
  const floor = cfg.similarity_floor ?? DEFAULT_SIMILARITY_FLOOR;
  const texts: string[] = [];
  const tiers: ComplexityTier[] = [];
  for (const tier of COMPLEXITY_TIERS) {
    for (const t of cfg.examples[tier] ?? []) {
      if (t.trim() === '') continue;
      texts.push(t);
      tiers.push(tier);
    }
  }

  let index: Index | undefined;
  const warmed = buildIndex(texts, tiers, embed, opts.batchSize ?? 64).then(
    (built) => {
      index = built;
      return true;
    },
    (err: unknown) => {
      opts.onError?.(err instanceof Error ? err : new Error(String(err)));
      return false;
    },
  );

  const classifyVector = (vector: readonly number[]): ComplexityMatch | undefined => {
    if (!index || vector.length !== index.dim) return undefined;
    const norm = Math.sqrt(dot(vector, vector, 0, 0, vector.length));
    if (!(norm > 0)) return undefined;
    let best = -1;
    let bestSim = -Infinity;
    for (let i = 0; i < index.tiers.length; i++) {
      const sim = dot(index.unit, vector, i * index.dim, 0, index.dim) / norm;
      if (sim > bestSim) {
        bestSim = sim;
        best = i;
      }
    }
    if (best < 0 || bestSim < floor) return undefined;
    return { tier: index.tiers[best], similarity: bestSim, example: index.texts[best] };
  };

  return {
    get ready() {
      return index !== undefined;
    },
    warmed,
    classifyVector,
    async classify(text: string): Promise<ComplexityMatch | undefined> {
      if (!index || text.trim() === '') return undefined;
      let vector: number[] | undefined;
      try {
        [vector] = await embed([text]);
      } catch (err) {
        // The tier is then unknown, which routing handles; never fail the request over it.
        opts.onError?.(err instanceof Error ? err : new Error(String(err)));
        return undefined;
      }
      return Array.isArray(vector) ? classifyVector(vector) : undefined;
    },
  };
}

async function buildIndex(texts: string[], tiers: ComplexityTier[], embed: EmbedFn, batchSize: number): Promise<Index> {
  if (texts.length === 0) throw new Error('complexity classifier has no examples');
  const vectors: number[][] = [];
  for (let i = 0; i < texts.length; i += batchSize) {
    const batch = texts.slice(i, i + batchSize);
    const got = await embed(batch);
    if (!Array.isArray(got) || got.length !== batch.length) {
      throw new Error(`embedding ${batch.length} examples returned ${Array.isArray(got) ? got.length : 'no'} vectors`);
    }
    vectors.push(...got);
  }
  const dim = vectors[0].length;
  if (dim === 0) throw new Error('embedding returned an empty vector');
  const unit = new Float64Array(vectors.length * dim);
  for (const [i, v] of vectors.entries()) {
    if (v.length !== dim) throw new Error(`example ${i} embedded to ${v.length} dimensions, expected ${dim}`);
    const norm = Math.sqrt(dot(v, v, 0, 0, dim));
    if (!(norm > 0)) throw new Error(`example ${i} ("${texts[i]}") embedded to a zero vector`);
    for (let j = 0; j < dim; j++) unit[i * dim + j] = v[j] / norm;
  }
  return { dim, unit, tiers, texts };
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>, offA: number, offB: number, n: number): number {
  let s = 0;
  for (let j = 0; j < n; j++) s += a[offA + j] * b[offB + j];
  return s;
}
