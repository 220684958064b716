// The virtual key governs MCP: which clients and tools a key may use in chat, in
// /v1/mcp/tool/execute, and on /mcp, the gateway as an MCP server (streamable HTTP, stateless),
// used here through the official SDK's client as an IDE agent would. Also agent mode on /v1/responses.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, type InProcessGateway } from '../helpers/in-process-gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient } from '../helpers/api.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;

let mock: MockProvider;
let g: InProcessGateway;

const stdio = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  connection_type: 'stdio',
  stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] },
  tools_to_execute: ['*'],
  ...more,
});

const vk = (id: string, more: Record<string, unknown> = {}) => ({
  id,
  name: id,
  value: `sk-bf-${id}-0123456789`,
  provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
  ...more,
});

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      virtual_keys: [vk('reader', { mcp_configs: [{ mcp_client_name: 'local', tools_to_execute: ['echo'] }] }), vk('plain'), vk('agent', { mcp_configs: [{ mcp_client_name: 'local', tools_to_execute: ['*'] }] })],
    },
    mcp: { client_configs: [stdio('local', { tools_to_auto_execute: ['echo'] }), stdio('shared', { tools_to_execute: ['add'], allow_on_all_virtual_keys: true })] },
  });
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.deepEqual(res.body.map((c) => c.state), ['connected', 'connected']);
  }, 20_000);
});
after(async () => {
  await g.stop();
  await mock.close();
});

async function mcpClient(key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'ide', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: key ? { 'x-bf-vk': key } : {} } });
  await client.connect(transport);
  return client;
}

const openai = (key: string) => new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-bf-vk': key } });

function lastTools(): string[] | undefined {
  const r = mock.requests.filter((x) => x.path.endsWith('/chat/completions')).at(-1)!;
  return ((r.body as { tools?: { function: { name: string } }[] }).tools ?? undefined)?.map((t) => t.function.name);
}

test('the virtual key decides which MCP tools a chat request gets', async () => {
  await openai('sk-bf-reader-0123456789').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' });
  assert.deepEqual(lastTools(), ['local-echo', 'shared-add']);
  await openai('sk-bf-plain-0123456789').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' });
  // No mcp_configs: only clients open to every key.
  assert.deepEqual(lastTools(), ['shared-add']);
});

test('/v1/mcp/tool/execute is held to the key: a tool outside its mcp_configs is refused', async () => {
  const call = (key: string, name: string, args: string) =>
    fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bf-vk': key }, body: JSON.stringify({ id: 'c1', type: 'function', function: { name, arguments: args } }) });
  const ok = await call('sk-bf-reader-0123456789', 'local-echo', '{"query":"a"}');
  assert.equal(ok.status, 200);
  const refused = await call('sk-bf-reader-0123456789', 'local-add', '{"a":1,"b":2}');
  assert.equal(refused.status, 400);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /not an MCP tool this caller may use/);
  const anonymous = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c1', type: 'function', function: { name: 'local-echo', arguments: '{}' } }) });
  assert.equal(anonymous.status, 401);
});

test('/mcp serves the tools the key may use to an MCP client, and runs them', async () => {
  const reader = await mcpClient('sk-bf-reader-0123456789');
  const tools = await reader.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['local-echo', 'shared-add']);
  assert.deepEqual((tools.tools.find((t) => t.name === 'local-echo')!.inputSchema as { required: string[] }).required, ['query']);
  const echoed = await reader.callTool({ name: 'local-echo', arguments: { query: 'from the IDE' } });
  assert.deepEqual(echoed.content, [{ type: 'text', text: 'echo: from the IDE' }]);
  const sum = await reader.callTool({ name: 'shared-add', arguments: { a: 20, b: 22 } });
  assert.deepEqual(sum.content, [{ type: 'text', text: '42' }]);
  const refused = await reader.callTool({ name: 'local-add', arguments: { a: 1, b: 1 } });
  assert.equal(refused.isError, true);
  await reader.close();
  // Stateless: every request stands alone, so any replica can answer it.
  const plain = await mcpClient('sk-bf-plain-0123456789');
  assert.deepEqual((await plain.listTools()).tools.map((t) => t.name), ['shared-add']);
  await plain.close();
  // No key, or a wrong one: 401.
  await assert.rejects(mcpClient(undefined), /401|virtual key/);
  await assert.rejects(mcpClient('sk-bf-wrong-0123456789'), /401|virtual key/);
  // Each call was logged with its key (written to the logs store after the answer).
  await eventually(async () => {
    const logs = await apiClient(g)<{ logs: { tool_name: string; virtual_key_id: string; source: string }[] }>('GET', '/api/mcp-logs?virtual_key_ids=reader&tool_names=add');
    assert.ok(logs.body.logs.some((l) => l.source === 'mcp_server' && l.virtual_key_id === 'reader'));
  }, 10_000);
});

test('agent mode on /v1/responses runs auto-executable tools and returns the final answer', async () => {
  const client = openai('sk-bf-agent-0123456789');
  const before = mock.requests.length;
  const answer = await client.responses.create({ model: 'gpt-4o', input: 'responses question', tool_choice: { type: 'function', name: 'local-echo' } });
  assert.match(answer.output_text, /echo: responses question/);
  assert.ok(!answer.output.some((o) => o.type === 'function_call'));
  assert.equal(mock.requests.slice(before).length, 2);
});
