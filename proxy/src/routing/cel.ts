// The only door to the CEL library. Routing rules compile here once (parse + type check against
// the declared variables) and evaluate per request to a plain boolean: a missing header or
// parameter is `false`, any other runtime error is `false` too and is reported once per
// expression so the caller can warn. Library choice: docs/routing.md (bench/cel-compare.ts).
import type * as Cel from '@marcbachmann/cel-js';
import type { Environment, ASTNode } from '@marcbachmann/cel-js';
import { createRequire } from 'node:module';
import { guardMissingKeys, keyAccesses, lowercaseHeaderKeys, RE2_MATCHES, routeMatchesToRe2, walk } from './cel-rewrite.ts';
import { cachedRe2, compileRe2, RegexSyntaxError, type Re2 } from './regex.ts';

// Loaded with the first rule compiled: a gateway without routing rules never loads the interpreter.
let celModule: typeof Cel | undefined;
const cel = (): typeof Cel => (celModule ??= createRequire(import.meta.url)('@marcbachmann/cel-js') as typeof Cel);

/** The variables a routing expression sees (spec: "CEL variables available to routing rules"). */
export interface CelVars {
  model: string;
  provider: string;
  request_type: string;
  /** Lowercased header names. */
  headers: Record<string, string>;
  params: Record<string, string>;
  virtual_key_id: string;
  virtual_key_name: string;
  team_id: string;
  team_name: string;
  customer_id: string;
  customer_name: string;
  /** Percentages, 0-100+, as JS numbers (CEL double). */
  budget_used: number;
  tokens_used: number;
  request: number;
  /** '' when unknown; rules that reference it are not evaluated then (see decide.ts). */
  complexity_tier: string;
}

export type CelVarName = keyof CelVars;

export const VARIABLE_TYPES: Readonly<Record<CelVarName, string>> = {
  model: 'string',
  provider: 'string',
  request_type: 'string',
  headers: 'map<string, string>',
  params: 'map<string, string>',
  virtual_key_id: 'string',
  virtual_key_name: 'string',
  team_id: 'string',
  team_name: 'string',
  customer_id: 'string',
  customer_name: 'string',
  budget_used: 'double',
  tokens_used: 'double',
  request: 'double',
  complexity_tier: 'string',
};

export class CelCompileError extends Error {
  /** The library's one-line reason, without our prefix. */
  readonly detail: string;
  /** `syntax`: the expression does not parse (or its regex does not compile); `type`: it parses but does not type-check. */
  readonly kind: 'syntax' | 'type';
  constructor(detail: string, kind: 'syntax' | 'type' = 'syntax') {
    super(detail);
    this.name = 'CelCompileError';
    this.detail = detail;
    this.kind = kind;
  }
}

export interface CompiledExpression {
  /** The expression as written ('' for the always-true empty expression). */
  readonly source: string;
  /** Variables the expression reads, e.g. to skip rules on `complexity_tier` when it is unknown. */
  readonly references: ReadonlySet<CelVarName>;
  /** True on a match; false on no match, a missing key, or a runtime error (reported once). */
  evaluate(vars: CelVars): boolean;
}

export interface CompileCelOptions {
  /** Called once per expression, on its first runtime error other than a missing map key. */
  onEvalError?(message: string): void;
}

// Environments are expensive to build and immutable once used: one for the process.
let sharedEnv: Environment | undefined;
function env(): Environment {
  if (!sharedEnv) {
    // Mixed-type list literals (`x in ["a", 1]`) are legal CEL; don't reject them at compile time.
    const e = new (cel().Environment)({ homogeneousAggregateLiterals: false, limits: { maxAstNodes: 2000, maxDepth: 64 } });
    for (const [name, type] of Object.entries(VARIABLE_TYPES)) e.registerVariable(name, type);
    // The capacity variables are doubles; `budget_used == 0` would otherwise not type-check
    // (CEL orders int and double, but has no mixed `==`). Registers `int == double` and `!=` too.
    e.registerOperator('double == int', (a: number, b: bigint) => a === Number(b));
    // The library's own `matches` is a backtracking RegExp; every `matches` call is rewritten to
    // this one (cel-rewrite.ts), which runs RE2 in linear time.
    e.registerFunction(`string.${RE2_MATCHES}(string): bool`, (s: string, pattern: string) => re2For(pattern).test(s));
    sharedEnv = e;
  }
  return sharedEnv;
}

// The literal patterns of the expression being evaluated (compiled with it, once per snapshot).
// Evaluation is synchronous, so one slot is enough.
let activePatterns: ReadonlyMap<string, Re2> | undefined;

function re2For(pattern: string): Re2 {
  const literal = activePatterns?.get(pattern);
  if (literal) return literal;
  try {
    return cachedRe2(pattern);
  } catch (err) {
    // A pattern computed from request data: say why, but don't echo the request's value.
    throw new Error(`Invalid regular expression: ${err instanceof RegexSyntaxError ? err.reason : 'not RE2 syntax'}`);
  }
}

const EMPTY_REFS: ReadonlySet<CelVarName> = new Set();
const ALWAYS: CompiledExpression = { source: '', references: EMPTY_REFS, evaluate: () => true };

/** What compiling one expression text yields; pure in the text, so shared by every compile of it. */
interface Parsed {
  program: Program;
  references: ReadonlySet<CelVarName>;
  keys: ReturnType<typeof keyAccesses>['keys'];
  dynamic: boolean;
  patterns: ReturnType<typeof literalPatterns>;
}

/**
 * Every configuration load compiles every rule (and the operator checks each RoutingRule on every
 * render): most expressions are the ones compiled last time. Parsing and rewriting cost about a
 * millisecond each; the programs are pure functions of the text, so they are kept, a bounded number.
 */
const PARSED_CACHE_SIZE = 4096;
const parsedCache = new Map<string, Parsed>();

function parseExpression(expr: string): Parsed {
  const hit = parsedCache.get(expr);
  if (hit) {
    // Most recently used last: the oldest is evicted first.
    parsedCache.delete(expr);
    parsedCache.set(expr, hit);
    return hit;
  }
  let program = parseChecked(expr);
  program = reparse(lowercaseHeaderKeys(expr, program.ast), expr, program);
  const references = collectReferences(program.ast);
  const { keys, dynamic } = keyAccesses(program.ast);
  const guarded = guardMissingKeys(program.ast);
  if (guarded !== undefined) program = reparse(guarded, '', program);
  const patterns = literalPatterns(program.ast);
  const routed = routeMatchesToRe2(program.ast);
  if (routed !== undefined) program = parseRe2(routed);
  const parsed: Parsed = { program, references, keys, dynamic, patterns };
  parsedCache.set(expr, parsed);
  if (parsedCache.size > PARSED_CACHE_SIZE) parsedCache.delete(parsedCache.keys().next().value as string);
  return parsed;
}

/** Compiles once; throws CelCompileError (syntax, unknown variable, type mismatch, non-boolean). */
export function compileCel(expr: string, opts: CompileCelOptions = {}): CompiledExpression {
  if (expr.trim() === '') return ALWAYS;
  const { program, references, keys, dynamic, patterns } = parseExpression(expr);

  let reported = false;
  const report = (message: string): void => {
    if (reported) return;
    reported = true;
    opts.onEvalError?.(message);
  };
  const run = (vars: CelVars): boolean => {
    let out: unknown;
    activePatterns = patterns;
    try {
      out = program(vars);
    } catch (err) {
      if (!isMissingKey(err)) report(`evaluation error: ${summary(err, false)}`);
      return false;
    } finally {
      activePatterns = undefined;
    }
    if (out === true) return true;
    if (out !== false) report(`expression returned ${typeof out}, not a boolean`);
    return false;
  };
  // A missing key the guards could not cover makes the library throw, and most of a throw's cost
  // is the stack trace nobody reads. Skip it, on this path only.
  const runQuietly = (vars: CelVars): boolean => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return run(vars);
    } finally {
      Error.stackTraceLimit = limit;
    }
  };
  const evaluate =
    dynamic
      ? runQuietly
      : keys.length === 0
        ? run
        : (vars: CelVars): boolean => {
            for (const k of keys) if (!Object.hasOwn(vars[k.map], k.key)) return runQuietly(vars);
            return run(vars);
          };
  return { source: expr, references, evaluate };
}

type Program = ReturnType<Environment['parse']>;

/** The rewritten text when it compiles, else the program we already have (never worse). */
function reparse(text: string, original: string, program: Program): Program {
  if (text === original) return program;
  try {
    return parseChecked(text);
  } catch {
    return program;
  }
}

/** Compiles every literal `matches()` pattern now: a pattern RE2 refuses fails the rule here. */
function literalPatterns(ast: ASTNode): ReadonlyMap<string, Re2> | undefined {
  let out: Map<string, Re2> | undefined;
  walk(ast, (n) => {
    if (n.op !== 'rcall' || (n.args[0] !== 'matches' && n.args[0] !== RE2_MATCHES)) return;
    const arg = n.args[2][0];
    if (arg?.op !== 'value' || typeof arg.args !== 'string' || out?.has(arg.args)) return;
    try {
      (out ??= new Map()).set(arg.args, compileRe2(arg.args));
    } catch (err) {
      throw new CelCompileError(err instanceof Error ? err.message : String(err));
    }
  });
  return out;
}

/** The RE2 rewrite is not optional: if it does not compile, the rule does not either. */
function parseRe2(text: string): Program {
  let program: Program;
  try {
    program = parseChecked(text);
  } catch (err) {
    throw new CelCompileError(`cannot route matches() through RE2: ${err instanceof Error ? err.message : String(err)}`);
  }
  walk(program.ast, (n) => {
    if (n.op === 'rcall' && n.args[0] === 'matches') throw new CelCompileError('cannot route matches() through RE2');
  });
  return program;
}

function parseChecked(expr: string): Program {
  let program: Program;
  try {
    program = env().parse(expr);
  } catch (err) {
    throw new CelCompileError(summary(err));
  }
  const checked = program.check();
  if (!checked.valid) throw new CelCompileError(summary(checked.error), 'type');
  // `dyn` can still be a boolean at run time; anything else never is.
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new CelCompileError(`expression must return a boolean, not ${checked.type}`, 'type');
  }
  return program;
}

/** The library's messages carry a multi-line source excerpt: keep the first line and the column. */
function summary(err: unknown, withColumn = true): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as Error & { summary?: unknown; range?: { start: number } };
  const head = typeof e.summary === 'string' && e.summary ? e.summary : e.message.split('\n')[0];
  return withColumn && e.range && typeof e.range.start === 'number' ? `${head} (at column ${e.range.start + 1})` : head;
}

function isMissingKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'no_such_key';
}

function collectReferences(ast: ASTNode): ReadonlySet<CelVarName> {
  const refs = new Set<CelVarName>();
  walk(ast, (n) => {
    if (n.op === 'id' && Object.hasOwn(VARIABLE_TYPES, n.args)) refs.add(n.args as CelVarName);
  });
  return refs;
}
