// V8 flags the gateway sets on itself at start, so every way of starting it (the image, `npm
// start`, the chart, `node proxy/src/main.ts`) runs with them.
//
// --no-allocation-site-pretenuring: when most objects of one allocation site outlive a scavenge,
// V8 makes that site's objects in the old generation from then on. `ws` gives each socket a new
// fragment list per message that lives until the session's next event (about a second), so at
// 1,000 realtime sessions the site was pretenured; each dead list then kept its frame's buffers
// alive through scavenges until a mark-compact: 1.1 MB promoted per scavenge, a 55-60 ms
// mark-compact every 20-30 s. Without it a steady relay promotes about 10 KB per scavenge
// (docs/benchmarks.md, "Realtime relay: the old generation").
//
// --no-memory-reducer-favors-memory, once the start's trim has run: V8's memory reducer collects
// when a gateway that allocated has been idle (its timer ticks every 8 s), by default with the
// memory-reducing flag, which shrinks the young generation to its smallest and keeps no unused
// maps. After an idle spell of a few seconds the next requests then paid ~100 µs more CPU each
// at c=1 (docs/benchmarks.md, "Added latency at c=1 after idle spells"). The reducer's
// collections stay, as ordinary ones. The gateway's own trims are last-resort collections,
// which reduce memory whatever this flag says.
import v8 from 'node:v8';

const GATEWAY_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;
const AFTER_START_V8_FLAGS = ['--no-memory-reducer-favors-memory'] as const;

/** Those of `flags` the node command line does not set either way (the operator's choice stands). */
function unsetByOperator(flags: readonly string[], execArgv: readonly string[]): string[] {
  const named = new Set(execArgv.map((a) => a.replace(/=.*$/, '').replace(/_/g, '-').replace(/^--no-/, '--')));
  return flags.filter((f) => !named.has(f.replace(/^--no-/, '--')));
}

/** The gateway's flags, less those the node command line already sets either way. */
export function gatewayV8Flags(execArgv: readonly string[]): string[] {
  return unsetByOperator(GATEWAY_V8_FLAGS, execArgv);
}

/** The flags the gateway sets once its start's trim has run, less those the node command line sets either way. */
export function gatewayV8FlagsAfterStart(execArgv: readonly string[]): string[] {
  return unsetByOperator(AFTER_START_V8_FLAGS, execArgv);
}

/** Sets the gateway's V8 flags in this process (V8 reads them at each collection, so setting them at start is enough). */
export function applyGatewayV8Flags(execArgv: readonly string[] = process.execArgv): void {
  for (const f of gatewayV8Flags(execArgv)) v8.setFlagsFromString(f);
}

/** Sets the flags that wait for the start's trim (V8 reads this one as each memory-reducer collection starts). */
export function applyGatewayV8FlagsAfterStart(execArgv: readonly string[] = process.execArgv): void {
  for (const f of gatewayV8FlagsAfterStart(execArgv)) v8.setFlagsFromString(f);
}
