// A request's abort when its client leaves: the upstream call's emitter and the AbortSignal (made
// only when something reads it) fire together, whether the signal was read before or after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestAbort, signalOf, upstreamSignal } from '../../proxy/src/pipeline/client-gone.ts';

test('a signal read before the client left is aborted with it, and the upstream emitter fires with the same reason', () => {
  const abort = new RequestAbort();
  const signal = abort.signal;
  let fired = 0;
  const gone = upstreamSignal(abort);
  (gone as { on(event: string, l: () => void): unknown }).on('abort', () => fired++);
  assert.equal(signal.aborted, false);
  abort.abort();
  assert.equal(signal.aborted, true);
  assert.equal(abort.aborted, true);
  assert.equal(fired, 1);
  assert.equal((gone as { reason?: unknown }).reason, signal.reason);
  // Code handed the signal (not the abort) still reaches the same emitter for undici.
  assert.equal(upstreamSignal(signal), gone);
});

test('a signal first read after the client left is already aborted', () => {
  const abort = new RequestAbort();
  abort.abort();
  assert.equal(signalOf(abort).aborted, true);
  assert.equal((signalOf(abort).reason as Error).name, 'AbortError');
});

test('an AbortSignal is its own upstream signal and its own signal', () => {
  const controller = new AbortController();
  assert.equal(upstreamSignal(controller.signal), controller.signal);
  assert.equal(signalOf(controller.signal), controller.signal);
});
