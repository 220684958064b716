// MCP tool answers are bounded while they are read (default 16 MiB, mcp.tool_manager_config
// max_tool_answer_mb): a larger one fails that call with a clear reason, other calls and the
// connection go on (a stdio server is restarted). Real MCP servers (official SDK, streamable HTTP
// and stdio) answering with many MB.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';

const MiB = 1024 * 1024;
let mock: MockProvider | undefined;
let server: TestMcpServer | undefined;
const gateways: InProcessGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  server = await startTestMcpServer({ variant: 'big' });
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await server?.close();
  await mock?.close();
});

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

async function gateway(toolManager: Record<string, unknown> = {}, stdio = false): Promise<InProcessGateway> {
  const client = stdio
    ? { name: 'web', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'big'] }, tools_to_execute: ['*'], allow_without_virtual_key: true }
    : { name: 'web', connection_type: 'http', connection_string: server!.httpUrl, tools_to_execute: ['*'], allow_without_virtual_key: true };
  const g = await startGateway({ providers: mockProviders(mock!.url), mcp: { client_configs: [client], tool_manager_config: toolManager } });
  gateways.push(g);
  await eventually(async () => assert.deepEqual((await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients')).body.map((c) => c.state), ['connected']), 30_000);
  return g;
}

const big = (g: InProcessGateway, bytes: number) =>
  fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'web-big', arguments: JSON.stringify({ bytes }) } }) });

test('by default an answer over 16 MiB fails that call with the reason; a smaller one and the connection are fine', async () => {
  const g = await gateway();
  const res = await big(g, 20 * MiB);
  assert.equal(res.status, 502);
  const err = ((await res.json()) as { error: { message: string; code?: string } }).error;
  assert.match(err.message, /larger than 16 MiB/);
  const ok = await big(g, 2 * MiB);
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as { content: string }).content.length, 2 * MiB);
  assert.equal((await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients')).body[0].state, 'connected');
});

test('max_tool_answer_mb sets the bound', async () => {
  const g = await gateway({ max_tool_answer_mb: 1 });
  const res = await big(g, 2 * MiB);
  assert.equal(res.status, 502);
  assert.match(((await res.json()) as { error: { message: string } }).error.message, /larger than 1 MiB/);
  assert.equal((await big(g, MiB / 2)).status, 200);
});

test('stdio: a line over the bound fails that call with the reason and restarts the server; the next calls are served', async () => {
  const g = await gateway({ max_tool_answer_mb: 1 }, true);
  const res = await big(g, 3 * MiB);
  assert.equal(res.status, 502);
  const message = ((await res.json()) as { error: { message: string } }).error.message;
  assert.match(message, /larger than 1 MiB/);
  assert.match(message, /stdio server was restarted/);
  // Connected again (after the reconnect backoff), and an answer under the bound is served whole.
  await eventually(async () => assert.deepEqual((await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients')).body.map((c) => c.state), ['connected']), 30_000);
  const ok = await big(g, MiB / 2);
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as { content: string }).content.length, MiB / 2);
});
