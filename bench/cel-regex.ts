// CEL matches(): the RE2 engine routing rules use (re2js, pure JavaScript) against the backtracking
// RegExp the CEL library ships with, per evaluation of a typical routing rule and on a hostile
// input. Numbers in docs/routing.md ("Regular expressions").
//
//   node bench/cel-regex.ts
import { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';
import { compileCel, VARIABLE_TYPES, type CelVars } from '../proxy/src/routing/cel.ts';
import { vars } from '../test/unit/routing-helpers.ts';

const BASE: CelVars = vars({
  model: 'gpt-4o-2024-08-06',
  headers: { 'x-tier': 'enterprise', 'user-agent': 'openai-python/1.54.0 (linux; x86_64)' },
});

const RULES = [
  'model.matches("^gpt-4(o|\\\\.1)(-\\\\d{4}-\\\\d{2}-\\\\d{2})?$")',
  'headers["x-tier"].matches("^(premium|enterprise)$")',
  'headers["user-agent"].matches("python/1\\\\.[0-9]+")',
];

/** ns per call, median of 5 runs of `n` calls. */
function perCall(fn: () => unknown, n = 200_000): number {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    runs.push(Number(process.hrtime.bigint() - t) / n);
  }
  return runs.sort((a, b) => a - b)[2];
}

function libraryMatches(expr: string): (v: CelVars) => unknown {
  const env = new Environment({ homogeneousAggregateLiterals: false });
  for (const [n, t] of Object.entries(VARIABLE_TYPES)) env.registerVariable(n, t);
  return env.parse(expr);
}

console.log('| rule | library matches() (backtracking RegExp) ns | routing matches() (RE2, re2js) ns |');
console.log('| --- | ---: | ---: |');
for (const expr of RULES) {
  const lib = libraryMatches(expr);
  const ours = compileCel(expr);
  if (lib(BASE) !== true || ours.evaluate(BASE) !== true) throw new Error(`${expr} should match`);
  console.log(`| \`${expr}\` | ${perCall(() => lib(BASE)).toFixed(0)} | ${perCall(() => ours.evaluate(BASE)).toFixed(0)} |`);
}

console.log('\n| engine alone, `^gpt-4(o|\\.1)...$` on a model name | ns |');
console.log('| --- | ---: |');
const js = /^gpt-4(o|\.1)(-\d{4}-\d{2}-\d{2})?$/;
const re2 = RE2JS.compile('^gpt-4(o|\\.1)(-\\d{4}-\\d{2}-\\d{2})?$');
console.log(`| RegExp.test | ${perCall(() => js.test(BASE.model)).toFixed(0)} |`);
console.log(`| re2js test | ${perCall(() => re2.test(BASE.model)).toFixed(0)} |`);

console.log('\n| `^(a+)+$` against n × "a" + "!" | library RegExp ms | RE2 ms |');
console.log('| --- | ---: | ---: |');
const hostileLib = libraryMatches('headers["x-a"].matches("^(a+)+$")');
const hostileOurs = compileCel('headers["x-a"].matches("^(a+)+$")');
for (const n of [16, 20, 24, 30, 10_240]) {
  const v = { ...BASE, headers: { 'x-a': `${'a'.repeat(n)}!` } };
  // Past 24 characters the backtracking engine takes seconds (doubling per character): not run.
  const libMs = n <= 24 ? time(() => hostileLib(v)) : NaN;
  const libCell = n <= 24 ? libMs.toFixed(2) : n <= 40 ? `~${((time(() => hostileLib({ ...BASE, headers: { 'x-a': `${'a'.repeat(20)}!` } })) * 2 ** (n - 20)) / 1000).toFixed(0)} s (extrapolated)` : 'never finishes (2^n)';
  console.log(`| ${n} | ${libCell} | ${time(() => hostileOurs.evaluate(v)).toFixed(2)} |`);
}

function time(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
