// The process metrics' event-loop lag: sampled every 100 ms, so an idle gateway is not woken 100
// times a second by its own metrics (prom-client's default, 10 ms, cost an idle gateway ~7 ms of CPU
// per second), and still exposed under the standard names.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import perfHooks from 'node:perf_hooks';
import { Metrics } from '../../proxy/src/metrics/metrics.ts';

test('the event-loop lag is sampled every 100 ms and still exposed', async () => {
  const monitor = mock.method(perfHooks, 'monitorEventLoopDelay');
  try {
    const metrics = new Metrics();
    const resolutions = monitor.mock.calls.map((c) => (c.arguments[0] as { resolution?: number } | undefined)?.resolution);
    assert.deepEqual(resolutions, [100]);
    const text = await metrics.registry.metrics();
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds /m);
    assert.match(text, /^process_cpu_seconds_total /m);
  } finally {
    monitor.mock.restore();
  }
});

test('metrics without process metrics start no event-loop monitor', () => {
  const monitor = mock.method(perfHooks, 'monitorEventLoopDelay');
  try {
    new Metrics({ processMetrics: false });
    assert.equal(monitor.mock.callCount(), 0);
  } finally {
    monitor.mock.restore();
  }
});
