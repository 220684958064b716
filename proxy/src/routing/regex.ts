// Regular expressions for CEL `matches()`. CEL specifies RE2 syntax and semantics; RE2 matches in
// time linear in the input, so a hostile header cannot stall the event loop the way a
// backtracking RegExp does on a nested quantifier such as `^(a+)+$`. RE2 has no backreferences
// and no lookaround: such patterns are refused when a rule is compiled, never at request time.
import type * as Re2js from 're2js';
import { createRequire } from 'node:module';

// Loaded with the first pattern compiled: a gateway without routing rules never loads it.
let re2jsModule: typeof Re2js | undefined;
const re2js = (): typeof Re2js => (re2jsModule ??= createRequire(import.meta.url)('re2js') as typeof Re2js);

export interface Re2 {
  /** Unanchored search, as CEL `matches()` (RE2 PartialMatch). */
  test(input: string): boolean;
}

export class RegexSyntaxError extends Error {
  /** Why, without the pattern: safe to report for patterns that came from a request. */
  readonly reason: string;
  constructor(message: string, reason: string) {
    super(message);
    this.name = 'RegexSyntaxError';
    this.reason = reason;
  }
}

/** Compiles or throws RegexSyntaxError whose message says why, naming the pattern. */
export function compileRe2(pattern: string): Re2 {
  try {
    return re2js().RE2JS.compile(pattern);
  } catch (err) {
    const why = reason(pattern, err);
    const where = fragment(err);
    throw new RegexSyntaxError(`invalid regular expression ${JSON.stringify(pattern)}: ${why}${where} (matches() uses RE2 syntax)`, why);
  }
}

/** The library's reason, rephrased where a JS-regex habit is the likely cause. */
function reason(pattern: string, err: unknown): string {
  if (/\(\?<?[=!]/.test(pattern)) return 'lookahead and lookbehind are not supported';
  if (/\\[1-9]|\\k</.test(pattern)) return 'backreferences are not supported';
  if (err instanceof re2js().RE2JSSyntaxException) return err.getDescription();
  return err instanceof Error ? err.message : String(err);
}

function fragment(err: unknown): string {
  const where = err instanceof re2js().RE2JSSyntaxException ? err.getPattern() : null;
  return where ? ` at \`${where}\`` : '';
}

// Patterns that are not literals in the rule (e.g. `model.matches(headers["x-re"])`) arrive per
// request: compile each once, keep the most recent few hundred.
const DYNAMIC_LIMIT = 256;
const dynamic = new Map<string, Re2>();

/** A compiled pattern from the bounded cache; throws RegexSyntaxError. */
export function cachedRe2(pattern: string): Re2 {
  const hit = dynamic.get(pattern);
  if (hit) {
    // Refresh recency: Map iteration order is insertion order.
    dynamic.delete(pattern);
    dynamic.set(pattern, hit);
    return hit;
  }
  const re = compileRe2(pattern);
  if (dynamic.size >= DYNAMIC_LIMIT) dynamic.delete(dynamic.keys().next().value as string);
  dynamic.set(pattern, re);
  return re;
}
