// The gateway turns V8's allocation-site pretenuring off at start (proxy/src/v8-flags.ts), unless
// the node command line sets it either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gatewayV8Flags } from '../../proxy/src/v8-flags.ts';

test('the gateway turns pretenuring off and caps the heap’s growth unless the node command line chose either', () => {
  const growth = '--heap-growing-percent=100';
  assert.deepEqual(gatewayV8Flags([]), ['--no-allocation-site-pretenuring', growth]);
  assert.deepEqual(gatewayV8Flags(['--max-semi-space-size=8']), ['--no-allocation-site-pretenuring', growth]);
  assert.deepEqual(gatewayV8Flags(['--allocation-site-pretenuring']), [growth]);
  assert.deepEqual(gatewayV8Flags(['--no-allocation-site-pretenuring']), [growth]);
  assert.deepEqual(gatewayV8Flags(['--allocation_site_pretenuring']), [growth]);
  assert.deepEqual(gatewayV8Flags(['--heap-growing-percent=300']), ['--no-allocation-site-pretenuring']);
  assert.deepEqual(gatewayV8Flags(['--heap_growing_percent=300', '--no-allocation-site-pretenuring']), []);
});

/** The heap's largest size (MB) in a process that sets the gateway's flags, keeps 200,000 objects and churns objects that outlive two scavenges (as requests in flight at saturation do). */
function peakHeapMb(nodeFlags: string[]): number {
  const module = fileURLToPath(new URL('../../proxy/src/v8-flags.ts', import.meta.url));
  const script = `import v8 from 'node:v8';
import { applyGatewayV8Flags } from ${JSON.stringify(module)};
applyGatewayV8Flags();
const live = [];
for (let i = 0; i < 200000; i++) live.push({ i, s: 'x' + i });
const ring = new Array(100000);
let peak = 0;
for (let r = 0; r < 3000000; r++) {
  ring[r % ring.length] = { r, a: [r, r + 1] };
  if ((r & 4095) === 0) peak = Math.max(peak, v8.getHeapStatistics().total_heap_size);
}
console.log(peak / 1048576, live.length);`;
  const r = spawnSync(process.execPath, ['--max-semi-space-size=8', ...nodeFlags, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.split(' ')[0]);
}

test('V8 takes the growth cap when the gateway sets it at start: a churning heap stays smaller than V8 left alone lets it grow', () => {
  const capped = peakHeapMb([]);
  // The command line's choice is left alone: V8's own growth (up to 4x what survived).
  const free = peakHeapMb(['--heap-growing-percent=300']);
  assert.ok(capped < free * 0.8, `capped ${capped.toFixed(1)} MB, V8's own growth ${free.toFixed(1)} MB`);
});

/** V8's pretenuring decisions in a process that sets the gateway's flags, then keeps every object of one site alive across scavenges. */
function pretenuringDecisions(nodeFlags: string[]): number {
  const module = fileURLToPath(new URL('../../proxy/src/v8-flags.ts', import.meta.url));
  const script = `import { applyGatewayV8Flags } from ${JSON.stringify(module)};
applyGatewayV8Flags();
const keep = [];
function make(i) { return { i, list: [i] }; }
for (let r = 0; r < 5; r++) for (let i = 0; i < 100000; i++) keep.push(make(i));`;
  const r = spawnSync(process.execPath, ['--trace-pretenuring-statistics', ...nodeFlags, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l.includes('pretenuring: AllocationSite')).length;
}

test('V8 takes the flag when the gateway sets it at start: no site is weighed for pretenuring', () => {
  assert.equal(pretenuringDecisions([]), 0);
  // The same process with the flag given on the command line (left alone by the gateway) does weigh them.
  assert.ok(pretenuringDecisions(['--allocation-site-pretenuring']) > 0);
});
