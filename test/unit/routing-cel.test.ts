import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Environment } from '@marcbachmann/cel-js';
import { CelCompileError, compileCel, type CelVars } from '../../proxy/src/routing/cel.ts';
import { vars } from './routing-helpers.ts';

const v = vars({
  headers: { 'x-tier': 'premium', beta: 'on' },
  params: { region: 'eu' },
  budget_used: 85.5,
  request: 50,
  team_name: 'ml',
  complexity_tier: 'COMPLEX',
});

function ev(expr: string, with_: CelVars = v): boolean {
  return compileCel(expr).evaluate(with_);
}

test('CEL rule 1: every operator and string function the spec lists', () => {
  const cases: Array<[string, boolean]> = [
    ['provider == "openai"', true],
    ['provider != "openai"', false],
    ['budget_used > 80', true], // double variable against an int literal
    ['budget_used < 80', false],
    ['request >= 50', true],
    ['request <= 49.5', false],
    ['tokens_used == 0', true], // double == int is accepted (capacity values are doubles)
    ['tokens_used != 0', false],
    ['provider == "openai" && model == "gpt-4o"', true],
    ['provider == "anthropic" || model == "gpt-4o"', true],
    ['!(provider == "anthropic")', true],
    ['model in ["gpt-4o", "gpt-4.1"]', true],
    ['request_type in ["embedding", "batch"]', false],
    ['headers["x-tier"] in ["premium", "enterprise"]', true],
    ['model.startsWith("gpt-")', true],
    ['model.endsWith("4o")', true],
    ['model.contains("t-4")', true],
    ['model.matches("^gpt-4(o|\\\\.1)$")', true],
    ['params["region"] == "eu"', true],
    ['has(headers.beta)', true],
    ['has(headers.gamma)', false],
    ['"x-tier" in headers', true],
    ['complexity_tier == "COMPLEX"', true],
    ['(provider == "openai" && (model.startsWith("gpt-4") || request_type == "embedding")) || (budget_used >= 90 && !(team_name == "ops"))', true],
    ['provider == "openai" && (model.startsWith("claude") || (request >= 60 && tokens_used > 10))', false],
  ];
  for (const [expr, want] of cases) assert.equal(ev(expr), want, expr);
});

test('CEL rule 4: a missing header or parameter makes the expression false, never throws', () => {
  for (const expr of [
    'headers["x-missing"] == "premium"',
    'headers["x-missing"] != "premium"',
    '!(headers["x-missing"] == "premium")',
    'headers["x-missing"].startsWith("")',
    'params["tier"] == "gold"',
    'headers.nothing == "x"',
    'headers["x-missing"] == "v" ? false : true',
  ]) {
    assert.equal(ev(expr), false, expr);
  }
  // CEL's logical operators absorb an error when the other side decides the answer.
  assert.equal(ev('headers["x-missing"] == "a" || provider == "openai"'), true);
  assert.equal(ev('headers["x-missing"] == "a" && provider == "openai"'), false);
});

test('header names are case-insensitive in every spelling of a lookup; params are not', () => {
  assert.equal(ev('headers["X-Tier"] == "premium"'), true);
  assert.equal(ev('has(headers.BETA)'), true);
  assert.equal(ev('headers.Beta == "on"'), true);
  assert.equal(ev('"X-TIER" in headers'), true);
  assert.equal(ev('params["Region"] == "eu"'), false);
});

test('compile errors are CelCompileError with a one-line reason and column', () => {
  const cases: Array<[string, RegExp]> = [
    ['model == ', /^Unexpected token: EOF \(at column 10\)$/],
    ['model = "gpt-4o"', /^Unexpected character: = \(at column 7\)$/],
    ['modle == "gpt-4o"', /^Unknown variable: modle/],
    ['model > 5', /no such overload: string > int/],
    ['budget_used == "high"', /no such overload/],
    ['budget_used', /must return a boolean, not double/],
  ];
  for (const [expr, want] of cases) {
    assert.throws(
      () => compileCel(expr),
      (err: unknown) => err instanceof CelCompileError && want.test(err.detail) && !err.detail.includes('\n'),
      expr,
    );
  }
});

test('CEL rule 4: a runtime error is false and reported once per expression', () => {
  const reports: string[] = [];
  const c = compileCel('model.matches(headers["x-re"])', { onEvalError: (m) => reports.push(m) });
  const bad = vars({ headers: { 'x-re': '[' } });
  assert.equal(c.evaluate(bad), false);
  assert.equal(c.evaluate(bad), false);
  assert.equal(reports.length, 1);
  assert.match(reports[0], /Invalid regular expression/);
  // A missing key is not an error worth reporting.
  assert.equal(c.evaluate(vars()), false);
  assert.equal(reports.length, 1);
  assert.equal(c.evaluate(vars({ headers: { 'x-re': '^gpt' } })), true);
});

test('a variable of the wrong type at run time is a reported mismatch, not a crash', () => {
  const reports: string[] = [];
  const c = compileCel('budget_used > 80', { onEvalError: (m) => reports.push(m) });
  const wrong = { ...vars(), budget_used: 'lots' } as unknown as CelVars;
  assert.equal(c.evaluate(wrong), false);
  assert.equal(reports.length, 1);
  assert.match(reports[0], /budget_used/);
});

test('the empty expression always matches', () => {
  assert.equal(compileCel('').evaluate(vars()), true);
  assert.equal(compileCel('   ').evaluate(vars()), true);
  assert.equal(compileCel('').source, '');
});

test('references list the variables an expression reads', () => {
  assert.deepEqual([...compileCel('complexity_tier == "SIMPLE" && headers["a"] == "b"').references].sort(), ['complexity_tier', 'headers']);
  assert.equal(compileCel('model == "x"').references.has('complexity_tier'), false);
  assert.equal(compileCel('model == "x"').source, 'model == "x"');
});

// The missing-key guards rewrite the expression; it must answer exactly what the library answers
// on the expression as written, with an error counting as "no match".
test('compiled expressions agree with the plain library on every header/param combination', () => {
  const env = new Environment({ homogeneousAggregateLiterals: false })
    .registerVariable('model', 'string')
    .registerVariable('provider', 'string')
    .registerVariable('request_type', 'string')
    .registerVariable('headers', 'map<string, string>')
    .registerVariable('params', 'map<string, string>')
    .registerVariable('budget_used', 'double')
    .registerVariable('team_name', 'string');
  const plain = (expr: string, x: CelVars): boolean => {
    try {
      return env.parse(expr)(x) === true;
    } catch {
      return false;
    }
  };
  const exprs = [
    'headers["a"] == "1"',
    'headers["a"] != "1"',
    '!(headers["a"] == "1")',
    'headers["a"] == "1" || params["b"] == "2"',
    'headers["a"] == "1" && params["b"] == "2"',
    '!(headers["a"] == "1" && params["b"] == "2")',
    '(headers["a"] == "1" || model == "gpt-4o") && !(params["b"] != "2")',
    'headers["a"] == "1" ? params["b"] == "2" : model == "gpt-4o"',
    'headers["a"].startsWith("1") || headers["a"].size() > 3',
    'headers["a"] + params["b"] == "12"',
    'headers["a"] in ["1", "3"] && budget_used > 50',
    'has(headers.a) && headers.a == "1"',
    '!has(headers.a) || headers.a != "1"',
    '[headers["a"], "x"].exists(e, e == "1")',
    'size(params["b"]) == 1 || team_name == "ml"',
    'headers[params["b"]] == "1"',
    '(headers["a"] == "1") == (params["b"] == "2")',
  ];
  const values = [undefined, '1', '2', '3'];
  for (const expr of exprs) {
    const compiled = compileCel(expr);
    for (const a of values) {
      for (const b of values) {
        for (const model of ['gpt-4o', 'other']) {
          const x = vars({
            model,
            budget_used: 60,
            team_name: b === '3' ? 'ml' : 'ops',
            headers: a === undefined ? {} : { a, ...(b === '2' ? { '2': '1' } : {}) },
            params: b === undefined ? {} : { b },
          });
          assert.equal(compiled.evaluate(x), plain(expr, x), `${expr} with a=${a} b=${b} model=${model}`);
        }
      }
    }
  }
});
