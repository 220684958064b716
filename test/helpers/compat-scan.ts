// Finds the compatibility cells test files declare, without running them: every `compat(...)` call
// (test/helpers/compat.ts) is evaluated from the source. Its arguments may be literals, constants of
// the file or imported from a relative module (`FORMATS`, `MODELS[format]`), and variables of the
// enclosing `for (const x of LIST)` loops (destructuring included), which are unrolled. Anything else
// is an error naming the file and line, so a tag can never be silently missed.
import ts from 'typescript';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { toCell, type Cell } from './compat.ts';

export interface DeclaredCell extends Cell {
  /** Repository-relative path of the test file, with forward slashes. */
  file: string;
  line: number;
}

type Value = string | number | boolean | null | undefined | Value[] | { [key: string]: Value };
type Env = ReadonlyMap<string, Value>;

interface Module {
  path: string;
  source: ts.SourceFile;
  /** Top-level `const` initializers by name. */
  consts: Map<string, ts.Expression>;
  /** Local name → where a named import comes from. */
  imports: Map<string, { path: string; name: string }>;
  /** The local name of the compat helper, when the module imports it. */
  compatName?: string;
}

const modules = new Map<string, Module>();

function load(path: string): Module {
  const cached = modules.get(path);
  if (cached) return cached;
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const mod: Module = { path, source, consts: new Map(), imports: new Map() };
  for (const st of source.statements) {
    if (ts.isVariableStatement(st) && st.declarationList.flags & ts.NodeFlags.Const) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) mod.consts.set(d.name.text, d.initializer);
    }
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && st.moduleSpecifier.text.startsWith('.')) {
      const from = resolve(dirname(path), st.moduleSpecifier.text);
      const named = st.importClause?.namedBindings;
      if (!named || !ts.isNamedImports(named)) continue;
      for (const spec of named.elements) {
        const name = (spec.propertyName ?? spec.name).text;
        mod.imports.set(spec.name.text, { path: from, name });
        if (name === 'compat' && /helpers\/compat\.ts$/.test(from.replaceAll('\\', '/'))) mod.compatName = spec.name.text;
      }
    }
  }
  modules.set(path, mod);
  return mod;
}

class ScanError extends Error {}

function fail(mod: Module, node: ts.Node, why: string): never {
  const { line } = mod.source.getLineAndCharacterOfPosition(node.getStart(mod.source));
  throw new ScanError(`${mod.path}:${line + 1}: ${why}: \`${node.getText(mod.source)}\` (compat() arguments must be literals, constants, or variables of for-of loops over literal lists)`);
}

function lookup(mod: Module, name: string, env: Env, at: ts.Node, seen: Set<string>): Value {
  if (env.has(name)) return env.get(name);
  const key = `${mod.path}#${name}`;
  if (seen.has(key)) fail(mod, at, 'circular constant');
  const init = mod.consts.get(name);
  if (init) return evaluate(mod, init, new Map(), new Set([...seen, key]));
  const imp = mod.imports.get(name);
  if (imp) {
    const from = load(imp.path);
    if (!from.consts.has(imp.name)) fail(mod, at, `'${imp.name}' is not a top-level constant of ${imp.path}`);
    return lookup(from, imp.name, new Map(), at, new Set([...seen, key]));
  }
  return fail(mod, at, `cannot resolve '${name}'`);
}

function evaluate(mod: Module, node: ts.Expression, env: Env, seen: Set<string> = new Set()): Value {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isTemplateExpression(node)) {
    return node.head.text + node.templateSpans.map((s) => String(evaluate(mod, s.expression, env, seen)) + s.literal.text).join('');
  }
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isParenthesizedExpression(node) || ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node)) {
    return evaluate(mod, node.expression, env, seen);
  }
  if (ts.isArrayLiteralExpression(node)) {
    return node.elements.flatMap((e) => {
      if (!ts.isSpreadElement(e)) return [evaluate(mod, e, env, seen)];
      const spread = evaluate(mod, e.expression, env, seen);
      return Array.isArray(spread) ? spread : fail(mod, e, 'spread of a non-array');
    });
  }
  if (ts.isObjectLiteralExpression(node)) {
    const out: Record<string, Value> = {};
    for (const p of node.properties) {
      if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) out[p.name.text] = evaluate(mod, p.initializer, env, seen);
      else if (ts.isShorthandPropertyAssignment(p)) out[p.name.text] = lookup(mod, p.name.text, env, p, seen);
      else fail(mod, p, 'unsupported property');
    }
    return out;
  }
  if (ts.isIdentifier(node)) return lookup(mod, node.text, env, node, seen);
  if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
    const target = evaluate(mod, node.expression, env, seen);
    const key = ts.isPropertyAccessExpression(node) ? node.name.text : evaluate(mod, node.argumentExpression, env, seen);
    if (target === null || typeof target !== 'object' || (typeof key !== 'string' && typeof key !== 'number')) fail(mod, node, 'cannot index');
    return (target as Record<string | number, Value>)[key];
  }
  return fail(mod, node, 'cannot evaluate');
}

/** The variables one iteration of a for-of loop binds. */
function bind(mod: Module, name: ts.BindingName, item: Value, into: Map<string, Value>): void {
  if (ts.isIdentifier(name)) {
    into.set(name.text, item);
    return;
  }
  if (item === null || typeof item !== 'object') fail(mod, name, 'cannot destructure');
  name.elements.forEach((el, i) => {
    if (ts.isOmittedExpression(el)) return;
    if (el.dotDotDotToken || el.initializer) fail(mod, el, 'unsupported binding');
    const prop = ts.isObjectBindingPattern(name) ? ((el.propertyName ?? el.name) as ts.Identifier).text : i;
    bind(mod, el.name, (item as Record<string | number, Value>)[prop], into);
  });
}

/** Every binding of the for-of loops around `node`, outermost first. */
function loopEnvs(mod: Module, node: ts.Node): Env[] {
  const loops: ts.ForOfStatement[] = [];
  for (let n: ts.Node = node; n.parent; n = n.parent) {
    if (ts.isForOfStatement(n.parent) && n === n.parent.statement) loops.unshift(n.parent);
  }
  let envs: Env[] = [new Map()];
  for (const loop of loops) {
    const init = loop.initializer;
    if (!ts.isVariableDeclarationList(init) || init.declarations.length !== 1) fail(mod, loop, 'unsupported loop');
    envs = envs.flatMap((env) => {
      const list = evaluate(mod, loop.expression, env);
      if (!Array.isArray(list)) fail(mod, loop.expression, 'loop over a non-list');
      return list.map((item) => {
        const next = new Map(env);
        bind(mod, init.declarations[0].name, item, next);
        return next;
      });
    });
  }
  return envs;
}

/** The cells one test file declares (none if it does not import compat). */
export function scanFile(path: string, root: string): DeclaredCell[] {
  const mod = load(resolve(path));
  const name = mod.compatName;
  if (!name) return [];
  const file = relative(root, mod.path).replaceAll('\\', '/');
  const out: DeclaredCell[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name) {
      if (node.arguments.length !== 3) fail(mod, node, 'compat() takes three arguments');
      const line = mod.source.getLineAndCharacterOfPosition(node.getStart(mod.source)).line + 1;
      for (const env of loopEnvs(mod, node)) {
        const [prefix, operation, upstream] = node.arguments.map((a) => evaluate(mod, a, env));
        if (typeof prefix !== 'string' || typeof operation !== 'string' || typeof upstream !== 'string') fail(mod, node, 'arguments are not strings');
        try {
          out.push({ ...toCell(prefix, operation, upstream), file, line });
        } catch (err) {
          fail(mod, node, (err as Error).message);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(mod.source);
  return out;
}

/** Every `*.test.ts` under `dir` (recursively), sorted. */
export function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join(dir, f))
    .sort();
}

/** The cells the integration tests declare. */
export function scanIntegrationTests(root: string): DeclaredCell[] {
  return testFiles(join(root, 'test', 'integration')).flatMap((f) => scanFile(f, root));
}
