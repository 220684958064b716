// MCP latencies through a running gateway (child process) and the mock provider, against the stdio
// test MCP server: one tool call through /v1/mcp/tool/execute and through /mcp (SDK client), the
// cost of adding MCP tools to a chat request, and a two-turn agent-mode request.
// Run: node bench/mcp.ts [iterations]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMockProvider } from '../test/mock-provider/server.ts';
import { startGateway, type RunningGateway } from '../test/helpers/gateway.ts';
import { eventually } from '../test/helpers/patience.ts';
import { mockProviders } from '../test/helpers/providers.ts';

const N = Number(process.argv[2] ?? 300);
const STDIO = new URL('../test/mcp-servers/stdio.ts', import.meta.url).pathname;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function time(label: string, fn: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 20; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  process.stdout.write(`${label.padEnd(44)} p50 ${pct(xs, 50).toFixed(2)} ms  p99 ${pct(xs, 99).toFixed(2)} ms\n`);
}

const mock = await startMockProvider({ chunkDelayMs: 0 });
const vk = { id: 'bench', name: 'bench', value: 'sk-bf-bench-0123456789', provider_configs: [{ provider: 'openai', allowed_models: ['*'], key_ids: ['*'] }], mcp_configs: [{ mcp_client_name: 'local', tools_to_execute: ['*'] }] };
const running: RunningGateway[] = [];
try {
  const g = await startGateway({
    providers: mockProviders(mock.url),
    governance: { virtual_keys: [vk] },
    mcp: { client_configs: [{ name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO, 'basic'] }, tools_to_execute: ['*'], tools_to_auto_execute: ['echo'] }] },
  });
  running.push(g);
  const plain = await startGateway({ providers: mockProviders(mock.url) });
  running.push(plain);
  await eventually(async () => {
    const r = (await (await fetch(`${g.url}/api/mcp/clients`)).json()) as { state: string }[];
    if (r[0]?.state !== 'connected') throw new Error('not yet');
  }, 20_000);
  const headers = { 'content-type': 'application/json', 'x-bf-vk': vk.value };
  const post = async (url: string, body: unknown, h: Record<string, string> = headers) => {
    const res = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  await time('tool call: /v1/mcp/tool/execute (stdio)', () => post(`${g.url}/v1/mcp/tool/execute`, { id: 'c', type: 'function', function: { name: 'local-echo', arguments: '{"query":"x"}' } }));
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-bf-vk': vk.value } } }));
  await time('tool call: /mcp tools/call (SDK client)', async () => {
    await client.callTool({ name: 'local-echo', arguments: { query: 'x' } });
  });
  await client.close();
  const chat = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' };
  await time('chat, no MCP configured', () => post(`${plain.url}/v1/chat/completions`, chat, { 'content-type': 'application/json' }));
  await time('chat, 5 MCP tools added', () => post(`${g.url}/v1/chat/completions`, chat));
  await time('agent mode: 2 turns + 1 tool call', () => post(`${g.url}/v1/chat/completions`, { ...chat, tool_choice: { type: 'function', function: { name: 'local-echo' } } }));
} finally {
  await Promise.all(running.map((r) => r.stop()));
  await mock.close();
}
