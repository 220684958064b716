import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDuration, parseDuration, windowAt } from '../../proxy/src/governance/counters/windows.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
function win(duration: string, aligned: boolean, now: string): [string, string] {
  const w = windowAt(duration, aligned, at(now));
  return [iso(w.start), iso(w.end)];
}

test('durations parse; anything else is refused with a message naming the units', () => {
  assert.deepEqual(parseDuration('30s'), { count: 30, unit: 's' });
  assert.deepEqual(parseDuration('1M'), { count: 1, unit: 'M' });
  assert.deepEqual(parseDuration('12h'), { count: 12, unit: 'h' });
  for (const bad of ['', '0s', '1', 'm', '1.5h', '-1d', '1 d', '1mo', '1y', '01d']) {
    assert.equal(isDuration(bad), false, bad);
    assert.throws(() => parseDuration(bad), /s, m, h, d, w, M, Y/, bad);
  }
});

test('seconds, minutes, hours and days are fixed windows anchored at the epoch (UTC)', () => {
  assert.deepEqual(win('30s', false, '2025-03-10T12:34:56.789Z'), ['2025-03-10T12:34:30.000Z', '2025-03-10T12:35:00.000Z']);
  assert.deepEqual(win('5m', false, '2025-03-10T12:34:56Z'), ['2025-03-10T12:30:00.000Z', '2025-03-10T12:35:00.000Z']);
  assert.deepEqual(win('1h', true, '2025-03-10T12:34:56Z'), ['2025-03-10T12:00:00.000Z', '2025-03-10T13:00:00.000Z']);
  assert.deepEqual(win('1d', false, '2025-03-10T23:59:59.999Z'), ['2025-03-10T00:00:00.000Z', '2025-03-11T00:00:00.000Z']);
  // The same answer with calendar alignment: epoch multiples of a day are UTC midnights.
  assert.deepEqual(win('1d', true, '2025-03-10T23:59:59.999Z'), ['2025-03-10T00:00:00.000Z', '2025-03-11T00:00:00.000Z']);
  // 7d counts 7-day blocks from 1970-01-01 (a Thursday).
  const [start] = win('7d', false, '2025-03-10T00:00:00Z');
  assert.equal(new Date(start).getUTCDay(), 4);
});

test('a window boundary belongs to the next window; every moment is in exactly one window', () => {
  const t = at('2025-03-10T13:00:00Z');
  assert.equal(windowAt('1h', false, t).start, t);
  assert.equal(windowAt('1h', false, t - 1).end, t);
  for (const d of ['7s', '1m', '90m', '3h', '1d', '2w', '1M', '5M', '2Y']) {
    for (const aligned of [false, true]) {
      for (let i = 0; i < 50; i++) {
        const now = at('2020-01-01T00:00:00Z') + Math.floor(Math.random() * 10 * 365 * 86_400_000);
        const w = windowAt(d, aligned, now);
        assert.ok(w.start <= now && now < w.end, `${d} ${iso(now)}`);
        assert.equal(windowAt(d, aligned, w.end).start, w.end, `${d}: next window starts where this one ends`);
        assert.equal(windowAt(d, aligned, w.start).start, w.start);
      }
    }
  }
});

test('weeks: calendar-aligned start Monday 00:00 UTC; unaligned are 7-day blocks from the epoch', () => {
  // 2025-03-13 is a Thursday.
  assert.deepEqual(win('1w', true, '2025-03-13T08:00:00Z'), ['2025-03-10T00:00:00.000Z', '2025-03-17T00:00:00.000Z']);
  assert.deepEqual(win('1w', true, '2025-03-16T23:59:59Z'), ['2025-03-10T00:00:00.000Z', '2025-03-17T00:00:00.000Z']);
  assert.deepEqual(win('1w', true, '2025-03-17T00:00:00Z'), ['2025-03-17T00:00:00.000Z', '2025-03-24T00:00:00.000Z']);
  assert.deepEqual(win('1w', false, '2025-03-13T08:00:00Z'), ['2025-03-13T00:00:00.000Z', '2025-03-20T00:00:00.000Z']);
  const [s2, e2] = win('2w', true, '2025-03-13T08:00:00Z');
  assert.equal(new Date(s2).getUTCDay(), 1);
  assert.equal(Date.parse(e2) - Date.parse(s2), 14 * 86_400_000);
  // Weeks across a year end stay Monday-aligned: 2024-12-30 is a Monday.
  assert.deepEqual(win('1w', true, '2025-01-01T00:00:00Z'), ['2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z']);
});

test('months are calendar months of their real length, whatever calendar_aligned says', () => {
  for (const aligned of [false, true]) {
    assert.deepEqual(win('1M', aligned, '2025-01-31T23:59:59Z'), ['2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z']);
    assert.deepEqual(win('1M', aligned, '2025-02-15T00:00:00Z'), ['2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
    assert.deepEqual(win('1M', aligned, '2025-04-30T12:00:00Z'), ['2025-04-01T00:00:00.000Z', '2025-05-01T00:00:00.000Z']);
    assert.deepEqual(win('1M', aligned, '2025-12-31T23:00:00Z'), ['2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  }
  const lengthDays = (now: string) => {
    const w = windowAt('1M', true, at(now));
    return (w.end - w.start) / 86_400_000;
  };
  assert.equal(lengthDays('2025-01-10T00:00:00Z'), 31);
  assert.equal(lengthDays('2025-02-10T00:00:00Z'), 28);
  assert.equal(lengthDays('2025-04-10T00:00:00Z'), 30);
});

test('leap years: February has 29 days in 2024 and 2000, 28 in 2100; a year is 366 days in 2024', () => {
  assert.deepEqual(win('1M', true, '2024-02-29T23:59:59.999Z'), ['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
  assert.deepEqual(win('1M', true, '2000-02-29T12:00:00Z'), ['2000-02-01T00:00:00.000Z', '2000-03-01T00:00:00.000Z']);
  const feb2100 = windowAt('1M', true, at('2100-02-15T00:00:00Z'));
  assert.equal((feb2100.end - feb2100.start) / 86_400_000, 28);
  const y2024 = windowAt('1Y', true, at('2024-07-01T00:00:00Z'));
  assert.deepEqual([iso(y2024.start), iso(y2024.end)], ['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
  assert.equal((y2024.end - y2024.start) / 86_400_000, 366);
  assert.equal((windowAt('1Y', false, at('2025-07-01T00:00:00Z')).end - windowAt('1Y', false, at('2025-07-01T00:00:00Z')).start) / 86_400_000, 365);
});

test('multi-month and multi-year windows count from January 1970: 3M are quarters, 2Y even years', () => {
  assert.deepEqual(win('3M', true, '2025-05-20T00:00:00Z'), ['2025-04-01T00:00:00.000Z', '2025-07-01T00:00:00.000Z']);
  assert.deepEqual(win('3M', false, '2025-12-31T23:59:59Z'), ['2025-10-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  assert.deepEqual(win('6M', true, '2025-06-30T00:00:00Z'), ['2025-01-01T00:00:00.000Z', '2025-07-01T00:00:00.000Z']);
  assert.deepEqual(win('12M', true, '2025-06-30T00:00:00Z'), win('1Y', true, '2025-06-30T00:00:00Z'));
  assert.deepEqual(win('2Y', true, '2025-06-30T00:00:00Z'), ['2024-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
});

test('windows depend only on the clock: separate calls (processes) agree', () => {
  const now = at('2025-08-08T08:08:08.808Z');
  for (const d of ['30s', '1h', '1d', '1w', '1M', '1Y']) {
    assert.deepEqual(windowAt(d, true, now), windowAt(parseDuration(d), true, now));
  }
});
