// Allocation profile of a running process over the inspector protocol: V8's sampling heap profiler
// with the objects the minor and major collections freed kept in the profile, so it shows what the
// request path allocates (node's --heap-prof keeps only what is still alive at exit).
export interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

interface Session {
  send(method: string, params?: Record<string, unknown>): Promise<unknown>;
  close(): void;
}

async function connect(inspectPort: number): Promise<Session> {
  const list = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const ws = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')), { once: true });
  });
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (msg.id === undefined) return;
    const w = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (msg.error) w?.reject(new Error(msg.error.message));
    else w?.resolve(msg.result);
  });
  return {
    send: (method, params) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * What a sample profile keeps: `allocated`, everything the window allocated; `retained`, only what
 * is still alive at the end, after a full collection (what outlives the window); `promoted`, what
 * reached the old generation (alive or not: a mark-compact's garbage stays in the profile) plus
 * what is still young after one more scavenge at the end (what the next scavenge would promote).
 */
export type SampleMode = 'allocated' | 'retained' | 'promoted';

/** Starts sampling; the returned function stops it and answers the profile's root. */
export async function sampleAllocations(inspectPort: number, intervalBytes = 16 * 1024, mode: SampleMode = 'allocated'): Promise<() => Promise<HeapNode>> {
  const s = await connect(inspectPort);
  await s.send('HeapProfiler.enable');
  // A scavenge at the end drops the young garbage of the last moments (a full collection would
  // keep it: it counts as collected by a major GC). V8 hands out gc() only to contexts made after
  // --expose-gc; the context is made before sampling starts, so it is not in the profile.
  if (mode === 'promoted') await s.send('Runtime.evaluate', { expression: `process.getBuiltinModule('v8').setFlagsFromString('--expose-gc'); globalThis.__benchGc = process.getBuiltinModule('vm').runInNewContext('gc')` });
  await s.send('HeapProfiler.startSampling', { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: mode !== 'retained', includeObjectsCollectedByMinorGC: mode === 'allocated' });
  return async () => {
    if (mode === 'retained') await s.send('HeapProfiler.collectGarbage');
    if (mode === 'promoted') await s.send('Runtime.evaluate', { expression: `globalThis.__benchGc({ type: 'minor' })` });
    const { profile } = (await s.send('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
    s.close();
    return profile.head;
  };
}

/** Bytes allocated per function (self), largest first. */
export function allocationsBySelf(head: HeapNode, where: (url: string) => string): [string, number][] {
  const by = new Map<string, number>();
  const walk = (n: HeapNode) => {
    if (n.selfSize > 0) {
      const cf = n.callFrame;
      const k = `${cf.functionName || '(anonymous)'}  ${where(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
      by.set(k, (by.get(k) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c);
  };
  walk(head);
  return [...by.entries()].sort((a, b) => b[1] - a[1]);
}
