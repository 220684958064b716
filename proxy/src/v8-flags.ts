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
import v8 from 'node:v8';

const GATEWAY_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

/** The gateway's flags, less those the node command line already sets either way (the operator's choice stands). */
export function gatewayV8Flags(execArgv: readonly string[]): string[] {
  const named = new Set(execArgv.map((a) => a.replace(/=.*$/, '').replace(/_/g, '-').replace(/^--no-/, '--')));
  return GATEWAY_V8_FLAGS.filter((f) => !named.has(f.replace(/^--no-/, '--')));
}

/** Sets the gateway's V8 flags in this process (V8 reads them at each collection, so setting them at start is enough). */
export function applyGatewayV8Flags(execArgv: readonly string[] = process.execArgv): void {
  for (const f of gatewayV8Flags(execArgv)) v8.setFlagsFromString(f);
}
