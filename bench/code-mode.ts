// Code-mode sandbox costs, in process (no gateway, no MCP transport): the cold start, a warm execution,
// the overhead of a warm execution before its first tool call reaches the host, and one tool-call
// round trip across the worker boundary (the worker blocks on Atomics.wait while the main thread
// answers). Run: node bench/code-mode.ts [iterations]
import { runCodeModeTool, type CodeModeRunOptions, type ToolHost } from '../proxy/src/mcp/code-mode/index.ts';

const N = Number(process.argv[2] ?? 500);
const CALLS = 2000;

let firstCallAt = 0;
const host: ToolHost = {
  servers: () => [{ name: 'bench', tools: [{ name: 'ping', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }] }],
  call: async (_server, _tool, args) => {
    if (!firstCallAt) firstCallAt = performance.now();
    return { content: [{ type: 'text', text: JSON.stringify({ n: args.n ?? 0, ok: true }) }] };
  },
};
const opts: CodeModeRunOptions = { bindingLevel: 'server', unattended: true, autoExecute: () => true, allowed: () => true, timeoutMs: 30_000, log: () => {}, limits: { maxToolCalls: 10_000, maxSteps: 0 } };

async function exec(code: string): Promise<void> {
  const answer = await runCodeModeTool('executeToolCode', { code }, host, opts);
  if (answer.isError) throw new Error(answer.content);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const fmt = (xs: number[]): string => `p50 ${pct(xs, 50).toFixed(3)} ms  p99 ${pct(xs, 99).toFixed(3)} ms`;

async function sample(n: number, fn: () => Promise<number>): Promise<number[]> {
  for (let i = 0; i < Math.min(50, n); i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await fn());
  return xs;
}

let t = performance.now();
await exec('result = 1');
process.stdout.write(`${'cold start (compile, worker, first run)'.padEnd(52)} ${(performance.now() - t).toFixed(1)} ms\n`);

const warm = await sample(N, async () => {
  const start = performance.now();
  await exec('result = {"a": [1, 2, 3]}');
  return performance.now() - start;
});
process.stdout.write(`${'warm execution, no tool call (end to end)'.padEnd(52)} ${fmt(warm)}\n`);

const before = await sample(N, async () => {
  firstCallAt = 0;
  const start = performance.now();
  await exec('r = bench.ping(n=1)\nresult = r["n"]');
  return firstCallAt - start;
});
process.stdout.write(`${'warm execution: start -> first tool call at the host'.padEnd(52)} ${fmt(before)}\n`);

const loop = (calls: number): string => `t = 0\nfor i in range(${calls}):\n  t += bench.ping(n=i)["n"]\nresult = t`;
const perCall = await sample(Math.max(10, Math.floor(N / 25)), async () => {
  t = performance.now();
  await exec(loop(0));
  const empty = performance.now() - t;
  t = performance.now();
  await exec(loop(CALLS));
  return (performance.now() - t - empty) / CALLS;
});
process.stdout.write(`${'tool-call round trip (worker <-> main, per call)'.padEnd(52)} ${fmt(perCall)}\n`);
