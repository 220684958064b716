// The idle memory trim's rule: collect once the gateway has been quiet (no request arrived, none in
// flight) after its heap grew, and never while a request is being answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMemoryTrim } from '../../proxy/src/memory-trim.ts';
import { eventually } from '../helpers/patience.ts';

const MB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fake heap and traffic: `committed` is what the trim reads, and a collection shrinks it to `floor`. */
function world(opts: { committed: number; floor: number; limit?: number; afterTraffic?: boolean; fromStart?: boolean; growthBytes?: number }) {
  const w = { started: 0, inFlight: 0, committed: opts.committed, collections: 0 };
  const trim = startMemoryTrim(
    { started: () => w.started, inFlight: () => w.inFlight },
    {
      idleMs: 60,
      ...(opts.limit !== undefined && { limit: opts.limit }),
      ...(opts.afterTraffic !== undefined && { afterTraffic: opts.afterTraffic }),
      ...(opts.fromStart !== undefined && { fromStart: opts.fromStart }),
      growthBytes: opts.growthBytes ?? 4 * MB,
      committed: () => w.committed,
      gc: () => {
        w.collections++;
        w.committed = opts.floor;
      },
    },
  );
  return { w, stop: () => trim.stop() };
}

test('a quiet gateway whose heap grew collects once, then not again until the heap grows again', async () => {
  const { w, stop } = world({ committed: 40 * MB, floor: 20 * MB });
  try {
    await eventually(() => assert.equal(w.collections, 1));
    // Quiet, and nothing grew: no second collection.
    await sleep(300);
    assert.equal(w.collections, 1);
    // A burst grows the heap by more than the threshold; once it is over, one more collection.
    w.started += 100;
    w.committed = 30 * MB;
    await eventually(() => assert.equal(w.collections, 2));
    // Growth under the threshold does not collect.
    w.started += 1;
    w.committed = 22 * MB;
    await sleep(300);
    assert.equal(w.collections, 2);
  } finally {
    stop();
  }
});

test('no collection while a request is in flight (a held stream), however long it lasts', async () => {
  const { w, stop } = world({ committed: 40 * MB, floor: 20 * MB });
  w.inFlight = 1;
  try {
    await sleep(400);
    assert.equal(w.collections, 0);
    w.inFlight = 0;
    await eventually(() => assert.equal(w.collections, 1));
  } finally {
    stop();
  }
});

test('requests arriving keep it from collecting, even with none in flight at the moment it looks', async () => {
  const { w, stop } = world({ committed: 40 * MB, floor: 20 * MB });
  // A request every 20 ms, each answered before the next: never 60 ms of quiet.
  const traffic = setInterval(() => w.started++, 20);
  try {
    await sleep(400);
    assert.equal(w.collections, 0);
  } finally {
    clearInterval(traffic);
  }
  try {
    await eventually(() => assert.equal(w.collections, 1));
  } finally {
    stop();
  }
});

test('once, after traffic (the default without --memory-trim): no collection before a request, then one only, even if V8 shrank the heap meanwhile', async () => {
  // The start trim just ran: a quiet gateway that served nothing is left alone.
  const { w, stop } = world({ committed: 20 * MB, floor: 20 * MB, limit: 1, afterTraffic: true });
  try {
    await sleep(300);
    assert.equal(w.collections, 0);
    // The first requests, then quiet: one collection, though the heap is back at its start size
    // (V8's own memory reducer collected first: it keeps more resident than this one).
    w.started += 5;
    await eventually(() => assert.equal(w.collections, 1));
    // Later bursts grow it again: no second collection.
    w.started += 100;
    w.committed = 40 * MB;
    await sleep(400);
    assert.equal(w.collections, 1);
  } finally {
    stop();
  }
});

test("growth measured from the start (the default's watch after bursts, in resident memory): steady traffic and small bursts are left alone; a saturation burst is given back once it is over", async () => {
  // The start trim just ran: the process as the watch starts is the baseline, not zero.
  const { w, stop } = world({ committed: 80 * MB, floor: 95 * MB, fromStart: true, growthBytes: 64 * MB });
  try {
    w.started += 5;
    await sleep(300);
    assert.equal(w.collections, 0, 'no collection for a quiet gateway that served a few requests');
    // Traffic that grew the process by 40 MB, then quiet: left alone (no recompiling to pay for).
    w.started += 5000;
    w.committed = 120 * MB;
    await sleep(300);
    assert.equal(w.collections, 0, 'no collection under the threshold');
    // Steady load over the threshold: a request arrives every few milliseconds, never a quiet moment.
    w.started += 3;
    w.committed = 180 * MB;
    const steady = setInterval(() => (w.started += 3), 10);
    await sleep(400);
    clearInterval(steady);
    assert.equal(w.collections, 0, 'no collection while requests keep arriving');
    // The load stops: one collection once it has been quiet, and no second one for the same growth.
    await eventually(() => assert.equal(w.collections, 1));
    await sleep(300);
    assert.equal(w.collections, 1, 'one collection per burst');
  } finally {
    stop();
  }
});
