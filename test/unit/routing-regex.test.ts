// CEL matches() runs RE2: linear time on hostile input, RE2 syntax and semantics, and patterns RE2
// cannot compile (backreferences, lookaround) refused when the rule is compiled, not per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelCompileError, compileCel, type CelVars } from '../../proxy/src/routing/cel.ts';
import { compileRules, validateRuleForWrite, CEL_COMPILE_ERROR } from '../../proxy/src/routing/rules.ts';
import { compileRe2, RegexSyntaxError } from '../../proxy/src/routing/regex.ts';
import { vars } from './routing-helpers.ts';

function ev(expr: string, with_: CelVars = vars()): boolean {
  return compileCel(expr).evaluate(with_);
}

/**
 * The CPU time `fn` takes, in ms: a busy machine stretches wall-clock time (the process waits for a
 * core), not the work done, and a backtracking engine's blow-up is work.
 */
function cpuMs(fn: () => void): number {
  const t = process.cpuUsage();
  fn();
  const used = process.cpuUsage(t);
  return (used.user + used.system) / 1000;
}

test('a nested quantifier against an adversarial header answers in linear time', () => {
  const rule = compileCel('headers["x-a"].matches("^(a+)+$")');
  // A backtracking engine needs ~2^n steps here: seconds at 30 characters, forever at 10 KB.
  for (const n of [30, 40, 10_240, 1_000_000]) {
    const hostile = vars({ headers: { 'x-a': `${'a'.repeat(n)}!` } });
    let answer: boolean | undefined;
    const ms = cpuMs(() => (answer = rule.evaluate(hostile)));
    assert.equal(answer, false);
    assert.ok(ms < 500, `${n + 1} bytes took ${ms.toFixed(1)} ms of CPU`);
  }
  assert.equal(rule.evaluate(vars({ headers: { 'x-a': 'aaaa' } })), true);
});

test('the same holds for a pattern that arrives with the request', () => {
  const rule = compileCel('headers["x-a"].matches(headers["x-re"])');
  const hostile = vars({ headers: { 'x-a': `${'a'.repeat(40)}!`, 'x-re': '^(a|aa)+$' } });
  const ms = cpuMs(() => assert.equal(rule.evaluate(hostile), false));
  assert.ok(ms < 500, `took ${ms.toFixed(1)} ms of CPU`);
});

test('RE2 semantics: unanchored search, inline flags, \\z, Perl classes, named groups', () => {
  const cases: Array<[string, boolean]> = [
    ['model.matches("4o")', true], // a partial match, as CEL specifies (RE2 PartialMatch)
    ['model.matches("^4o")', false],
    ['model.matches("^gpt-4(o|\\\\.1)$")', true],
    ['model.matches("(?i)^GPT-4O$")', true], // RE2 inline flag (a SyntaxError for JS RegExp)
    ['model.matches("4o\\\\z")', true], // \z is end of text in RE2, a literal "z" in JS
    ['model.matches("(?P<family>gpt)-\\\\d")', true], // Python-style named group, RE2-only
    ['model.matches("^[[:alpha:]]+-[[:digit:]][[:alpha:]]$")', true], // POSIX classes, RE2-only
    ['headers["x-multi"].matches("^b$")', false], // ^ and $ are text anchors unless (?m)
    ['headers["x-multi"].matches("(?m)^b$")', true],
    ['headers["x-multi"].matches("a.b")', false], // . does not match \n unless (?s)
    ['headers["x-multi"].matches("(?s)a.b")', true],
    ['["x", "gpt-4"].exists(m, m.matches("^gpt"))', true], // inside a macro
    ['model == "none" ? false : model.matches("gpt")', true], // under ?:
    ['headers["x-missing"].matches("a")', false], // a missing header is false, as everywhere
  ];
  const v = vars({ headers: { 'x-multi': 'a\nb' } });
  for (const [expr, want] of cases) assert.equal(ev(expr, v), want, expr);
});

test('patterns RE2 cannot compile are refused at compile time, saying why', () => {
  const cases: Array<[string, RegExp]> = [
    ['model.matches("(g)\\\\1")', /backreferences are not supported/],
    ['model.matches("(?<n>g)\\\\k<n>")', /backreferences are not supported/],
    ['model.matches("gpt(?=-4)")', /lookahead and lookbehind are not supported/],
    ['model.matches("gpt(?!-3)")', /lookahead and lookbehind are not supported/],
    ['model.matches("(?<=gpt-)4o")', /lookahead and lookbehind are not supported/],
    ['model.matches("(?<!x)4o")', /lookahead and lookbehind are not supported/],
    ['model.matches("[")', /missing closing \]/],
    ['model.matches("a{1001}")', /invalid repeat count/],
    ['provider == "openai" && model.matches("(a)\\\\1")', /backreferences/], // anywhere in the expression
  ];
  for (const [expr, want] of cases) {
    assert.throws(
      () => compileCel(expr),
      (err: unknown) => err instanceof CelCompileError && want.test(err.detail) && /invalid regular expression/.test(err.detail) && /RE2/.test(err.detail),
      expr,
    );
  }
});

test('compileRe2 names the pattern; the reason alone carries no pattern text', () => {
  assert.throws(
    () => compileRe2('x(?=secret-value)'),
    (err: unknown) => err instanceof RegexSyntaxError && err.message.includes('"x(?=secret-value)"') && !err.reason.includes('secret-value'),
  );
  assert.equal(compileRe2('b').test('abc'), true);
});

test('a request-supplied pattern RE2 refuses is false, reported once, without echoing the value', () => {
  const reports: string[] = [];
  const rule = compileCel('model.matches(headers["x-re"])', { onEvalError: (m) => reports.push(m) });
  assert.equal(rule.evaluate(vars({ headers: { 'x-re': '(?=private-token)' } })), false);
  assert.equal(rule.evaluate(vars({ headers: { 'x-re': '(a)\\1' } })), false);
  assert.equal(reports.length, 1);
  assert.match(reports[0], /Invalid regular expression: lookahead and lookbehind are not supported/);
  assert.doesNotMatch(reports[0], /private-token/);
  assert.equal(rule.evaluate(vars({ headers: { 'x-re': '^gpt' } })), true);
});

test('write time: the management API check rejects a lookaround pattern on cel_expression', () => {
  const errors = validateRuleForWrite({ name: 'r', cel_expression: 'model.matches("gpt(?=-4)")', targets: [{ provider: 'openai', weight: 1 }] });
  assert.equal(errors.length, 1);
  assert.equal(errors[0].path, 'cel_expression');
  assert.match(errors[0].message, new RegExp(`^${CEL_COMPILE_ERROR}: invalid regular expression .*lookahead`));
  assert.deepEqual(validateRuleForWrite({ name: 'r', cel_expression: 'model.matches("^gpt-4")', targets: [{ provider: 'openai', weight: 1 }] }), []);
});

test('config load: a rule with a backreference is skipped with a warning naming the rule; the others work', () => {
  const warnings: string[] = [];
  const compiled = compileRules(
    [
      { name: 'backref', cel_expression: 'model.matches("(g)\\\\1")', targets: [{ provider: 'anthropic', weight: 1 }] },
      { name: 'fine', cel_expression: 'model.matches("^gpt")', targets: [{ provider: 'gemini', weight: 1 }] },
    ],
    { warn: (m) => warnings.push(m) },
  );
  assert.equal(compiled.size, 1);
  assert.equal(compiled.global[0].name, 'fine');
  assert.equal(compiled.global[0].expression.evaluate(vars()), true);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /routing rule "backref" skipped: .*backreferences are not supported/);
});
