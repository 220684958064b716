// Single flight on one replica: one leader per request identity; waiters get its entry, or nothing
// when it fails, and give up when their client leaves; an entry is served until its write lands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SingleFlight } from '../../proxy/src/cache/single-flight.ts';
import type { CacheEntry } from '../../proxy/src/cache/store.ts';

const entry = (id: string, expiresAt = Date.now() + 60_000): CacheEntry => ({ id, scope: 's', cacheKey: 'k', hash: 'h', value: '{}', createdAt: Date.now(), expiresAt });
const never = new AbortController().signal;

test('one leader; waiters get its entry, which is served until its write lands', async () => {
  const f = new SingleFlight();
  assert.equal(f.lead('a'), true);
  assert.equal(f.lead('a'), false);
  const waiting = [f.wait('a', never, 5000), f.wait('a', never, 5000)];
  f.settle('a', entry('e1'));
  assert.deepEqual((await Promise.all(waiting)).map((e) => e?.id), ['e1', 'e1']);
  assert.equal((await f.wait('a', never, 5000))?.id, 'e1', 'landing');
  f.landed('a');
  assert.equal(await f.wait('a', never, 5000), undefined);
  assert.equal(f.lead('a'), true, 'a new flight can start');
});

test('a failed leader releases its waiters with nothing; an expired landing entry is not served', async () => {
  const f = new SingleFlight();
  f.lead('b');
  const w = f.wait('b', never, 5000);
  f.settle('b', undefined);
  assert.equal(await w, undefined);
  f.lead('c');
  f.settle('c', entry('old', Date.now() - 1));
  assert.equal(await f.wait('c', never, 5000), undefined);
});

test('a waiter gives up when its client leaves or the wait is too long', async () => {
  const f = new SingleFlight();
  f.lead('d');
  const ctrl = new AbortController();
  const w = f.wait('d', ctrl.signal, 5000);
  ctrl.abort();
  assert.equal(await w, undefined);
  const started = Date.now();
  assert.equal(await f.wait('d', never, 50), undefined);
  assert.ok(Date.now() - started < 2000);
});
