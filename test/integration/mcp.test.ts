// MCP clients through a running gateway, against real MCP servers built with the official SDK
// (streamable HTTP, SSE, stdio) and the published server-everything over stdio: honest states,
// tools added to chat requests and filtered, agent mode run end to end through the openai SDK
// (the mock provider answers with tool calls), /v1/mcp/tool/execute, live changes through /api.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockProvider, type MockProvider } from '../mock-provider/server.ts';
import { startGateway, runGatewayExpectingExit, type RunningGateway } from '../helpers/gateway.ts';
import { eventually } from '../helpers/patience.ts';
import { mockProviders } from '../helpers/providers.ts';
import { apiClient, type ApiAnswer } from '../helpers/api.ts';
import { startTestMcpServer, type TestMcpServer } from '../mcp-servers/http.ts';
import { addToolSilently } from '../mcp-servers/tools.ts';

const STDIO_SERVER = new URL('../mcp-servers/stdio.ts', import.meta.url).pathname;
const EVERYTHING = new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url).pathname;

let mock: MockProvider;
let http: TestMcpServer;
const gateways: RunningGateway[] = [];

before(async () => {
  mock = await startMockProvider();
  http = await startTestMcpServer({ token: 'secret-token-123' });
});
after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await http.close();
  await mock.close();
});

async function gateway(mcp: Record<string, unknown>, extra: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<RunningGateway> {
  // These tests call without a virtual key, so every client opts in to such callers.
  const configs = mcp.client_configs as Record<string, unknown>[] | undefined;
  if (configs) mcp = { ...mcp, client_configs: configs.map((c) => ({ allow_without_virtual_key: true, ...c })) };
  const g = await startGateway({ providers: mockProviders(mock.url), mcp, ...extra }, { env });
  gateways.push(g);
  return g;
}

const stdio = (name: string, variant = 'basic', more: Record<string, unknown> = {}) => ({
  name,
  connection_type: 'stdio',
  stdio_config: { command: process.execPath, args: [STDIO_SERVER, variant] },
  tools_to_execute: ['*'],
  ...more,
});

interface ClientView {
  config: { client_id: string; name: string; headers?: Record<string, string> };
  state: string;
  error?: string;
  connecting?: boolean;
  tools: { name: string; parameters: unknown }[];
}

async function clients(g: RunningGateway): Promise<ClientView[]> {
  const res = await apiClient(g)<ClientView[]>('GET', '/api/mcp/clients');
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Waits until no client is still on its first attempt. */
async function settled(g: RunningGateway, n: number): Promise<ClientView[]> {
  let list: ClientView[] = [];
  await eventually(async () => {
    list = await clients(g);
    assert.equal(list.length, n);
    assert.ok(list.every((c) => !c.connecting), JSON.stringify(list.map((c) => [c.config.name, c.state])));
  }, 20_000);
  return list;
}

const chatBody = (text: string, more: Record<string, unknown> = {}) => ({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: text }], ...more });

function lastChatRequests(n: number): Record<string, unknown>[] {
  return mock.requests.filter((r) => r.path.endsWith('/chat/completions')).slice(-n).map((r) => r.body as Record<string, unknown>);
}

test('http, sse and stdio clients connect and list their tools; failures are error states with the reason', async () => {
  const g = await gateway(
    {
      client_configs: [
        { name: 'web', connection_type: 'http', connection_string: http.httpUrl, headers: { Authorization: 'env.MCP_TOKEN' }, tools_to_execute: ['*'] },
        { name: 'events', connection_type: 'sse', connection_string: http.sseUrl, headers: { Authorization: 'Bearer secret-token-123' }, tools_to_execute: ['echo'] },
        stdio('local'),
        stdio('broken', 'listing-fails'),
        stdio('dead', 'crash'),
        { name: 'nobody', connection_type: 'http', connection_string: 'http://127.0.0.1:9/mcp', tools_to_execute: ['*'] },
        { name: 'badtoken', connection_type: 'http', connection_string: http.httpUrl, headers: { Authorization: 'Bearer wrong-token-999' }, tools_to_execute: ['*'] },
      ],
    },
    {},
    { MCP_TOKEN: 'Bearer secret-token-123' },
  );
  const list = await settled(g, 7);
  const by = Object.fromEntries(list.map((c) => [c.config.name, c]));
  for (const name of ['web', 'events', 'local']) {
    assert.equal(by[name].state, 'connected', `${name}: ${by[name].error}`);
    assert.deepEqual(by[name].tools.map((t) => t.name).filter((n) => n !== 'exit').sort(), ['add', 'echo', 'env', 'fail', 'headers', 'slow']);
  }
  // The token reached the server from the environment, and is masked in the answer.
  assert.ok(http.seen.some((s) => s.authorization === 'Bearer secret-token-123'));
  assert.equal(by.web.config.headers?.Authorization, 'env.MCP_TOKEN');
  assert.ok(!JSON.stringify(by.events).includes('secret-token-123'), 'header value masked');
  // Never "connected with zero tools": each failure is an error with its reason.
  assert.equal(by.broken.state, 'error');
  assert.match(by.broken.error!, /tools\/list failed|broken on purpose/);
  assert.deepEqual(by.broken.tools, []);
  assert.equal(by.dead.state, 'error');
  assert.match(by.dead.error!, /cannot start on purpose|closed/);
  assert.equal(by.nobody.state, 'error');
  assert.ok(by.nobody.error && by.nobody.error.length > 0);
  assert.equal(by.badtoken.state, 'error');
  assert.ok(!by.badtoken.error!.includes('wrong-token-999'), 'the token never appears in the reason');
  assert.ok(!g.logs().includes('secret-token-123'), 'no header value in the logs');
});

test('chat requests get the MCP tools the caller may use, filtered by tools_to_execute and headers', async () => {
  const g = await gateway({ client_configs: [stdio('local', 'basic', { tools_to_execute: ['echo', 'add'] }), { ...stdio('other'), tools_to_execute: ['fail'] }] });
  await settled(g, 2);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const own = { type: 'function' as const, function: { name: 'app_tool', parameters: { type: 'object', properties: {} } } };
  await client.chat.completions.create({ ...chatBody('hi'), tools: [own], tool_choice: 'none' } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const sent = lastChatRequests(1)[0].tools as { function: { name: string; parameters: Record<string, unknown> } }[];
  assert.deepEqual(sent.map((t) => t.function.name), ['app_tool', 'local-echo', 'local-add', 'other-fail']);
  // The MCP input schema is the function's parameters.
  assert.deepEqual(sent[1].function.parameters.required, ['query']);
  // Per request: only one client, only one tool; an empty header allows none.
  await client.chat.completions.create({ ...chatBody('hi'), tool_choice: 'none' } as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-bf-mcp-include-clients': 'other' } });
  assert.deepEqual((lastChatRequests(1)[0].tools as { function: { name: string } }[]).map((t) => t.function.name), ['other-fail']);
  await client.chat.completions.create({ ...chatBody('hi'), tool_choice: 'none' } as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-bf-mcp-include-tools': 'local-add' } });
  assert.deepEqual((lastChatRequests(1)[0].tools as { function: { name: string } }[]).map((t) => t.function.name), ['local-add']);
  await client.chat.completions.create(chatBody('hi') as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-bf-mcp-include-clients': '' } });
  assert.equal(lastChatRequests(1)[0].tools, undefined);
});

test('agent mode runs auto-executable tools and answers with the final turn; others go back to the application', async () => {
  const g = await gateway({
    client_configs: [stdio('local', 'basic', { tools_to_auto_execute: ['echo'] })],
  });
  await settled(g, 1);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const before = mock.requests.length;
  const answer = await client.chat.completions.create(chatBody('weather in Paris', { tool_choice: { type: 'function', function: { name: 'local-echo' } } }) as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.match(answer.choices[0].message.content ?? '', /echo: weather in Paris/);
  assert.equal(answer.choices[0].message.tool_calls, undefined);
  const turns = mock.requests.slice(before).filter((r) => r.path.endsWith('/chat/completions'));
  assert.equal(turns.length, 2, 'two model turns');
  const second = (turns[1].body as { messages: { role: string; content: unknown }[] }).messages;
  assert.deepEqual(second.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.equal(second[2].content, 'echo: weather in Paris');

  // Not in tools_to_auto_execute: the tool call comes back to the application.
  const asked = await client.chat.completions.create(chatBody('2 and 3', { tool_choice: { type: 'function', function: { name: 'local-add' } } }) as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const call = asked.choices[0].message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  assert.equal(call.function.name, 'local-add');
  assert.equal(asked.choices[0].finish_reason, 'tool_calls');

  // The application runs it through /v1/mcp/tool/execute and gets the tool message (chat format).
  const exec = await fetch(`${g.url}/v1/mcp/tool/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'call_1', type: 'function', function: { name: 'local-add', arguments: '{"a":2,"b":3}' } }),
  });
  assert.equal(exec.status, 200);
  assert.deepEqual(await exec.json(), { role: 'tool', tool_call_id: 'call_1', name: 'local-add', content: '5' });
  // Responses format.
  const execR = await fetch(`${g.url}/v1/mcp/tool/execute?format=responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ call_id: 'call_2', name: 'local-echo', arguments: '{"query":"hey"}' }),
  });
  const r = (await execR.json()) as Record<string, unknown>;
  assert.equal(execR.status, 200);
  assert.equal(r.type, 'function_call_output');
  assert.equal(r.call_id, 'call_2');
  assert.equal(r.output, 'echo: hey');
  // Bad input names the field.
  const bad = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'x', type: 'function', function: { name: 'nope-tool', arguments: '{}' } }) });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { param: string } }).error.param, 'function.name');
  const badArgs = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'x', type: 'function', function: { name: 'local-echo', arguments: '[1' } }) });
  assert.equal(badArgs.status, 400);
  assert.equal(((await badArgs.json()) as { error: { param: string } }).error.param, 'function.arguments');

  // Every call is in the MCP logs with its arguments, outcome and duration (written after the answer).
  type McpLogs = { logs: { tool_name: string; server_label: string; arguments: unknown; status: string; latency: number }[]; pagination: { total_count: number } };
  let logs!: ApiAnswer<McpLogs>;
  await eventually(async () => {
    logs = await apiClient(g)<McpLogs>('GET', '/api/mcp-logs?tool_names=add');
    assert.equal(logs.status, 200);
    assert.equal(logs.body.pagination.total_count, 1);
    // The count and the page are two reads: a batch landing between them shows the count first.
    assert.equal(logs.body.logs.length, 1);
  }, 10_000);
  assert.deepEqual(logs.body.logs[0].arguments, { a: 2, b: 3 });
  assert.equal(logs.body.logs[0].status, 'success');
  assert.equal(logs.body.logs[0].server_label, 'local');
  assert.ok(logs.body.logs[0].latency >= 0);
});

test('streamed agent mode streams the final turn through the openai SDK', async () => {
  const g = await gateway({ client_configs: [stdio('local', 'basic', { tools_to_auto_execute: ['*'] })] });
  await settled(g, 1);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const stream = await client.chat.completions.create({ ...chatBody('streamed question', { tool_choice: { type: 'function', function: { name: 'local-echo' } } }), stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming);
  let text = '';
  let finish: string | null = null;
  let toolDeltas = 0;
  let usage = 0;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (c?.delta?.content) text += c.delta.content;
    if (c?.delta?.tool_calls) toolDeltas++;
    if (c?.finish_reason) finish = c.finish_reason;
    if (chunk.usage) usage++;
  }
  assert.match(text, /Tool said: echo: streamed question/);
  assert.equal(toolDeltas, 0, 'the intermediate tool-call turn is not shown');
  assert.equal(finish, 'stop');
  assert.equal(usage, 1, 'one usage chunk: the final turn');
});

test('max_agent_depth bounds the loop: at the limit the tool calls go back to the application', async () => {
  const g = await gateway({ client_configs: [stdio('local', 'basic', { tools_to_auto_execute: ['*'] })], tool_manager_config: { max_agent_depth: 1 } });
  await settled(g, 1);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const before = mock.requests.length;
  const answer = await client.chat.completions.create(chatBody('deep', { tool_choice: { type: 'function', function: { name: 'local-echo' } } }) as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal((answer.choices[0].message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.name, 'local-echo');
  assert.equal(mock.requests.slice(before).length, 1);
});

test('tool_execution_timeout ends a slow call; a tool error is reported as one', async () => {
  // The reference's client-level setting (mcp.tool_manager_config.tool_execution_timeout would win).
  const g = await gateway({ client_configs: [stdio('local')] }, { client: { mcp_tool_execution_timeout: 1 } });
  await settled(g, 1);
  const started = Date.now();
  const slow = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'local-slow', arguments: '{"ms":10000}' } }) });
  assert.equal(slow.status, 504);
  assert.match(((await slow.json()) as { error: { message: string } }).error.message, /timed out after 1 s/);
  assert.ok(Date.now() - started < 5000);
  const fail = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'local-fail', arguments: '{}' } }) });
  assert.equal(fail.status, 200);
  const body = (await fail.json()) as { content: string; is_error: boolean };
  assert.equal(body.is_error, true);
  assert.match(body.content, /failed on purpose/);
  // The client is still connected after a timed-out call.
  const list = await clients(g);
  assert.equal(list[0].state, 'connected');
});

test('clients are added, changed, reconnected and removed live through /api', async () => {
  const g = await gateway({ client_configs: [] });
  const api = apiClient(g);
  const created = await api('POST', '/api/mcp/client', { name: 'live', connection_type: 'http', connection_string: http.httpUrl, headers: { Authorization: 'Bearer secret-token-123' }, tools_to_execute: ['echo'], allow_without_virtual_key: true });
  assert.equal(created.status, 200, created.text);
  assert.equal((created.body.client as ClientView).state, 'connected');
  assert.ok(!created.text.includes('secret-token-123'));
  let list = await clients(g);
  assert.deepEqual(list.map((c) => [c.config.client_id, c.state]), [['live', 'connected']]);
  // Duplicate, bad input.
  assert.equal((await api('POST', '/api/mcp/client', { name: 'live', connection_type: 'http', connection_string: http.httpUrl })).status, 409);
  const bad = await api<{ error: { param: string } }>('POST', '/api/mcp/client', { name: 'x', connection_type: 'stdio' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.param, 'stdio_config');
  const badUrl = await api<{ error: { param: string } }>('POST', '/api/mcp/client', { name: 'y', connection_type: 'http', connection_string: 'ftp://x' });
  assert.equal(badUrl.status, 400);
  assert.equal(badUrl.body.error.param, 'connection_string');
  // The tool list follows tools_to_execute at once (no reconnect needed), and the masked header is kept.
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const put = await api('PUT', '/api/mcp/client/live', { ...list[0].config, tools_to_execute: ['echo', 'add'] });
  assert.equal(put.status, 200, put.text);
  await client.chat.completions.create({ ...chatBody('hi'), tool_choice: 'none' } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.deepEqual((lastChatRequests(1)[0].tools as { function: { name: string } }[]).map((t) => t.function.name), ['live-echo', 'live-add']);
  list = await clients(g);
  assert.equal(list[0].state, 'connected', list[0].error);
  const rec = await api('POST', '/api/mcp/client/live/reconnect');
  assert.equal(rec.status, 200, rec.text);
  assert.equal((await api('POST', '/api/mcp/client/ghost/reconnect')).status, 404);
  const del = await api('DELETE', '/api/mcp/client/live');
  assert.equal(del.status, 200);
  assert.deepEqual(await clients(g), []);
  await client.chat.completions.create(chatBody('hi') as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(lastChatRequests(1)[0].tools, undefined);
});

test('a tools/list_changed notification refreshes the tool list', async () => {
  const g = await gateway({ client_configs: [stdio('changing', 'changing')] });
  await settled(g, 1);
  const exec = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'changing-add_tool', arguments: '{"query":"fresh_tool"}' } }) });
  assert.equal(exec.status, 200, await exec.text());
  await eventually(async () => {
    const list = await clients(g);
    assert.ok(list[0].tools.some((t) => t.name === 'fresh_tool'));
  }, 5000);
  const ran = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'changing-fresh_tool', arguments: '{}' } }) });
  assert.equal(((await ran.json()) as { content: string }).content, 'fresh_tool ran');
});

test('the published server-everything over stdio', async () => {
  const g = await gateway({ client_configs: [{ name: 'everything', connection_type: 'stdio', stdio_config: { command: process.execPath, args: [EVERYTHING, 'stdio'] }, tools_to_execute: ['*'] }] });
  const [c] = await settled(g, 1);
  assert.equal(c.state, 'connected', c.error);
  assert.ok(c.tools.some((t) => t.name === 'echo'), c.tools.map((t) => t.name).join(','));
  const res = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'everything-echo', arguments: '{"message":"hello everything"}' } }) });
  assert.equal(res.status, 200);
  assert.match(((await res.json()) as { content: string }).content, /hello everything/);
});

test('an agent request is one record in the request logs, carrying the tokens of its turns', async () => {
  const g = await gateway({ client_configs: [stdio('local', 'basic', { tools_to_auto_execute: ['echo'] })] }, { client: { enable_logging: true } });
  await settled(g, 1);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const answer = await client.chat.completions.create(chatBody('logged agent', { tool_choice: { type: 'function', function: { name: 'local-echo' } } }) as OpenAI.ChatCompletionCreateParamsNonStreaming);
  type Entry = { id: string; parent_request_id?: string; model?: string; token_usage: { prompt_tokens: number; completion_tokens: number } };
  let entries: Entry[] = [];
  await eventually(async () => {
    entries = (await apiClient(g)<{ logs: Entry[] }>('GET', '/api/logs?limit=100')).body.logs;
    assert.equal(entries.length, 1, JSON.stringify(entries));
  }, 5000);
  assert.equal(entries[0].parent_request_id, undefined);
  assert.equal(entries[0].model, 'gpt-4o');
  // Two turns: more input than the final turn alone reported to the client.
  assert.ok(entries[0].token_usage.prompt_tokens > (answer.usage?.prompt_tokens ?? 0), JSON.stringify([entries[0], answer.usage]));
  // The tool call made on its behalf names it.
  const calls = await apiClient(g)<{ logs: { llm_request_id?: string; request_id?: string }[] }>('GET', '/api/mcp-logs');
  assert.ok(JSON.stringify(calls.body).includes(entries[0].id), calls.text);
});

test('a scripted tool call with its own arguments runs in agent mode; a failing tool is reported to the model', async () => {
  const g = await gateway({ client_configs: [stdio('local', 'basic', { tools_to_auto_execute: ['add', 'fail'] })] });
  await settled(g, 1);
  const client = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const sum = await client.chat.completions.create(chatBody('CALL local-add {"a":19,"b":23}') as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.equal(sum.choices[0].message.content, 'Tool said: 42');
  const failed = await client.chat.completions.create(chatBody('CALL local-fail {}') as OpenAI.ChatCompletionCreateParamsNonStreaming);
  assert.match(failed.choices[0].message.content ?? '', /^Tool said: Error: the fail tool failed on purpose/);
});

test('a server that dies is an error with the reason, then reconnects with backoff', async () => {
  const g = await gateway({ client_configs: [stdio('local')] });
  await settled(g, 1);
  const exec = (name: string) =>
    fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name, arguments: '{"query":"x"}' } }) });
  assert.equal((await exec('local-exit')).status, 200);
  await eventually(async () => {
    const [c] = await clients(g);
    assert.equal(c.state, 'error');
    assert.match(c.error!, /closed/);
    assert.deepEqual(c.tools, []);
    // While it is down (the first retry comes after about 1 s) a call says so, with the reason.
    const down = await exec('local-echo');
    assert.equal(down.status, 503);
    assert.match(((await down.json()) as { error: { message: string } }).error.message, /MCP client 'local' is not connected: the connection closed/);
  }, 5000);
  await eventually(async () => {
    const [c] = await clients(g);
    assert.equal(c.state, 'connected');
  }, 10_000);
  const back = await exec('local-echo');
  assert.equal(back.status, 200);
  assert.match(g.logs(), /mcp client failed: reconnecting with backoff/);
});

test('tool_sync_interval refreshes a tool list that changed without notice', async () => {
  const silent = await startTestMcpServer({ variant: 'silent' });
  try {
    const g = await gateway({ client_configs: [{ name: 'quiet', connection_type: 'http', connection_string: silent.httpUrl, tools_to_execute: ['*'], tool_sync_interval: '1s' }] });
    const [c] = await settled(g, 1);
    assert.equal(c.state, 'connected', c.error);
    assert.ok(!c.tools.some((t) => t.name === 'late_tool'));
    addToolSilently('late_tool');
    await eventually(async () => {
      const [now] = await clients(g);
      assert.ok(now.tools.some((t) => t.name === 'late_tool'));
    }, 5000);
  } finally {
    await silent.close();
  }
});

test('a stdio client gets the envs it names; their values are masked in answers and kept on a round trip', async () => {
  const g = await gateway({ client_configs: [] }, {}, { PASSED_ON: 'from-the-gateway', NOT_NAMED: 'private' });
  const api = apiClient(g);
  const created = await api('POST', '/api/mcp/client', stdio('envy', 'basic', { stdio_config: { command: process.execPath, args: [STDIO_SERVER, 'basic'], envs: ['PASSED_ON', 'SET_HERE=supersecretvalue123', 'NOT_SET_ANYWHERE'] }, allow_without_virtual_key: true }));
  assert.equal(created.status, 200, created.text);
  assert.ok(!created.text.includes('supersecretvalue123'));
  const env = async (name: string) => {
    const res = await fetch(`${g.url}/v1/mcp/tool/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c', type: 'function', function: { name: 'envy-env', arguments: JSON.stringify({ query: name }) } }) });
    return ((await res.json()) as { content: string }).content;
  };
  assert.equal(await env('PASSED_ON'), 'from-the-gateway');
  assert.equal(await env('SET_HERE'), 'supersecretvalue123');
  assert.equal(await env('NOT_SET_ANYWHERE'), 'unset');
  // The child sees only what it was given, not the gateway's whole environment.
  assert.equal(await env('NOT_NAMED'), 'unset');
  const [view] = await clients(g);
  const shown = (view.config as unknown as { stdio_config: { envs: string[] } }).stdio_config.envs;
  assert.ok(!shown.join().includes('supersecretvalue123'));
  // Sending the answer back (with another change) keeps the stored value: a masked one would have restarted the child with it.
  const put = await api('PUT', '/api/mcp/client/envy', { ...view.config, tools_to_execute: ['env'] });
  assert.equal(put.status, 200, put.text);
  await eventually(async () => assert.equal(await env('SET_HERE'), 'supersecretvalue123'), 10_000);
});

test('bad MCP configuration stops the start with each field named', async () => {
  const { code, output } = await runGatewayExpectingExit({
    providers: mockProviders(mock.url),
    mcp: { client_configs: [{ name: 'a b', connection_type: 'sse', tools_to_execute: ['*'] }, { name: 'dup', connection_type: 'http', connection_string: 'ftp://x' }, { name: 'dup', connection_type: 'stdio', stdio_config: { command: 'x' } }] },
    governance: { virtual_keys: [{ id: 'k', name: 'k', value: 'sk-bf-k-0123456789', mcp_configs: [{ mcp_client_name: 'dup', tools_to_execute: 'echo' }, { tools_to_execute: ['*'] }] }] },
  });
  assert.equal(code, 1);
  for (const expected of [
    /mcp\.client_configs\[0\]\.name: must start with a letter/,
    /mcp\.client_configs\[0\]\.connection_string: is required for connection_type sse/,
    /mcp\.client_configs\[1\]\.connection_string: must be an absolute http\(s\) URL/,
    /mcp\.client_configs\[2\]\.name: duplicate MCP client name 'dup'/,
    /governance\.virtual_keys\[0\]\.mcp_configs\[0\]\.tools_to_execute: must be array/,
    /governance\.virtual_keys\[0\]\.mcp_configs\[1\]\.mcp_client_name: is required/,
  ]) assert.match(output, expected);
});
