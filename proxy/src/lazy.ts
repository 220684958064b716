// Packages only some configurations use (Redis, PostgreSQL, Bedrock's signing and event-stream
// codec, multipart parsing) are loaded on first use, not at start: a gateway that never uses them
// keeps their code and heap out of its resident memory. `require` of an ES module is synchronous in
// Node 24, so the callers keep their synchronous shape.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** `() => require(name)`, memoised. */
export function lazy<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(name) as T);
}
