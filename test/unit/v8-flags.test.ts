// The gateway turns V8's allocation-site pretenuring off at start, and the memory reducer's
// memory-reducing collections once its start's trim has run (proxy/src/v8-flags.ts), unless the
// node command line sets either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gatewayV8Flags, gatewayV8FlagsAfterStart } from '../../proxy/src/v8-flags.ts';

test('the gateway turns pretenuring off unless the node command line chose either way', () => {
  assert.deepEqual(gatewayV8Flags([]), ['--no-allocation-site-pretenuring']);
  assert.deepEqual(gatewayV8Flags(['--max-semi-space-size=8']), ['--no-allocation-site-pretenuring']);
  assert.deepEqual(gatewayV8Flags(['--allocation-site-pretenuring']), []);
  assert.deepEqual(gatewayV8Flags(['--no-allocation-site-pretenuring']), []);
  assert.deepEqual(gatewayV8Flags(['--allocation_site_pretenuring']), []);
});

test('after the start trim the memory reducer collects as ordinary collections, unless the node command line chose either way', () => {
  assert.deepEqual(gatewayV8FlagsAfterStart([]), ['--no-memory-reducer-favors-memory']);
  assert.deepEqual(gatewayV8FlagsAfterStart(['--max-semi-space-size=8', '--no-allocation-site-pretenuring']), ['--no-memory-reducer-favors-memory']);
  assert.deepEqual(gatewayV8FlagsAfterStart(['--memory-reducer-favors-memory']), []);
  assert.deepEqual(gatewayV8FlagsAfterStart(['--no-memory-reducer-favors-memory']), []);
  assert.deepEqual(gatewayV8FlagsAfterStart(['--memory_reducer_favors_memory']), []);
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
