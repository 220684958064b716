// Deterministic embeddings in which paraphrases are close and unrelated texts are far, so semantic
// cache hits and misses can be tested without a model. Signed feature hashing of the text's content
// words: lowercased, NFKC, apostrophes dropped, split on anything not a letter or digit, a short
// list of function words removed (kept when nothing else is left), a trailing plural `s` stripped;
// each word adds its character trigrams (padded with spaces) and itself, hashed into one of `dims`
// buckets with a hashed sign, and the vector is L2-normalised. With >= 64 dimensions:
// "What is the capital of France?" / "what's the capital city of France" ≈ 0.87, and texts that
// share no content word ≈ 0 (see test/unit/mock-embeddings.test.ts).

/** Dimensions when the request names none: a model ending in `-dim<N>` has N, any other 8. */
export const DEFAULT_EMBEDDING_DIMENSIONS = 8;

export function modelDimensions(model: string | undefined): number {
  const m = /-dim([0-9]{1,5})$/.exec(model ?? '');
  const n = m ? Number(m[1]) : 0;
  return n >= 1 && n <= 16384 ? n : DEFAULT_EMBEDDING_DIMENSIONS;
}

const FUNCTION_WORDS = new Set(
  ('a an the is are was were be been am of to in on for and or but not what whats which who whom why when where how ' +
    'me my i you your we our it its this that these those do does did can could would should will shall please tell ' +
    'about with by at from as there some any s')
    .split(' '),
);

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // Final avalanche so buckets and signs use every input bit.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

function stem(w: string): string {
  return w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

/** The content words features are taken from. */
export function contentWords(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().replace(/['’`]/g, '').split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const content = words.filter((w) => !FUNCTION_WORDS.has(w)).map(stem);
  return content.length > 0 ? content : words;
}

/**
 * Unit-length embedding of `text` with `dims` dimensions, already float32 so the float and base64
 * (little-endian float32) encodings carry exactly the same numbers.
 */
export function embedText(text: string, dims = DEFAULT_EMBEDDING_DIMENSIONS): Float32Array {
  const acc = new Float64Array(dims);
  const add = (feature: string): void => {
    const h = hash(feature);
    acc[h % dims] += h & 0x80000000 ? -1 : 1;
  };
  for (const w of contentWords(text)) {
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(`c${padded.slice(i, i + 3)}`);
    add(`w${w}`);
  }
  let norm = 0;
  for (const x of acc) norm += x * x;
  // Empty text (no features at all): a fixed unit vector rather than zeros.
  if (norm === 0) {
    acc[0] = 1;
    norm = 1;
  }
  norm = Math.sqrt(norm);
  return Float32Array.from(acc, (x) => x / norm);
}
