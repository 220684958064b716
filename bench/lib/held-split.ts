// Where a held-streams run's main thread spends its time, step by step from the measured phase's
// start: the streams' starts against the relay of the streams already open. Read off a CPU
// profile's stacks: a sample counts for the first frame, from the leaf up, that names its kind.
// The gateway and the floor run the same node:http and undici code on both sides, so the same
// names classify both.

interface CallFrame { functionName: string }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
export interface SplitProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const KINDS = ['start', 'relay', 'read', 'gc', 'other'] as const;
type Kind = (typeof KINDS)[number];

/**
 * relay: an upstream body's bytes to the client (undici's body callbacks, the gateway's pushed
 * relay, the floor's pipe, the response's deferred write: node flushes a corked response there);
 * start: the client's connection and request (its body's end runs the floor's handler and resolves
 * the gateway's read), the request's promise continuations (the pipeline), the upstream
 * connection, request and answer head; read: a socket read not yet parsed
 * into either (undici reads heads and bodies in one loop).
 */
const KIND_OF = new Map<string, Kind>([
  ...['#onData', '#onEnd', 'onBody', 'onResponseData', 'wasm_on_body', 'wasm_on_message_complete', 'ondata', 'onend', 'endStream', 'connectionCorkNT'].map((f) => [f, 'relay'] as const),
  ...['onconnection', 'connectionListener', 'connectionListenerInternal', 'parserOnHeadersComplete', 'parserOnIncoming', 'endReadableNT', 'runMicrotasks',
    'internalConnect', 'afterConnect', 'writeH1', 'wasm_on_status', 'wasm_on_headers_complete'].map((f) => [f, 'start'] as const),
  ...['onHttpSocketReadable', 'onStreamRead'].map((f) => [f, 'read'] as const),
  ['(garbage collector)', 'gc'],
]);

/** Busy milliseconds per kind in each `stepMs` from `fromMs` (the profile's clock) to `toMs`, and idle. */
export function heldSplit(profile: SplitProfile, fromMs: number, toMs: number, stepMs: number): { from: number; busy: number; idle: number; by: Record<Kind, number> }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const kindOf = new Map<number, Kind | 'idle'>();
  const classify = (id: number): Kind | 'idle' => {
    let k = kindOf.get(id);
    if (k) return k;
    const fn = byId.get(id)!.callFrame.functionName;
    const up = parent.get(id);
    k = fn === '(idle)' ? 'idle' : (KIND_OF.get(fn) ?? (up === undefined ? 'other' : classify(up)));
    kindOf.set(id, k);
    return k;
  };
  // A window of whole steps (to a rounding error) gets no empty step after its last.
  const steps = Array.from({ length: Math.ceil((toMs - fromMs) / stepMs - 1e-6) }, (_, i) => ({
    from: i * stepMs, busy: 0, idle: 0, by: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
  }));
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const ms = at / 1000;
    if (ms < fromMs || ms >= toMs) continue;
    const step = steps[Math.floor((ms - fromMs) / stepMs)];
    // A sample's time is the interval to the next one.
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const k = classify(profile.samples[i]);
    if (k === 'idle') step.idle += dt;
    else {
      step.busy += dt;
      step.by[k] += dt;
    }
  }
  return steps;
}

/** The table bench/profile.ts --held prints. */
export function heldSplitTable(profile: SplitProfile, fromMs: number, toMs: number, stepMs = 500): string {
  const steps = heldSplit(profile, fromMs, toMs, stepMs);
  const cell = (ms: number, busy: number) => `${ms.toFixed(0).padStart(5)} (${busy ? ((100 * ms) / busy).toFixed(0).padStart(2) : ' -'}%)`;
  return [
    `The held phase step by step (main-thread ms of each ${stepMs} ms; start: connections, request heads, the pipeline, upstream connect and answer head; relay: upstream body reads to client writes; read: socket reads not yet parsed):`,
    `  from (s)  busy  idle       start        relay         read           gc        other`,
    ...steps.map((s) => `  ${(s.from / 1000).toFixed(1).padStart(8)} ${s.busy.toFixed(0).padStart(5)} ${s.idle.toFixed(0).padStart(5)} ${KINDS.map((k) => cell(s.by[k], s.busy)).join(' ')}`),
  ].join('\n');
}
