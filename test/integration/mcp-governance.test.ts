// Budgets and rate limits on MCP tool calls: a call made directly (/v1/mcp/tool/execute, /mcp
// tools/call) counts as one request against the caller's request rate limit and is refused once
// its budget is spent; every successful call charges the client's tool_pricing to that budget,
// agent-mode calls included.
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

const vk = (id: string, more: Record<string, unknown>) => ({
  id,
  name: id,
  value: `sk-bf-${id}-0123456789`,
  provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'], key_ids: ['*'], weight: 1 }],
  mcp_configs: [{ mcp_client_name: 'local', tools_to_execute: ['*'] }],
  ...more,
});

before(async () => {
  mock = await startMockProvider();
  g = await startGateway({
    providers: mockProviders(mock.url),
    client: { enforce_auth_on_inference: true },
    governance: {
      rate_limits: [{ id: 'two-calls', request_max_limit: 2, request_reset_duration: '1h' }],
      budgets: [
        { id: 'one-dollar', max_limit: 1, reset_duration: '1d' },
        { id: 'agent-dollar', max_limit: 1, reset_duration: '1d' },
      ],
      virtual_keys: [vk('limited', { rate_limit_id: 'two-calls' }), vk('spender', { budget_id: 'one-dollar' }), vk('agent', { budget_id: 'agent-dollar' })],
    },
    mcp: {
      client_configs: [
        { name: 'local', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'] }, tools_to_execute: ['*'], tools_to_auto_execute: ['echo'], tool_pricing: { echo: 0.6 } },
      ],
    },
  });
  await eventually(async () => {
    const res = await apiClient(g)<{ state: string }[]>('GET', '/api/mcp/clients');
    assert.equal(res.body[0]?.state, 'connected');
  }, 30_000);
});
after(async () => {
  await g.stop();
  await mock.close();
});

const execute = (key: string, tool = 'local-echo') =>
  fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-bf-vk': `sk-bf-${key}-0123456789` },
    body: JSON.stringify({ id: 'c', type: 'function', function: { name: tool, arguments: '{"query":"hi"}' } }),
  });

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'ide', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-bf-vk': `sk-bf-${key}-0123456789` } } }));
  return client;
}

test('the request rate limit counts direct tool calls across /v1/mcp/tool/execute and /mcp', async () => {
  assert.equal((await execute('limited')).status, 200);
  const client = await mcpClient('limited');
  try {
    const second = (await client.callTool({ name: 'local-echo', arguments: { query: 'hi' } })) as { isError?: boolean; content: { text: string }[] };
    assert.equal(second.isError, undefined, second.content[0]?.text);
    // The third is refused, on either route, and never reaches the server.
    const logged = async () => (await apiClient(g)<{ pagination: { total_count: number } }>('GET', '/api/mcp-logs?virtual_key_ids=limited')).body.pagination.total_count;
    // The two admitted calls' records reach the store in a batch after their answers: wait for them.
    await eventually(async () => assert.equal(await logged(), 2), 5_000);
    const callsBefore = await logged();
    const third = await execute('limited');
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get('retry-after')) > 0);
    const body = (await third.json()) as { error: { message: string; code: string } };
    assert.equal(body.error.code, 'request_rate_limit_exceeded');
    assert.match(body.error.message, /two-calls/);
    const refused = (await client.callTool({ name: 'local-echo', arguments: { query: 'hi' } })) as { isError?: boolean; content: { text: string }[] };
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /rate limit 'two-calls' reached/);
    // (A refused call would have been logged by now, had it run: the batch interval has passed.)
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await logged(), callsBefore, 'refused calls did not run');
  } finally {
    await client.close();
  }
});

test('tool_pricing is charged to the budget; a spent budget refuses direct calls with 402', async () => {
  // 0.6 each: the second call is admitted (0.6 < 1), the third finds 1.2 spent.
  assert.equal((await execute('spender')).status, 200);
  await eventually(async () => assert.equal((await execute('spender')).status, 200), 5_000);
  let third: Response | undefined;
  await eventually(async () => {
    third = await execute('spender');
    assert.equal(third.status, 402);
  }, 5_000);
  assert.equal(((await third!.json()) as { error: { code: string } }).error.code, 'budget_exceeded');
  // An unpriced tool is refused too once the budget is spent.
  assert.equal((await execute('spender', 'local-add')).status, 402);
});

test('agent-mode tool calls are charged to the budget too', async () => {
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'sk-bf-agent-0123456789', maxRetries: 0 });
  const answer = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'one' }], tool_choice: { type: 'function', function: { name: 'local-echo' } } });
  assert.match(answer.choices[0].message.content ?? '', /echo: one/);
  // The agent's call spent 0.6: one direct call is admitted (0.6 < 1) and spends the rest; without
  // the agent's charge a second one would be admitted too.
  assert.equal((await execute('agent')).status, 200);
  await eventually(async () => assert.equal((await execute('agent')).status, 402), 5_000);
  // The spent budget stops the agent itself at its next turn.
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'two' }], tool_choice: { type: 'function', function: { name: 'local-echo' } } }),
    /402 budget 'agent-dollar' is exhausted/,
  );
});
