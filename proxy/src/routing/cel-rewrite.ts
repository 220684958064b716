// Compile-time analysis and rewrites of a parsed routing expression. Pure: AST in, facts or
// expression text out.
import type * as Cel from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import { createRequire } from 'node:module';

// Only rules use it: loaded with the first rule compiled (cel.ts).
let celModule: typeof Cel | undefined;
const cel = (): typeof Cel => (celModule ??= createRequire(import.meta.url)('@marcbachmann/cel-js') as typeof Cel);

export const MAPS = ['headers', 'params'] as const;
export type MapName = (typeof MAPS)[number];

export interface KeyAccess {
  map: MapName;
  key: string;
}

export function isNode(x: unknown): x is ASTNode {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && typeof (x as { op?: unknown }).op === 'string';
}

/** Visits every node; `skip` returning true stops the descent below that node. */
export function walk(x: unknown, visit: (node: ASTNode) => boolean | void): void {
  if (Array.isArray(x)) {
    for (const item of x) walk(item, visit);
    return;
  }
  if (!isNode(x)) return;
  if (visit(x) === true) return;
  if (x.op !== 'value' && x.op !== 'id') walk(x.args, visit);
}

function isVar(x: unknown, name: string): boolean {
  return isNode(x) && x.op === 'id' && x.args === name;
}

function mapOf(x: unknown): MapName | undefined {
  if (!isNode(x) || x.op !== 'id') return undefined;
  return (MAPS as readonly string[]).includes(x.args) ? (x.args as MapName) : undefined;
}

/** `headers["k"]` or `headers.k` with a literal key; undefined for anything else. */
function literalAccess(n: ASTNode): KeyAccess | undefined {
  if (n.op === '[]') {
    const map = mapOf(n.args[0]);
    const key = n.args[1];
    return map && isNode(key) && key.op === 'value' && typeof key.args === 'string' ? { map, key: key.args } : undefined;
  }
  if (n.op === '.') {
    const map = mapOf(n.args[0]);
    return map ? { map, key: n.args[1] } : undefined;
  }
  return undefined;
}

/** Keys the expression reads from headers/params (has() excluded), and whether any key is computed. */
export function keyAccesses(ast: ASTNode): { keys: KeyAccess[]; dynamic: boolean } {
  const keys: KeyAccess[] = [];
  let dynamic = false;
  walk(ast, (n) => {
    if (n.op === 'call' && n.args[0] === 'has') return true; // has() never raises a missing key
    const a = literalAccess(n);
    if (a) {
      if (!keys.some((k) => k.map === a.map && k.key === a.key)) keys.push(a);
      return true;
    }
    if (n.op === '[]' && mapOf(n.args[0])) dynamic = true;
  });
  return { keys, dynamic };
}

/**
 * Header names are case-insensitive and the request's arrive lowercased, so the literal keys an
 * expression uses are lowercased: headers["X-Tier"], headers.Foo, "X-Tier" in headers.
 */
export function lowercaseHeaderKeys(expr: string, ast: ASTNode): string {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const literal = (n: unknown): void => {
    if (isNode(n) && n.op === 'value' && typeof n.args === 'string' && n.args !== n.args.toLowerCase()) {
      edits.push({ start: n.start, end: n.end, text: JSON.stringify(n.args.toLowerCase()) });
    }
  };
  walk(ast, (n) => {
    if (n.op === '[]' && isVar(n.args[0], 'headers')) literal(n.args[1]);
    else if (n.op === 'in' && isVar(n.args[1], 'headers')) literal(n.args[0]);
    else if (n.op === '.' && isVar(n.args[0], 'headers') && n.args[1] !== n.args[1].toLowerCase()) {
      edits.push({ start: n.start, end: n.end, text: `headers.${n.args[1].toLowerCase()}` });
    }
  });
  if (edits.length === 0) return expr;
  edits.sort((a, b) => b.start - a.start);
  let out = expr;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

const STRICT_BINARY = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', '+', '-', '*', '/', '%']);
// Receiver methods that always evaluate their receiver and arguments (macros are not in here).
const STRICT_METHODS = new Set(['startsWith', 'endsWith', 'contains', 'matches', 'size', 'lowerAscii', 'upperAscii', 'trim']);
const STRICT_FUNCTIONS = new Set(['size', 'string', 'int', 'double', 'matches']);

/** Keys whose absence makes evaluating `n` raise "no such key", whatever the other values are. */
function strictKeys(n: ASTNode, out: KeyAccess[]): void {
  const a = literalAccess(n);
  if (a) {
    if (!out.some((k) => k.map === a.map && k.key === a.key)) out.push(a);
    return;
  }
  switch (n.op) {
    case '!_':
    case '-_':
      strictKeys(n.args, out);
      return;
    case 'list':
      for (const e of n.args) strictKeys(e, out);
      return;
    case 'rcall':
      if (!STRICT_METHODS.has(n.args[0])) return;
      strictKeys(n.args[1], out);
      for (const e of n.args[2]) strictKeys(e, out);
      return;
    case 'call':
      if (!STRICT_FUNCTIONS.has(n.args[0])) return;
      for (const e of n.args[1]) strictKeys(e, out);
      return;
    default:
      if (STRICT_BINARY.has(n.op)) {
        const [l, r] = n.args as unknown as [ASTNode, ASTNode];
        strictKeys(l, out);
        strictKeys(r, out);
      }
  }
}

/**
 * Missing-key guards. In CEL a missing map key is an error, and routing turns an expression that
 * errs into "no match". Reached only through `&&`/`||` (the monotone top of the tree), an error
 * and `false` give the same final answer, so a leaf that must read `headers["k"]` is rewritten to
 * `"k" in headers && (leaf)`: same result, without the library throwing per request (a throw
 * costs 1-2 µs inside a decision even without a stack trace; the guard tens of ns). Keys read
 * anywhere else (under `?:`, in macros) still raise the error. Undefined when nothing needs a guard.
 */
export function guardMissingKeys(ast: ASTNode): string | undefined {
  let guarded = false;
  const gen = (n: ASTNode): string => {
    if (n.op === '&&' || n.op === '||') return `(${gen(n.args[0])}) ${n.op} (${gen(n.args[1])})`;
    const keys: KeyAccess[] = [];
    strictKeys(n, keys);
    if (keys.length === 0) return cel().serialize(n);
    guarded = true;
    const guards = keys.map((k) => `${JSON.stringify(k.key)} in ${k.map}`).join(' && ');
    return `${guards} && (${cel().serialize(n)})`;
  };
  const out = gen(ast);
  return guarded ? out : undefined;
}

/** The RE2-backed `string.matches(string)` the environment registers (see cel.ts). */
export const RE2_MATCHES = 'matchesRe2';

/**
 * Every `x.matches(p)` as `x.matchesRe2(p)`: the library's `matches` cannot be replaced in place,
 * and it runs a backtracking RegExp. Undefined when the expression has no `matches` call.
 */
export function routeMatchesToRe2(ast: ASTNode): string | undefined {
  let found = false;
  // A plain copy: the library's nodes are not ours to mutate, and serialize reads only op/args.
  const copy = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(copy);
    if (!isNode(x)) return x;
    if (x.op === 'value' || x.op === 'id') return { op: x.op, args: x.args };
    if (x.op === 'rcall' && x.args[0] === 'matches') {
      found = true;
      return { op: 'rcall', args: [RE2_MATCHES, copy(x.args[1]), copy(x.args[2])] };
    }
    return { op: x.op, args: copy(x.args) };
  };
  const out = copy(ast) as ASTNode;
  return found ? cel().serialize(out) : undefined;
}
