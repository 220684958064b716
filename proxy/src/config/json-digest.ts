// SHA-256 of JSON.stringify(value) in steps: the snapshot's hash of a large configuration (10,000
// virtual keys) is megabytes of text, and a reload should not hold the event loop for the whole of
// it. The text is written in pieces by pretty-json.ts (a slice of array items per step) and hashed
// as it comes: the bytes hashed are JSON.stringify's, so the digest is the same.
import { createHash } from 'node:crypto';
import { batched, writeJsonSteps } from './pretty-json.ts';

/** Objects and arrays above this depth are written out here (governance.virtual_keys[i] is at 3). */
const LAID_OUT_DEPTH = 3;
/** Pieces are hashed in batches of about this many characters (one update per piece costs more). */
const BATCH_CHARS = 1 << 16;

/** The hex SHA-256 of JSON.stringify(value), for an object or array. */
export function* jsonDigestSteps(value: unknown): Generator<void, string> {
  const hash = createHash('sha256');
  const batch = batched(BATCH_CHARS, (chunk) => hash.update(chunk));
  yield* writeJsonSteps(value, { indent: '', depth: LAID_OUT_DEPTH }, batch.out);
  batch.flush();
  return hash.digest('hex');
}
