// The reference gateway's single-dash flags and --version: its users' scripts start Skybridge unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { doubleDashed, parseCli, type CliOptions } from '../../proxy/src/cli.ts';

const parse = (...argv: string[]) => parseCli(argv, {}) as CliOptions;

test('-port, -app-dir, -host and -log-level are read as their double-dash forms', () => {
  const o = parse('-port', '9191', '-app-dir', '/tmp/conf', '-host', '127.0.0.1', '-log-level', 'warn');
  assert.equal(o.port, 9191);
  assert.equal(o.appDir, '/tmp/conf');
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.logLevel, 'warn');
});

test('the -flag=value spelling works too, and double dashes are unchanged', () => {
  const o = parse('-port=9292', '--host', '::1', '-log-level=debug');
  assert.equal(o.port, 9292);
  assert.equal(o.host, '::1');
  assert.equal(o.logLevel, 'debug');
});

test('a value that starts with a dash stays a value; an unknown single-dash flag is still refused', () => {
  assert.deepEqual(doubleDashed(['-app-dir', '-odd-dir', '-port', '1'], ['app-dir', 'port']), ['--app-dir', '-odd-dir', '--port', '1']);
  assert.throws(() => parse('-bogus', '1'), /Unknown option/);
  assert.equal(parseCli(['-h'], {}), 'help');
});

test('--version (and -version) asks for the version', () => {
  assert.equal(parseCli(['--version'], {}), 'version');
  assert.equal(parseCli(['-version'], {}), 'version');
});

test('--memory-trim S (or SKYBRIDGE_MEMORY_TRIM) turns the idle memory trim on; absent, it is off; a bad value is refused', () => {
  assert.equal(parse().memoryTrimMs, undefined);
  assert.equal(parse('--memory-trim', '1.5').memoryTrimMs, 1500);
  assert.equal((parseCli([], { SKYBRIDGE_MEMORY_TRIM: '2' }) as CliOptions).memoryTrimMs, 2000);
  assert.throws(() => parse('--memory-trim', '0'), /--memory-trim must be a number of seconds/);
  assert.throws(() => parse('--memory-trim', 'soon'), /--memory-trim must be a number of seconds/);
});
