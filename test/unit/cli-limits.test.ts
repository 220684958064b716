// The listener limits on the command line: defaults, overrides, and refusals that name the flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCli, type CliOptions } from '../../proxy/src/cli.ts';

const parse = (...argv: string[]) => parseCli(argv, {}) as CliOptions;

test('without flags the listener gets the documented defaults', () => {
  assert.deepEqual(parse().limits, { headersTimeoutMs: 30_000, requestTimeoutMs: 120_000, maxHeaderBytes: 16_384, h2MaxStreams: 100, keepAliveMs: 65_000 });
});

test('each limit can be set; timeouts in (fractional) seconds', () => {
  const { limits } = parse('--headers-timeout', '0.5', '--request-timeout', '10', '--max-header-size', '8192', '--h2-max-streams', '20');
  assert.equal(limits.headersTimeoutMs, 500);
  assert.equal(limits.requestTimeoutMs, 10_000);
  assert.equal(limits.maxHeaderBytes, 8192);
  assert.equal(limits.h2MaxStreams, 20);
});

test('bad values are refused with the flag named', () => {
  assert.throws(() => parse('--request-timeout', '0'), /--request-timeout must be a number of seconds/);
  assert.throws(() => parse('--headers-timeout', 'soon'), /--headers-timeout/);
  assert.throws(() => parse('--max-header-size', '12'), /--max-header-size must be an integer 1024-1048576/);
  assert.throws(() => parse('--h2-max-streams', '1.5'), /--h2-max-streams/);
  assert.throws(() => parse('--headers-timeout', '60', '--request-timeout', '30'), /--headers-timeout must not exceed --request-timeout/);
});
