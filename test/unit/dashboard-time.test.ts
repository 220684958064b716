// The overview's time handling (dashboard/src, pure modules): axis labels carry dates when a range
// crosses midnight, the ranges and custom windows, and the cache hit rate series.
process.env.TZ = 'UTC';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axisLabels, crossesMidnight, fullTime } from '../../dashboard/src/lib/time-axis.ts';
import { hitRate, windowOf } from '../../dashboard/src/pages/overview/data.ts';

const at = (iso: string) => Date.parse(iso);

test('a range within one day is labelled with clock times only', () => {
  const ticks = [at('2026-11-26T10:00:00Z'), at('2026-11-26T10:15:00Z'), at('2026-11-26T10:30:00Z')];
  assert.deepEqual(axisLabels(ticks, ticks[0]!, ticks[2]!), ['10:00', '10:15', '10:30']);
  assert.equal(crossesMidnight(ticks[0]!, ticks[2]!), false);
});

test('a range across midnight dates the first label and the first of each new day', () => {
  const ticks = [at('2026-11-26T22:00:00Z'), at('2026-11-26T23:00:00Z'), at('2026-11-27T00:00:00Z'), at('2026-11-27T01:00:00Z')];
  assert.deepEqual(axisLabels(ticks, ticks[0]!, ticks[3]!), ['22:00\nNov 26', '23:00', '00:00\nNov 27', '01:00']);
});

test('ticks a day or more apart are dates; a tooltip time is dated', () => {
  const ticks = [at('2026-11-20T00:00:00Z'), at('2026-11-21T00:00:00Z'), at('2026-11-22T00:00:00Z')];
  assert.deepEqual(axisLabels(ticks, ticks[0]!, ticks[2]!), ['Nov 20', 'Nov 21', 'Nov 22']);
  assert.equal(fullTime(at('2026-11-26T09:05:00Z')), 'Nov 26 09:05');
});

test('relative ranges end now; the default is the last hour; a custom range is checked', () => {
  const now = at('2026-11-26T12:00:00Z');
  assert.deepEqual(windowOf('15m', null, null, now), { start: now - 15 * 60_000, end: now });
  assert.deepEqual(windowOf('bogus', null, null, now), { start: now - 3600_000, end: now });
  assert.deepEqual(windowOf('custom', '2026-11-20T00:00:00Z', '2026-11-21T00:00:00Z', now), { start: at('2026-11-20T00:00:00Z'), end: at('2026-11-21T00:00:00Z') });
  assert.deepEqual(windowOf('custom', '2026-11-26T11:00:00Z', null, now), { start: at('2026-11-26T11:00:00Z'), end: now }, 'no end: now');
  assert.ok('problem' in windowOf('custom', '2026-11-21T00:00:00Z', '2026-11-20T00:00:00Z', now));
  assert.ok('problem' in windowOf('custom', null, null, now));
});

test('the hit rate is a percentage per bucket, no value where there were no requests', () => {
  assert.deepEqual(hitRate([4, 0, 2], [1, 0, 2]), [25, null, 100]);
});
