// The deadline every store call runs under (proxy/src/store-guard.ts): a call that gets no answer
// fails at its deadline, a probe asks at once, later calls fail at once once the probe is silent too
// (nothing more is sent), and the first answer (a probe's, or a late one to an earlier call) ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { patience } from '../helpers/patience.ts';
import { DEFAULT_STORE_TIMEOUT_MS, StoreGuard, StoreTimeoutError, storeTimeoutMs } from '../../proxy/src/store-guard.ts';

const never = () => new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + patience(ms);
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

test('SKYBRIDGE_STORE_TIMEOUT_MS: default 2000, whole milliseconds from 50 to 60000, anything else refused with the variable named', () => {
  assert.equal(storeTimeoutMs({}), DEFAULT_STORE_TIMEOUT_MS);
  assert.equal(storeTimeoutMs({ SKYBRIDGE_STORE_TIMEOUT_MS: '750' }), 750);
  for (const bad of ['0', '49', '60001', '1.5', 'soon']) assert.throws(() => storeTimeoutMs({ SKYBRIDGE_STORE_TIMEOUT_MS: bad }), /SKYBRIDGE_STORE_TIMEOUT_MS must be/);
});

test('a call without an answer fails at its deadline; once the probe misses too, calls fail at once without being sent, until the probe answers', async () => {
  let probeAnswers = false;
  const guard = new StoreGuard({ name: 'test store', timeoutMs: 50, probe: () => (probeAnswers ? Promise.resolve('PONG') : never()) });
  try {
    assert.equal(await guard.run(() => Promise.resolve(1)), 1);
    await assert.rejects(guard.run(never), (err: unknown) => err instanceof StoreTimeoutError && /did not answer within 50 ms/.test(err.message));
    assert.equal(guard.answering, false);
    assert.match(guard.stalled() ?? '', /^test store has not answered since /);
    // Asked again at once; silent again, calls fail at once.
    await until(() => guard.failingFast);
    let sent = false;
    await assert.rejects(
      guard.run(() => {
        sent = true;
        return Promise.resolve(2);
      }),
      StoreTimeoutError,
    );
    assert.equal(sent, false, 'a stalled store is not asked');
    probeAnswers = true;
    await until(() => guard.answering);
    assert.equal(guard.stalled(), undefined);
    assert.equal(await guard.run(() => Promise.resolve(3)), 3);
  } finally {
    await guard.close();
  }
});

test('a late answer to a call that missed its deadline ends the stall; a failure is passed on as it is', async () => {
  const guard = new StoreGuard({ name: 'test store', timeoutMs: 30, probe: never });
  try {
    let answer: (v: string) => void = () => undefined;
    await assert.rejects(guard.run(() => new Promise<string>((r) => (answer = r))), StoreTimeoutError);
    assert.equal(guard.answering, false);
    answer('late');
    await until(() => guard.answering);
    await assert.rejects(guard.run(() => Promise.reject(new Error('WRONGTYPE'))), /WRONGTYPE/);
    assert.equal(guard.answering, true, 'an error is an answer: only silence stalls');
  } finally {
    await guard.close();
  }
});

test('close: a graceful close that does not end within the deadline, or any close while stalled, destroys', async () => {
  let destroyed = 0;
  const hanging = new StoreGuard({ name: 'a', timeoutMs: 30, probe: never });
  await hanging.close(never, () => destroyed++);
  assert.equal(destroyed, 1);
  const stalled = new StoreGuard({ name: 'b', timeoutMs: 30, probe: never });
  await assert.rejects(stalled.run(never), StoreTimeoutError);
  await until(() => stalled.failingFast);
  let graceful = false;
  await stalled.close(async () => void (graceful = true), () => destroyed++);
  assert.equal(graceful, false);
  assert.equal(destroyed, 2);
  const fine = new StoreGuard({ name: 'c', timeoutMs: 1000, probe: never });
  await fine.close(async () => undefined, () => destroyed++);
  assert.equal(destroyed, 2, 'a store that closes in time is not destroyed');
});

test('one slow answer on a busy server is forgiven when the probe answers in time: calls are not refused', async () => {
  const guard = new StoreGuard({ name: 'test store', timeoutMs: 30, probe: () => Promise.resolve('PONG') });
  try {
    await assert.rejects(guard.run(never), StoreTimeoutError);
    await until(() => guard.answering);
    assert.equal(guard.failingFast, false);
    assert.equal(await guard.run(() => Promise.resolve('served')), 'served');
  } finally {
    await guard.close();
  }
});
